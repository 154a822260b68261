import { HELP_TEXT } from '../../domain/chatops';
import { getChatMessage } from '../../store/chat';
import { getMedia } from '../../store/media';
import { useGateway } from '../harness/gateway';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const TINY_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

describe('gateway conversations with the built-in ChatOps agent', () => {
  let gw: Awaited<ReturnType<typeof useGateway>>;
  beforeAll(async () => {
    gw = await useGateway();
  });
  afterAll(() => gw.stop());

  const kinds = (messageId: string) => gw.receiver.of(messageId).map((c) => `${c.body.kind}#${c.body.seq}`);

  it('answers /help with a signed final callback carrying message_id, kind and seq', async () => {
    const id = await gw.send({ chat_id: 'c-help', user_id: 'alice', text: '/help' });
    const reply = await gw.reply(id);
    expect(reply.body).toEqual({ chat_id: 'c-help', text: HELP_TEXT, message_id: id, kind: 'final', seq: 1 });
    expect(reply.signatureValid).toBe(true);
    expect(reply.headers['x-foghorn-secret']).toBe(gw.config.FOGHORN_WEBHOOK_SECRET);
    expect(reply.headers['content-type']).toBe('application/json');
    expect(reply.headers['webhook-id']).toBe(`${id}.1`);
    expect(kinds(id)).toEqual(['final#1']); // quick: no 'working on it' notice
    const stored = await gw.eventually(
      () => getChatMessage(id),
      (m) => m?.status === 'done',
    );
    expect(stored).toMatchObject({ prompt: '/help', reply: HELP_TEXT, replyKind: 'final', userId: 'alice' });
  });

  it('answers anything else with the help text and what was wrong', async () => {
    const id = await gw.send({ chat_id: 'c-help', text: '/frobnicate now' });
    const reply = await gw.reply(id);
    expect(reply.body.kind).toBe('final');
    expect(reply.body.text).toContain('Unknown command /frobnicate');
    expect(reply.body.text).toContain(HELP_TEXT);
  });

  it('acts on incidents through the API code path, audited as webhook:<user_id>', async () => {
    const created = await gw.call('POST', '/incidents', {
      token: gw.tokens.operator,
      body: { resource: 'Deployment/checkout', namespace: 'shop', signalType: 'HighLatency', severity: 'high' },
    });
    expect(created.status).toBe(201);
    const name = created.body.metadata.name as string;

    const list = await gw.reply(await gw.send({ chat_id: 'c-ops', user_id: 'alice', text: '/incidents' }));
    expect(list.body.text).toContain(name);

    const ack = await gw.reply(await gw.send({ chat_id: 'c-ops', user_id: 'alice', text: `/ack ${name} on it` }));
    expect(ack.body.kind).toBe('final');
    const incident = await gw.call('GET', `/incidents/${name}?namespace=shop`);
    expect(incident.body.status).toMatchObject({ acknowledged: true });
    const audit = await gw.call('GET', `/audit?action=incident.acknowledge&resource=${name}`);
    expect(audit.body.items[0]).toMatchObject({ user: 'webhook:alice', role: 'operator' });
    expect(audit.body.items[0].details).toMatchObject({ message: 'on it' });

    const again = await gw.reply(await gw.send({ chat_id: 'c-ops', user_id: 'bob', text: `/ack ${name}` }));
    expect(again.body.kind).toBe('error');
    expect(again.body.text).toContain('Incident already acknowledged');
    expect(again.body.text).toContain('webhook:alice');

    // Without a user_id the chat itself is the actor.
    const resolved = await gw.reply(await gw.send({ chat_id: 'c-ops', text: `/resolve ${name} rolled back` }));
    expect(resolved.body.kind).toBe('final');
    const audits = await gw.call('GET', `/audit?action=incident.resolve&resource=${name}`);
    expect(audits.body.items[0]).toMatchObject({ user: 'webhook:c-ops', role: 'operator' });
  });

  it("posts a 'working on it' notice when the reply takes more than 2 s, then the final", async () => {
    const id = await gw.send({ chat_id: 'c-slow', text: '/sh sleep 3; echo slept-ok' });
    const reply = await gw.reply(id);
    expect(reply.body.text).toContain('slept-ok');
    expect(kinds(id)).toEqual(['notice#1', 'final#2']);
    expect(gw.receiver.of(id)[0]!.body).toMatchObject({ chat_id: 'c-slow', text: 'Working on it…' });
  });

  it('keeps replies of one chat in order and runs different chats in parallel', async () => {
    const slow = await gw.send({ chat_id: 'c-a', text: '/sh sleep 3; echo first' });
    const next = await gw.send({ chat_id: 'c-a', text: '/help' });
    const other = await gw.send({ chat_id: 'c-b', text: '/help' });

    // Chat b does not wait for chat a's slow turn...
    const otherReply = await gw.reply(other);
    const slowReply = await gw.reply(slow);
    expect(otherReply.at).toBeLessThan(slowReply.at);
    // ...but the second message of chat a waits for the first one's reply.
    const nextReply = await gw.reply(next);
    expect(slowReply.body.text).toContain('first');
    expect(nextReply.at).toBeGreaterThanOrEqual(slowReply.at);
    const order = gw.receiver.delivered().filter((c) => c.body.chat_id === 'c-a');
    expect(order.map((c) => c.body.message_id)).toEqual([slow, slow, next]); // notice, final, final
  });

  it('sends the MTTR summary with a PNG chart as image_b64', async () => {
    const reply = await gw.reply(await gw.send({ chat_id: 'c-chart', text: '/mttr 7d' }));
    expect(reply.body.kind).toBe('final');
    expect(reply.body.text).toContain('MTTR');
    expect(reply.body.image_mime).toBe('image/png');
    expect(reply.body.image_filename).toBe('mttr-7d.png');
    expect(Buffer.from(reply.body.image_b64!, 'base64').subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);
  });

  it('stores an inbound image and acknowledges it', async () => {
    const id = await gw.send({ chat_id: 'c-img', image_b64: TINY_PNG, image_mime: 'image/png' });
    const reply = await gw.reply(id);
    expect(reply.body.text).toContain('I received your image (image/png)');
    const stored = await getChatMessage(id);
    expect((await getMedia(stored!.image!.fileId!)).data.equals(Buffer.from(TINY_PNG, 'base64'))).toBe(true);
  });

  it('answers a voice message with a clear error when no transcription backend is configured', async () => {
    const id = await gw.send({ chat_id: 'c-voice', audio_b64: Buffer.from('OggS').toString('base64') });
    const reply = await gw.reply(id);
    expect(reply.body).toMatchObject({
      kind: 'error',
      text: 'Voice messages are not supported: no transcription backend is configured (set FOGHORN_STT=openai or FOGHORN_STT=pocketsphinx).',
    });
  });

  it('accepts a large inline voice note (5 MB) and keeps it byte for byte', async () => {
    const audio = Buffer.alloc(5 * 1024 * 1024, 42);
    const id = await gw.send({ chat_id: 'c-big', audio_b64: audio.toString('base64'), audio_mime: 'audio/ogg' });
    expect((await gw.reply(id)).body.kind).toBe('error'); // no transcription backend in this deployment
    const stored = await getChatMessage(id);
    expect((await getMedia(stored!.audio!.fileId!)).data.equals(audio)).toBe(true);
  });

  it('answers /gateway status with the webhook adapter', async () => {
    const reply = await gw.reply(await gw.send({ chat_id: 'c-status', text: '/gateway status' }));
    expect(reply.body.text).toContain('adapter: webhook');
    expect(reply.body.text).toContain('path:           /inbound');
    expect(reply.body.text).toMatch(/callback host:\s+127\.0\.0\.1:\d+/);
    expect(reply.body.text).toContain('secret set:     yes');
    expect(reply.body.text).toMatch(/queue depth:\s+\d+/);
  });
});
