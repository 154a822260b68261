import { createServer, type Server } from 'http';
import type { AddressInfo } from 'net';
import { getChatMessage } from '../../store/chat';
import { getMedia } from '../../store/media';
import { useGateway } from '../harness/gateway';
import { useSttServer } from '../harness/stt-server';

const OGG = Buffer.from('OggS fake voice note bytes');
const TINY_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

/** Voice and images through the whole gateway, with an OpenAI-compatible transcription server. */
describe('gateway voice and media (FOGHORN_STT=openai, private URLs allowed)', () => {
  let stt: Awaited<ReturnType<typeof useSttServer>>;
  let gw: Awaited<ReturnType<typeof useGateway>>;
  let media: Server;
  let mediaUrl: string;
  let transcript = '/incidents';
  beforeAll(async () => {
    stt = await useSttServer(() => ({
      status: 200,
      type: 'application/json',
      body: JSON.stringify({ text: transcript }),
    }));
    media = createServer((req, res) => {
      if (req.url === '/voice.ogg') res.writeHead(200, { 'content-type': 'audio/ogg' }).end(OGG);
      else if (req.url === '/graph.png')
        res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.from(TINY_PNG, 'base64'));
      else if (req.url === '/moved') res.writeHead(302, { location: '/voice.ogg' }).end();
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => media.listen(0, '127.0.0.1', resolve));
    mediaUrl = `http://127.0.0.1:${(media.address() as AddressInfo).port}`;
    gw = await useGateway({
      env: {
        FOGHORN_STT: 'openai',
        FOGHORN_STT_BASE_URL: stt.baseUrl,
        FOGHORN_STT_API_KEY: 'stt-key',
        FOGHORN_GATEWAY_ALLOW_PRIVATE_URLS: 'true',
      },
    });
  });
  afterAll(async () => {
    await gw.stop();
    await stt.stop();
    await new Promise((resolve) => media.close(resolve));
  });

  it('transcribes an inline voice message and runs the agent on the transcript', async () => {
    transcript = '/incidents';
    const id = await gw.send({
      chat_id: 'v-inline',
      user_id: 'alice',
      audio_b64: OGG.toString('base64'),
      audio_mime: 'audio/ogg',
    });
    const reply = await gw.reply(id);
    expect(reply.body).toMatchObject({ kind: 'final', text: 'No open incidents.' });
    expect(reply.body).not.toHaveProperty('audio_b64'); // replies are text (and images) only
    const sent = stt.received.at(-1)!;
    expect(sent).toMatchObject({
      path: '/v1/audio/transcriptions',
      authorization: 'Bearer stt-key',
      model: 'whisper-1',
    });
    expect(Buffer.from(await sent.file!.arrayBuffer()).equals(OGG)).toBe(true);
    const done = await gw.eventually(
      () => getChatMessage(id),
      (m) => m?.status === 'done',
    );
    expect(done!.prompt).toBe('/incidents');
  });

  it('downloads a voice message from a URL (following a redirect) before transcribing it', async () => {
    transcript = '/help';
    const id = await gw.send({ chat_id: 'v-url', audio_url: `${mediaUrl}/moved` });
    const reply = await gw.reply(id);
    expect(reply.body.kind).toBe('final');
    expect(reply.body.text).toContain('/ack NAME');
    const stored = await getChatMessage(id);
    expect(stored!.audio).toMatchObject({ url: `${mediaUrl}/moved`, fileId: expect.any(String), mime: 'audio/ogg' });
    expect((await getMedia(stored!.audio!.fileId!)).data.equals(OGG)).toBe(true);
  });

  it('answers with an error when a media URL cannot be fetched', async () => {
    const reply = await gw.reply(await gw.send({ chat_id: 'v-404', image_url: `${mediaUrl}/missing.png` }));
    expect(reply.body.kind).toBe('error');
    expect(reply.body.text).toBe('Could not download the image: the server answered 404 Not Found');
  });

  it('downloads an image from a URL and acknowledges it', async () => {
    const reply = await gw.reply(await gw.send({ chat_id: 'v-img', image_url: `${mediaUrl}/graph.png` }));
    expect(reply.body.text).toContain('I received your image (image/png)');
  });
});
