import { ApplicationFailure } from '@temporalio/common';
import { execFile } from 'child_process';
import { access, mkdtemp, rm, writeFile } from 'fs/promises';
import { tmpdir } from 'os';
import { extname, join } from 'path';
import type { Config } from '../config/env';
import { getMedia } from '../store/media';
import { withHeartbeat } from './context';
import { extensionForMime } from './media';

export const STT_NOT_CONFIGURED =
  'Voice messages are not supported: no transcription backend is configured (set FOGHORN_STT=openai or FOGHORN_STT=pocketsphinx).';
const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';
const OPENAI_TIMEOUT_MS = 120_000;
// Debian's pocketsphinx-en-us (0.8+5prealpha) layout.
const MODEL_DIR = '/usr/share/pocketsphinx/model/en-us';
const POCKETSPHINX_MODEL = {
  hmm: join(MODEL_DIR, 'en-us'),
  lm: join(MODEL_DIR, 'en-us.lm.bin'),
  dict: join(MODEL_DIR, 'cmudict-en-us.dict'),
};
const POCKETSPHINX_PACKAGES =
  'Voice transcription with FOGHORN_STT=pocketsphinx needs the Debian packages pocketsphinx, pocketsphinx-en-us and sox (apt-get install pocketsphinx pocketsphinx-en-us sox; npm start installs them when FOGHORN_STT=pocketsphinx is set)';
// Both fit in the agent turn's 5-minute activity timeout.
const CONVERT_TIMEOUT_MS = 60_000;
const RECOGNISE_TIMEOUT_MS = 180_000;

const failed = (detail: string) =>
  ApplicationFailure.nonRetryable(`Could not transcribe the voice message: ${detail}`, 'TranscriptionFailed');

/** Voice messages to text, with the backend FOGHORN_STT names (DESIGN §10). */
export function createTranscriptionActivities(config: Config) {
  return {
    /**
     * Missing configuration fails for good with type SttNotConfigured; audio the backend
     * rejects with TranscriptionFailed; outages (5xx, network, timeouts) are retried.
     */
    async transcribeAudio(input: { fileId: string; mime?: string }): Promise<{ text: string; backend: string }> {
      const backend = config.FOGHORN_STT;
      if (!backend) throw ApplicationFailure.nonRetryable(STT_NOT_CONFIGURED, 'SttNotConfigured');
      const media = await getMedia(input.fileId);
      const mime = input.mime ?? media.mime;
      // Heartbeats: a local recogniser may run for minutes, a dead worker is noticed in seconds.
      const text = (
        await withHeartbeat(() =>
          backend === 'openai'
            ? transcribeOpenAi(config, media.data, mime, media.filename)
            : transcribePocketsphinx(media.data, mime, media.filename),
        )
      ).trim();
      if (!text) throw failed('no words were recognised in it.');
      return { text, backend };
    },
  };
}

/** The file name the server sees: its extension is how many servers tell the format. */
function voiceFilename(mime: string | undefined, stored: string): string {
  return `voice${extensionForMime(mime) || extname(stored).toLowerCase() || '.ogg'}`;
}

/** POST {base}/audio/transcriptions, the OpenAI API that Whisper servers (vLLM, LocalAI, speaches) share. */
async function transcribeOpenAi(
  config: Config,
  data: Buffer,
  mime: string | undefined,
  stored: string,
): Promise<string> {
  const base = (config.FOGHORN_STT_BASE_URL ?? config.FOGHORN_LLM_BASE_URL ?? OPENAI_DEFAULT_BASE_URL).replace(
    /\/+$/,
    '',
  );
  const key = config.FOGHORN_STT_API_KEY ?? config.FOGHORN_LLM_API_KEY;
  const form = new FormData();
  form.append('file', new Blob([data], { type: mime ?? 'application/octet-stream' }), voiceFilename(mime, stored));
  form.append('model', config.FOGHORN_STT_MODEL);
  let res: Response;
  try {
    res = await fetch(`${base}/audio/transcriptions`, {
      method: 'POST',
      body: form,
      headers: key ? { authorization: `Bearer ${key}` } : {},
      signal: AbortSignal.timeout(OPENAI_TIMEOUT_MS),
    });
  } catch (err) {
    const cause = (err as Error & { cause?: Error }).cause?.message ?? (err as Error).message;
    throw new Error(`the transcription service at ${base} is unreachable: ${cause}`);
  }
  const body = await res.text();
  if (res.status >= 500) throw new Error(`the transcription service answered ${res.status}: ${serverMessage(body)}`);
  if (!res.ok) throw failed(`the transcription service answered ${res.status}: ${serverMessage(body)}`);
  const json =
    (res.headers.get('content-type') ?? '').includes('json') || /^\s*\{/.test(body) ? parseJson(body) : undefined;
  if (json === undefined) return body;
  const text = (json as { text?: unknown } | null)?.text;
  if (typeof text !== 'string') throw failed('the transcription service answered without a text field.');
  return text;
}

function parseJson(body: string): unknown {
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return undefined;
  }
}

/** `{error: {message}}` (OpenAI), `{error}` or `{detail}` (FastAPI servers), else the body. */
function serverMessage(body: string): string {
  const json = parseJson(body) as {
    error?: { message?: unknown } | string;
    detail?: unknown;
    message?: unknown;
  } | null;
  const found =
    (typeof json?.error === 'object' ? json.error?.message : json?.error) ?? json?.detail ?? json?.message ?? body;
  const text = typeof found === 'string' ? found : JSON.stringify(found);
  return text.trim().slice(0, 300) || '(empty answer)';
}

interface ExecResult {
  stdout: string;
}

/**
 * Runs a program without a shell; a missing program rejects with code ENOENT. The env is passed
 * explicitly so PATH is read from this module's `process.env` (Jest gives each file its own).
 */
function run(file: string, args: string[], timeout: number): Promise<ExecResult> {
  const options = { timeout, maxBuffer: 4 * 1024 * 1024, encoding: 'utf8' as const, env: process.env };
  return new Promise((resolve, reject) => {
    execFile(file, args, options, (err, stdout, stderr) => {
      if (err) {
        const e = err as Error & { code?: string | number; killed?: boolean; stderr?: string };
        e.stderr = stderr;
        return reject(e);
      }
      resolve({ stdout });
    });
  });
}

const isMissing = (err: unknown) => (err as { code?: unknown }).code === 'ENOENT';
const timedOut = (err: unknown) => (err as { killed?: boolean }).killed === true;
const firstLine = (err: unknown) =>
  ((err as { stderr?: string }).stderr ?? (err as Error).message).trim().split('\n')[0] ?? '';

/**
 * Local recognition with CMU PocketSphinx: the audio becomes 16 kHz mono 16-bit WAV (what the
 * en-us model expects) with sox, or ffmpeg for formats sox cannot read (Opus, AAC), then
 * pocketsphinx_continuous decodes it. Everything happens in a temp dir removed afterwards.
 */
async function transcribePocketsphinx(data: Buffer, mime: string | undefined, filename: string): Promise<string> {
  try {
    await Promise.all(Object.values(POCKETSPHINX_MODEL).map((path) => access(path)));
  } catch {
    throw ApplicationFailure.nonRetryable(`${POCKETSPHINX_PACKAGES}: the en-us model is missing.`, 'SttNotConfigured');
  }
  const dir = await mkdtemp(join(tmpdir(), 'foghorn-stt-'));
  try {
    // sox picks the format from the file's header or extension.
    const input = join(dir, `input${extensionForMime(mime) || extname(filename).toLowerCase() || '.audio'}`);
    const speech = join(dir, 'speech.wav');
    await writeFile(input, data);
    await convert(input, speech, mime);
    let out: ExecResult;
    try {
      out = await run(
        'pocketsphinx_continuous',
        [
          ...['-infile', speech, '-logfn', '/dev/null'],
          ...['-hmm', POCKETSPHINX_MODEL.hmm, '-lm', POCKETSPHINX_MODEL.lm, '-dict', POCKETSPHINX_MODEL.dict],
        ],
        RECOGNISE_TIMEOUT_MS,
      );
    } catch (err) {
      if (isMissing(err))
        throw ApplicationFailure.nonRetryable(
          `${POCKETSPHINX_PACKAGES}: pocketsphinx_continuous is missing.`,
          'SttNotConfigured',
        );
      if (timedOut(err)) throw new Error(`pocketsphinx took longer than ${RECOGNISE_TIMEOUT_MS / 1000} s`);
      throw new Error(`pocketsphinx failed: ${firstLine(err)}`);
    }
    // One line per utterance (pocketsphinx splits at pauses).
    return out.stdout
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean)
      .join(' ');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function convert(input: string, output: string, mime: string | undefined): Promise<void> {
  const soxArgs = [input, '-r', '16000', '-c', '1', '-b', '16', '-e', 'signed-integer', output];
  let soxError: unknown;
  try {
    await run('sox', soxArgs, CONVERT_TIMEOUT_MS);
    return;
  } catch (err) {
    if (isMissing(err))
      throw ApplicationFailure.nonRetryable(`${POCKETSPHINX_PACKAGES}: sox is missing.`, 'SttNotConfigured');
    if (timedOut(err)) throw new Error(`converting the audio took longer than ${CONVERT_TIMEOUT_MS / 1000} s`);
    soxError = err;
  }
  try {
    await run(
      'ffmpeg',
      ['-nostdin', '-v', 'error', '-y', '-i', input, '-ar', '16000', '-ac', '1', '-c:a', 'pcm_s16le', output],
      CONVERT_TIMEOUT_MS,
    );
  } catch (err) {
    if (timedOut(err)) throw new Error(`converting the audio took longer than ${CONVERT_TIMEOUT_MS / 1000} s`);
    const hint = isMissing(err) ? ' (installing ffmpeg adds more formats, such as Opus and AAC)' : '';
    throw failed(`the audio${mime ? ` (${mime})` : ''} could not be read: ${firstLine(soxError)}${hint}.`);
  }
}

export type TranscriptionActivities = ReturnType<typeof createTranscriptionActivities>;
