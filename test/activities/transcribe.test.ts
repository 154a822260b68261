import { runActivity } from '../harness/activity';
import { ApplicationFailure } from '@temporalio/common';
import { execFileSync } from 'child_process';
import { mkdtempSync, readFileSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { createTranscriptionActivities, STT_NOT_CONFIGURED } from '../../activities/transcribe';
import { parseConfig } from '../../config/env';
import { putMedia } from '../../store/media';
import { useMongo } from '../harness/mongo';
import { useSttServer } from '../harness/stt-server';

const transcribeWith = (env: Record<string, string>) => {
  const { transcribeAudio } = createTranscriptionActivities(parseConfig(env));
  return (input: Parameters<typeof transcribeAudio>[0]) => runActivity(transcribeAudio, input);
};

describe('transcribeAudio', () => {
  let mongo: Awaited<ReturnType<typeof useMongo>>;
  beforeAll(async () => {
    mongo = await useMongo();
  });
  afterAll(() => mongo.stop());

  it('fails for good with a clear message when no backend is configured', async () => {
    await expect(transcribeWith({})({ fileId: 'whatever', mime: 'audio/ogg' })).rejects.toMatchObject({
      type: 'SttNotConfigured',
      nonRetryable: true,
      message:
        'Voice messages are not supported: no transcription backend is configured (set FOGHORN_STT=openai or FOGHORN_STT=pocketsphinx).',
    });
    expect(STT_NOT_CONFIGURED).toMatch(/^Voice messages are not supported/);
  });

  describe('openai backend (a real OpenAI-compatible listener)', () => {
    let reply = { status: 200, type: 'application/json', body: '{"text":" the server is down "}' };
    let stt: Awaited<ReturnType<typeof useSttServer>>;
    const audio = Buffer.from('OggS fake opus bytes \u0000\u0001\u00ff', 'binary');
    beforeAll(async () => {
      stt = await useSttServer(() => reply);
      await putMedia(audio, { filename: 'audio', mime: 'audio/ogg', id: 'voice-1' });
    });
    afterAll(() => stt.stop());
    beforeEach(() => stt.received.splice(0));

    const env = () => ({
      FOGHORN_STT: 'openai',
      FOGHORN_STT_BASE_URL: stt.baseUrl,
      FOGHORN_STT_API_KEY: 'sk-test',
      FOGHORN_STT_MODEL: 'whisper-test',
    });

    it('posts the file and model as multipart and reads a JSON answer', async () => {
      reply = { status: 200, type: 'application/json', body: '{"text":" the server is down "}' };
      await expect(transcribeWith(env())({ fileId: 'voice-1', mime: 'audio/ogg' })).resolves.toEqual({
        text: 'the server is down',
        backend: 'openai',
      });
      const [got] = stt.received;
      expect(got).toMatchObject({
        path: '/v1/audio/transcriptions',
        authorization: 'Bearer sk-test',
        model: 'whisper-test',
      });
      expect(got!.file!.name).toBe('voice.ogg');
      expect(Buffer.from(await got!.file!.arrayBuffer()).equals(audio)).toBe(true);
    });

    it('reads a plain-text answer, names the file after the MIME type, and falls back to the LLM settings', async () => {
      reply = { status: 200, type: 'text/plain; charset=utf-8', body: 'restart the database\n' };
      const viaLlm = transcribeWith({ FOGHORN_STT: 'openai', FOGHORN_LLM_BASE_URL: stt.baseUrl });
      await expect(viaLlm({ fileId: 'voice-1', mime: 'audio/mpeg' })).resolves.toEqual({
        text: 'restart the database',
        backend: 'openai',
      });
      const [got] = stt.received;
      expect(got).toMatchObject({ authorization: undefined, model: 'whisper-1' });
      expect(got!.file!.name).toBe('voice.mp3');
    });

    it('accepts JSON served without a JSON content type', async () => {
      reply = { status: 200, type: 'text/plain', body: '{"text":"page the on-call"}' };
      await expect(transcribeWith(env())({ fileId: 'voice-1', mime: 'audio/wav' })).resolves.toMatchObject({
        text: 'page the on-call',
      });
      expect(stt.received[0]!.file!.name).toBe('voice.wav');
    });

    it("fails for good on a 4xx, with the server's message", async () => {
      reply = { status: 400, type: 'application/json', body: '{"error":{"message":"Invalid file format."}}' };
      await expect(transcribeWith(env())({ fileId: 'voice-1', mime: 'audio/ogg' })).rejects.toMatchObject({
        type: 'TranscriptionFailed',
        nonRetryable: true,
        message: 'Could not transcribe the voice message: the transcription service answered 400: Invalid file format.',
      });
    });

    it('leaves a 5xx or an unreachable server to Temporal retries', async () => {
      reply = { status: 503, type: 'text/plain', body: 'model loading' };
      const busy = await transcribeWith(env())({ fileId: 'voice-1' }).catch((e: Error) => e);
      expect(busy).not.toBeInstanceOf(ApplicationFailure);
      expect((busy as Error).message).toBe('the transcription service answered 503: model loading');
      const down = await transcribeWith({ FOGHORN_STT: 'openai', FOGHORN_STT_BASE_URL: 'http://127.0.0.1:1/v1' })({
        fileId: 'voice-1',
      }).catch((e: Error) => e);
      expect(down).not.toBeInstanceOf(ApplicationFailure);
      expect((down as Error).message).toMatch(
        /^the transcription service at http:\/\/127\.0\.0\.1:1\/v1 is unreachable/,
      );
    });
  });

  describe('pocketsphinx backend (the real Debian binaries)', () => {
    const transcribe = transcribeWith({ FOGHORN_STT: 'pocketsphinx' });
    const sentence = 'we have a problem with the network';
    const expected = ['we', 'have', 'problem', 'with', 'network'];
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'foghorn-stt-test-'));
      // espeak-ng writes 22050 Hz WAV, so even the WAV case goes through the 16 kHz conversion.
      execFileSync('espeak-ng', ['-v', 'en-us', '-s', '130', '-w', join(dir, 'speech.wav'), sentence]);
      execFileSync('sox', [join(dir, 'speech.wav'), join(dir, 'speech.ogg')]);
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    const heard = (text: string) => expected.filter((w) => text.toLowerCase().split(/\s+/).includes(w));

    it.each([
      ['speech.wav', 'audio/wav'],
      ['speech.ogg', 'audio/ogg'],
    ])('recognises speech in %s', async (file, mime) => {
      const { fileId } = await putMedia(readFileSync(join(dir, file)), { filename: file, mime, id: `ps-${file}` });
      const { text, backend } = await transcribe({ fileId, mime });
      expect(backend).toBe('pocketsphinx');
      expect(heard(text).length).toBeGreaterThanOrEqual(2);
    });

    it('fails for good on audio it cannot read', async () => {
      const { fileId } = await putMedia(Buffer.from('this is not audio at all'), { filename: 'x.bin', id: 'ps-junk' });
      await expect(transcribe({ fileId, mime: 'audio/ogg' })).rejects.toMatchObject({
        type: 'TranscriptionFailed',
        nonRetryable: true,
        message: expect.stringMatching(
          /^Could not transcribe the voice message: the audio \(audio\/ogg\) could not be read/,
        ),
      });
    });

    it('names the Debian packages when the binaries are missing', async () => {
      const { fileId } = await putMedia(readFileSync(join(dir, 'speech.wav')), {
        filename: 'speech.wav',
        id: 'ps-path',
      });
      const path = process.env.PATH;
      process.env.PATH = join(dir, 'no-binaries-here');
      try {
        await expect(transcribe({ fileId, mime: 'audio/wav' })).rejects.toMatchObject({
          type: 'SttNotConfigured',
          nonRetryable: true,
          message: expect.stringContaining('needs the Debian packages pocketsphinx, pocketsphinx-en-us and sox'),
        });
      } finally {
        process.env.PATH = path;
      }
    });
  });
});
