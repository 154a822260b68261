import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import { randomBytes } from 'crypto';
import { createServer, type Server } from 'http';
import type { AddressInfo } from 'net';
import pino, { type Logger } from 'pino';
import { parseConfig, type Config } from '../../config/env';
import { startSweeper, type Dispatcher } from '../../gateway/dispatch';
import { configurationWarnings, startGateway } from '../../gateway/gateway';
import { createGatewayApp, listen } from '../../gateway/server';
import { getChatMessage } from '../../store/chat';
import { getMedia } from '../../store/media';
import { ChatMessage } from '../../store/models/chat-message';
import { chatWorkflowId } from '../../workflows/chat-messages';
import { GATEWAY_SECRET, useGateway } from '../harness/gateway';
import { freePort } from '../harness/ports';
import { firstSignalled, signalledBatches } from './chat-signals';
import { useTcpGate } from './tcp-gate';

/**
 * The webhook channel's HTTP contract (spec webhook-channel.md; DESIGN §4 envelope, §10 check
 * order) against the real listener: method → secret → size → JSON and fields → shutting down →
 * stored in MongoDB → 202, and the hand-over to Temporal after the 202.
 */

/** A small audio cap keeps the size limits testable: the body limit is CAP + 1 MiB. */
const CAP = 1000;
const MAX_BODY = CAP + 1024 * 1024;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests inspect arbitrary JSON
type Answer = { status: number; headers: Headers; body: any; text: string };

interface HitInit {
  method?: string;
  /** Sent as X-Foghorn-Secret; the shared secret when absent, no header at all when null. */
  secret?: string | null;
  headers?: Record<string, string>;
  body?: string | Uint8Array | ReadableStream<Uint8Array>;
}

/** One real HTTP request; a ReadableStream body goes out chunked (no Content-Length). */
async function hit(url: string, init: HitInit = {}): Promise<Answer> {
  const secret = init.secret === undefined ? GATEWAY_SECRET : init.secret;
  const headers: Record<string, string> = {
    ...(typeof init.body === 'string' && { 'content-type': 'application/json' }),
    ...(secret !== null && { 'x-foghorn-secret': secret }),
    ...init.headers,
  };
  const res = await fetch(url, {
    method: init.method ?? 'POST',
    headers,
    body: init.body,
    ...(init.body instanceof ReadableStream && { duplex: 'half' }),
  } as RequestInit);
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, body, text };
}

/** The DESIGN §4 error envelope, with details matching `details` when given. */
function expectError(res: Answer, code: number, message: string, details?: RegExp) {
  expect({ status: res.status, body: res.body }).toEqual({
    status: code,
    body: { apiVersion: 'v1', kind: 'Error', error: { code, message, details: expect.any(String) } },
  });
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  if (details) expect(res.body.error.details).toMatch(details);
}

/** A valid message padded with an ignored field to exactly `size` bytes. */
function jsonOfSize(size: number, fields: Record<string, unknown>): string {
  const base = JSON.stringify({ ...fields, pad: '' });
  const body = JSON.stringify({ ...fields, pad: 'x'.repeat(size - Buffer.byteLength(base)) });
  expect(Buffer.byteLength(body)).toBe(size);
  return body;
}

/** Streams `data` in chunks, so fetch sends it with Transfer-Encoding: chunked. */
function chunked(data: string, chunkBytes = 64 * 1024): ReadableStream<Uint8Array> {
  const bytes = Buffer.from(data);
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.length) return controller.close();
      controller.enqueue(new Uint8Array(bytes.subarray(offset, offset + chunkBytes)));
      offset += chunkBytes;
    },
  });
}

/** A pino logger whose lines are kept for assertions. */
function collectingLogger(level: string) {
  const lines: { level: number; msg: string; messageId?: string }[] = [];
  const logger = pino({ level }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { logger, lines };
}

/** createGatewayApp on an ephemeral port, for states the harness gateway is never in. */
async function serveApp(config: Config, dispatcher: Dispatcher, logger: Logger) {
  const gateway = createGatewayApp(config, dispatcher, logger);
  const server = await listen(gateway.app, '127.0.0.1', 0);
  return {
    ...gateway,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${config.FOGHORN_WEBHOOK_PATH}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const storedFor = (chatId: string) => ChatMessage.countDocuments({ chatId });

describe('webhook channel: HTTP contract of POST /inbound', () => {
  let gw: Awaited<ReturnType<typeof useGateway>>;
  beforeAll(async () => {
    gw = await useGateway({ env: { FOGHORN_GATEWAY_MAX_AUDIO_BYTES: String(CAP) } });
  });
  afterAll(() => gw.stop());

  const valid = (chatId: string) => JSON.stringify({ chat_id: chatId, user_id: 'alice', text: 'hello' });

  describe('405 for any method other than POST, checked before the secret', () => {
    it.each(['GET', 'PUT', 'PATCH', 'DELETE'])('%s → 405 + Allow: POST', async (method) => {
      const body = method === 'GET' ? undefined : valid('c-405');
      for (const secret of [undefined, null, 'wrong']) {
        const res = await hit(gw.url(), { method, secret, body });
        expectError(res, 405, 'Method not allowed');
        expect(res.headers.get('allow')).toBe('POST');
      }
      expect(await storedFor('c-405')).toBe(0);
    });

    it('HEAD and OPTIONS are refused the same way', async () => {
      for (const method of ['HEAD', 'OPTIONS']) {
        const res = await hit(gw.url(), { method, secret: null });
        expect(res.status).toBe(405);
        expect(res.headers.get('allow')).toBe('POST');
      }
    });
  });

  describe('401 for a missing or wrong secret', () => {
    const cases: [string, string | null][] = [
      ['missing', null],
      ['empty', ''],
      ['wrong, same length', GATEWAY_SECRET.slice(0, -1) + (GATEWAY_SECRET.endsWith('f') ? 'e' : 'f')],
      ['wrong, shorter', GATEWAY_SECRET.slice(0, 8)],
      ['wrong, longer', GATEWAY_SECRET + 'x'],
      ['wrong case', GATEWAY_SECRET.toUpperCase()],
    ];
    it.each(cases)('%s secret → 401 Unauthorized, nothing stored', async (_name, secret) => {
      const res = await hit(gw.url(), { secret, body: valid('c-401') });
      expectError(res, 401, 'Unauthorized');
      expect(await storedFor('c-401')).toBe(0);
    });

    it('the right secret is accepted (no ETag: nothing the webhook answers is fetched again)', async () => {
      const res = await hit(gw.url(), { body: valid('c-401-ok') });
      expect(res.status).toBe(202);
      expect(res.headers.get('etag')).toBeNull();
    });
  });

  it('with FOGHORN_WEBHOOK_SECRET unset: warnings at start, and every request is 401', async () => {
    const { logger, lines } = collectingLogger('warn');
    const config = parseConfig({ FOGHORN_WEBHOOK_ADDR: '127.0.0.1:0', FOGHORN_TASK_QUEUE: gw.wf.taskQueue });
    const open = await startGateway(config, gw.client, logger);
    try {
      const warnings = lines.filter((l) => l.level === 40).map((l) => l.msg);
      expect(warnings).toEqual([
        expect.stringMatching(/^FOGHORN_WEBHOOK_SECRET is not set\b.*401/),
        expect.stringMatching(/^FOGHORN_WEBHOOK_CALLBACK_URL is not set\b/),
      ]);
      const url = `http://127.0.0.1:${(open.server.address() as AddressInfo).port}/inbound`;
      for (const secret of [GATEWAY_SECRET, '', null, 'anything']) {
        expectError(await hit(url, { secret, body: valid('c-nosecret') }), 401, 'Unauthorized', /not set/);
      }
      // Still method first.
      expectError(await hit(url, { method: 'GET', secret: null }), 405, 'Method not allowed');
      expect(await storedFor('c-nosecret')).toBe(0);
    } finally {
      await open.stop();
    }
    // An empty variable counts as unset; a fully configured gateway warns about nothing.
    expect(configurationWarnings(parseConfig({ FOGHORN_WEBHOOK_SECRET: '' }))).toHaveLength(2);
    expect(configurationWarnings(gw.config)).toEqual([]);
  });

  describe('413 over FOGHORN_GATEWAY_MAX_AUDIO_BYTES + 1 MiB', () => {
    const fields = { chat_id: 'c-size', text: 'sized' };

    it('by Content-Length: 1 MiB + 1100 bytes with a cap of 1000', async () => {
      const res = await hit(gw.url(), { body: jsonOfSize(1024 * 1024 + 1100, fields) });
      expectError(res, 413, 'Payload too large', new RegExp(`${MAX_BODY}`));
    });

    it('at the limit exactly → 202; one byte more → 413', async () => {
      const at = await hit(gw.url(), { body: jsonOfSize(MAX_BODY, { ...fields, chat_id: 'c-size-at' }) });
      expect(at.status).toBe(202);
      expect(at.body.chat_id).toBe('c-size-at');
      const over = await hit(gw.url(), { body: jsonOfSize(MAX_BODY + 1, fields) });
      expectError(over, 413, 'Payload too large');
    });

    it('a chunked body (no Content-Length) over the limit → 413; at the limit → 202', async () => {
      const over = await hit(gw.url(), { body: chunked(jsonOfSize(MAX_BODY + 1, fields)) });
      expectError(over, 413, 'Payload too large');
      const at = await hit(gw.url(), { body: chunked(jsonOfSize(MAX_BODY, { ...fields, chat_id: 'c-size-chunked' })) });
      expect(at.status).toBe(202);
      expect(await storedFor('c-size')).toBe(0);
    });

    it('decoded audio_b64 over the cap → 413 even though the body is within the limit; at the cap → 202', async () => {
      const over = await hit(gw.url(), {
        body: JSON.stringify({ chat_id: 'c-size', audio_b64: randomBytes(CAP + 1).toString('base64') }),
      });
      expectError(over, 413, 'Payload too large', /audio_b64/);
      const at = await hit(gw.url(), {
        body: JSON.stringify({ chat_id: 'c-size-audio', audio_b64: randomBytes(CAP).toString('base64') }),
      });
      expect(at.status).toBe(202);
      expect(await storedFor('c-size')).toBe(0);
    });

    it('the audio cap does not apply to images (only the body limit does)', async () => {
      const res = await hit(gw.url(), {
        body: JSON.stringify({ chat_id: 'c-size-image', image_b64: randomBytes(5 * CAP).toString('base64') }),
      });
      expect(res.status).toBe(202);
    });
  });

  describe('check order (DESIGN §10)', () => {
    const oversized = () => jsonOfSize(MAX_BODY + 1, { chat_id: 'c-order', text: 'x' });

    it('secret before size: wrong or missing secret with an oversized body → 401', async () => {
      expectError(await hit(gw.url(), { secret: 'wrong', body: oversized() }), 401, 'Unauthorized');
      expectError(await hit(gw.url(), { secret: null, body: oversized() }), 401, 'Unauthorized');
      expectError(await hit(gw.url(), { secret: null, body: chunked(oversized()) }), 401, 'Unauthorized');
    });

    it('method before secret and size: PUT with no secret and an oversized body → 405', async () => {
      expectError(await hit(gw.url(), { method: 'PUT', secret: null, body: oversized() }), 405, 'Method not allowed');
    });

    it('size before body: right secret, oversized invalid JSON → 413', async () => {
      const res = await hit(gw.url(), { body: '{' + ' '.repeat(MAX_BODY) });
      expectError(res, 413, 'Payload too large');
    });
  });

  describe('400 Invalid request, details naming the field', () => {
    const cases: [string, string, RegExp][] = [
      ['invalid JSON', '{"chat_id": "bad-1", "text": ', /^body: not valid JSON/],
      ['an empty body', '', /^body: not valid JSON/],
      ['a JSON array', JSON.stringify([{ chat_id: 'bad-2', text: 'hi' }]), /^body: must be a JSON object$/],
      ['a JSON string', JSON.stringify('chat_id=bad-3'), /^body: must be a JSON object$/],
      ['JSON null', 'null', /^body: must be a JSON object$/],
      ['chat_id missing', JSON.stringify({ text: 'hi' }), /body\.chat_id: Required/],
      ['chat_id a number', JSON.stringify({ chat_id: 42, text: 'hi' }), /body\.chat_id: must be a string/],
      ['chat_id empty', JSON.stringify({ chat_id: '', text: 'hi' }), /body\.chat_id/],
      ['chat_id only spaces', JSON.stringify({ chat_id: '   ', text: 'hi' }), /body\.chat_id/],
      ['audio_b64 not base64', JSON.stringify({ chat_id: 'bad-4', audio_b64: 'not base64!' }), /body\.audio_b64/],
      ['audio_b64 bad padding', JSON.stringify({ chat_id: 'bad-5', audio_b64: 'QUJD=' }), /body\.audio_b64/],
      ['image_b64 not base64', JSON.stringify({ chat_id: 'bad-6', image_b64: '@@@@' }), /body\.image_b64/],
      [
        'audio_mime text/plain',
        JSON.stringify({ chat_id: 'bad-7', audio_b64: 'AAAA', audio_mime: 'text/plain' }),
        /body\.audio_mime: must have the shape audio\/<subtype>/,
      ],
      [
        'audio_mime without a subtype',
        JSON.stringify({ chat_id: 'bad-8', audio_b64: 'AAAA', audio_mime: 'audio' }),
        /body\.audio_mime/,
      ],
      [
        'image_mime audio/png',
        JSON.stringify({ chat_id: 'bad-9', image_b64: 'AAAA', image_mime: 'audio/png' }),
        /body\.image_mime: must have the shape image\/<subtype>/,
      ],
      ['none of text, audio or image', JSON.stringify({ chat_id: 'bad-10' }), /^body: one of text/],
      ['text of only spaces', JSON.stringify({ chat_id: 'bad-11', text: '   ' }), /^body: one of text/],
      ['text not a string', JSON.stringify({ chat_id: 'bad-12', text: 7 }), /body\.text/],
      [
        'both audio_b64 and audio_url',
        JSON.stringify({ chat_id: 'bad-13', audio_b64: 'AAAA', audio_url: 'https://example.com/a.ogg' }),
        /body\.audio_url: give audio_b64 or audio_url, not both/,
      ],
      [
        'both image_b64 and image_url',
        JSON.stringify({ chat_id: 'bad-14', image_b64: 'AAAA', image_url: 'https://example.com/a.png' }),
        /body\.image_url: give image_b64 or image_url, not both/,
      ],
      [
        'a file: audio_url',
        JSON.stringify({ chat_id: 'bad-15', audio_url: 'file:///etc/passwd' }),
        /body\.audio_url: must be an http or https URL/,
      ],
      ['an audio_url that is no URL', JSON.stringify({ chat_id: 'bad-16', audio_url: 'voice.ogg' }), /body\.audio_url/],
    ];
    it.each(cases)('%s', async (_name, body, details) => {
      expectError(await hit(gw.url(), { body }), 400, 'Invalid request', details);
    });

    it('none of the refused bodies was stored', async () => {
      expect(await ChatMessage.countDocuments({ chatId: /^bad-/ })).toBe(0);
    });
  });

  describe('503 while shutting down (after the 400 checks)', () => {
    let app: Awaited<ReturnType<typeof serveApp>>;
    beforeAll(async () => {
      app = await serveApp(gw.config, { client: gw.client, taskQueue: gw.wf.taskQueue }, pino({ level: 'silent' }));
    });
    afterAll(() => app.close());

    it('accepts before beginShutdown, answers 503 + Retry-After after, and stores nothing', async () => {
      expect((await hit(app.url, { body: valid('c-shutdown-before') })).status).toBe(202);
      app.beginShutdown();
      const res = await hit(app.url, { body: valid('c-shutdown') });
      expectError(res, 503, 'Service unavailable', /shutting down/);
      expect(res.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
      expect(await storedFor('c-shutdown')).toBe(0);
      const inline = await hit(app.url, {
        body: JSON.stringify({ chat_id: 'c-shutdown', audio_b64: randomBytes(10).toString('base64') }),
      });
      expect(inline.status).toBe(503);
      expect(await storedFor('c-shutdown')).toBe(0);
    });

    it('earlier checks still win while shutting down: 405, 401, 413, 400', async () => {
      expect((await hit(app.url, { method: 'GET' })).status).toBe(405);
      expect((await hit(app.url, { secret: 'wrong', body: valid('c-shutdown') })).status).toBe(401);
      expectError(await hit(app.url, { body: jsonOfSize(MAX_BODY + 1, { chat_id: 'c' }) }), 413, 'Payload too large');
      expectError(await hit(app.url, { body: '{not json' }), 400, 'Invalid request', /not valid JSON/);
      expectError(await hit(app.url, { body: JSON.stringify({ text: 'hi' }) }), 400, 'Invalid request', /chat_id/);
    });
  });

  describe('202 {message_id, chat_id}, stored before the answer', () => {
    /** Right after a 202 the turn may have started or (rarely) finished, but the message is there. */
    const storedNow = async (id: string) => {
      const m = await getChatMessage(id);
      expect(m).not.toBeNull();
      expect(['accepted', 'queued', 'done']).toContain(m!.status);
      return m!;
    };

    it('a text message: 202 with exactly message_id and chat_id; stored; answered at the callback', async () => {
      const res = await hit(gw.url(), { body: JSON.stringify({ chat_id: 'c-text', user_id: 'bob', text: '/help' }) });
      expect(res.status).toBe(202);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.body).toEqual({ message_id: expect.stringMatching(/^msg-[0-9a-f-]{36}$/), chat_id: 'c-text' });
      const m = await storedNow(res.body.message_id);
      expect(m).toMatchObject({ chatId: 'c-text', userId: 'bob', text: '/help' });
      expect((await gw.reply(res.body.message_id)).body).toMatchObject({ chat_id: 'c-text', kind: 'final' });
    });

    it('every message gets its own id', async () => {
      const ids = await Promise.all([1, 2, 3].map(() => gw.send({ chat_id: 'c-ids', text: 'same' })));
      expect(new Set(ids).size).toBe(3);
      expect(await storedFor('c-ids')).toBe(3);
    });

    it('chat_id is echoed exactly as sent, in the 202 and in the callback', async () => {
      // The caller routes replies by chat_id: the gateway must not rewrite it (e.g. trim it).
      const chatId = ' room 7 ';
      const res = await hit(gw.url(), { body: JSON.stringify({ chat_id: chatId, text: '/help' }) });
      expect(res.status).toBe(202);
      expect(res.body.chat_id).toBe(chatId);
      expect((await gw.reply(res.body.message_id)).body.chat_id).toBe(chatId);
    });

    it('inline audio_b64 lands in GridFS byte for byte, with its MIME type', async () => {
      const audio = randomBytes(700);
      const res = await hit(gw.url(), {
        body: JSON.stringify({ chat_id: 'c-audio', audio_b64: audio.toString('base64'), audio_mime: 'audio/ogg' }),
      });
      expect(res.status).toBe(202);
      const m = await storedNow(res.body.message_id);
      expect(m.audio).toMatchObject({ fileId: expect.any(String), mime: 'audio/ogg' });
      expect(m.audio?.url).toBeUndefined();
      const media = await getMedia(m.audio!.fileId!);
      expect(media.data.equals(audio)).toBe(true);
      expect(media.mime).toBe('audio/ogg');
    });

    it('inline image_b64 (line-wrapped base64 too) lands in GridFS byte for byte, with its MIME type', async () => {
      const image = randomBytes(3000);
      const wrapped = image.toString('base64').replace(/.{76}/g, '$&\r\n').trim();
      const res = await hit(gw.url(), {
        body: JSON.stringify({ chat_id: 'c-image', text: 'look', image_b64: wrapped, image_mime: 'image/png' }),
      });
      expect(res.status).toBe(202);
      const m = await storedNow(res.body.message_id);
      expect(m).toMatchObject({ text: 'look', image: { fileId: expect.any(String), mime: 'image/png' } });
      const media = await getMedia(m.image!.fileId!);
      expect(media.data.equals(image)).toBe(true);
      expect(media.mime).toBe('image/png');
    });

    it('audio_url and image_url are stored as URLs, not fetched before the 202', async () => {
      // A media server that never answers: fetching before the 202 would hang the request.
      let hits = 0;
      const hanging: Server = createServer(() => void hits++);
      await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
      const base = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}`;
      try {
        const res = await hit(gw.url(), {
          body: JSON.stringify({
            chat_id: 'c-urls',
            audio_url: `${base}/voice.ogg`,
            audio_mime: 'audio/ogg',
            image_url: `${base}/chart.png`,
          }),
        });
        expect(res.status).toBe(202);
        expect(hits).toBe(0);
        const m = await storedNow(res.body.message_id);
        expect(m.audio).toEqual({ url: `${base}/voice.ogg`, mime: 'audio/ogg' });
        expect(m.image).toEqual({ url: `${base}/chart.png` });
      } finally {
        hanging.closeAllConnections();
        await new Promise((resolve) => hanging.close(resolve));
      }
    });

    it('explicit JSON nulls for optional fields count as absent', async () => {
      const res = await hit(gw.url(), {
        body: JSON.stringify({
          chat_id: 'c-nulls',
          text: 'hi',
          user_id: null,
          audio_b64: null,
          audio_url: null,
          audio_mime: null,
          image_b64: null,
          image_url: null,
          image_mime: null,
        }),
      });
      expect(res.status).toBe(202);
      const m = await storedNow(res.body.message_id);
      expect(m.text).toBe('hi');
      expect(m.userId ?? undefined).toBeUndefined();
      expect(m.audio ?? undefined).toBeUndefined();
      expect(m.image ?? undefined).toBeUndefined();
    });

    it('a Content-Type other than application/json (or none) is accepted when the body is JSON', async () => {
      // Decision: chat systems are not always careful with Content-Type and the body must be JSON
      // anyway, so the gateway parses any body as JSON instead of answering 415.
      for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'application/octet-stream']) {
        const res = await hit(gw.url(), { headers: { 'content-type': contentType }, body: valid('c-ctype') });
        expect({ contentType, status: res.status }).toEqual({ contentType, status: 202 });
      }
      const bare = await hit(gw.url(), { body: new TextEncoder().encode(valid('c-ctype')) }); // no Content-Type
      expect(bare.status).toBe(202);
      expect(await storedFor('c-ctype')).toBe(4);
    });

    it('unknown extra fields are ignored', async () => {
      const res = await hit(gw.url(), {
        body: JSON.stringify({
          chat_id: 'c-extra',
          text: 'hi',
          thread: { id: 9 },
          attachments: [1, 2],
          status: 'done',
        }),
      });
      expect(res.status).toBe(202);
      const m = await storedNow(res.body.message_id);
      expect(m.status).not.toBe('done'); // "status" from the body did not leak into the record
      expect(m).not.toHaveProperty('thread');
      expect(m).not.toHaveProperty('attachments');
    });
  });

  it('404 envelope for another path', async () => {
    expectError(await hit(gw.url().replace(/\/inbound$/, '/other'), { body: valid('c-404') }), 404, 'Not found');
    expectError(await hit(gw.url().replace(/\/inbound$/, '/'), { method: 'GET' }), 404, 'Not found');
    expectError(await hit(`${gw.url()}/more`, { body: valid('c-404') }), 404, 'Not found');
    expect(await storedFor('c-404')).toBe(0);
  });

  describe('the 202 waits for the insert only; the hand-over to Temporal follows, batched per chat', () => {
    it('Temporal holding every call: 202 once stored, nothing reaches Temporal; once back, answered in order, several messages per signal', async () => {
      // Only the gateway started here can hand the messages over: the harness gateway is stopped.
      await gw.stopGateway();
      const gate = await useTcpGate(gw.wf.env.address);
      const connection = await Connection.connect({ address: gate.address });
      const client = new Client({ connection, namespace: gw.wf.env.namespace ?? 'default' });
      const { logger } = collectingLogger('warn');
      const held = await startGateway(gw.config, client, logger); // with its sweeper, as deployed
      const url = `http://127.0.0.1:${(held.server.address() as AddressInfo).port}${gw.config.FOGHORN_WEBHOOK_PATH}`;
      const chatId = 'c-held';
      try {
        gate.hold(); // from here no byte reaches Temporal, nor comes back from it
        const ids: string[] = [];
        for (const text of ['/help', '/gateway status', '/help', '/incidents']) {
          const res = await hit(url, { body: JSON.stringify({ chat_id: chatId, user_id: 'dan', text }) });
          expect(res.status).toBe(202);
          ids.push(res.body.message_id);
          // Durable before the answer, and not handed over: no Temporal call could have completed.
          expect(await getChatMessage(res.body.message_id)).toMatchObject({ status: 'accepted', chatId, text });
        }
        await expect(gw.client.workflow.getHandle(chatWorkflowId(chatId)).describe()).rejects.toThrow(
          WorkflowNotFoundError,
        );

        gate.open();
        for (const id of ids) await gw.reply(id, 90_000);
        const replies = gw.receiver
          .delivered()
          .filter((c) => c.body.chat_id === chatId && (c.body.kind === 'final' || c.body.kind === 'error'));
        expect(replies.map((c) => c.body.message_id)).toEqual(ids); // in order, each once
        const batches = await signalledBatches(gw.client, chatId);
        expect(firstSignalled(batches)).toEqual(ids);
        // The messages stored while the first hand-over hung went together.
        expect(Math.max(...batches.map((b) => b.length))).toBeGreaterThan(1);
      } finally {
        gate.open();
        await held.stop();
        await connection.close();
        await gate.close();
        await gw.restartGateway();
      }
    }, 120_000);

    it('Temporal refusing connections: 202 and stored; the failed hand-over is logged and retried', async () => {
      const connection = Connection.lazy({ address: `127.0.0.1:${await freePort()}` });
      const refusing = new Client({ connection });
      const { logger, lines } = collectingLogger('warn');
      const app = await serveApp(gw.config, { client: refusing, taskQueue: gw.wf.taskQueue }, logger);
      try {
        const res = await hit(app.url, { body: valid('c-refused') });
        expect(res.status).toBe(202);
        expect(await getChatMessage(res.body.message_id)).toMatchObject({ chatId: 'c-refused', status: 'accepted' });
        const failed = await gw.eventually(
          async () => lines.filter((l) => /^messages stored but not yet dispatched/.test(l.msg)),
          (found) => found.length > 0,
        );
        expect(failed[0]).toMatchObject({ chatId: 'c-refused', retryInMs: expect.any(Number) });
        // No secret in the log line.
        expect(JSON.stringify(failed)).not.toContain(GATEWAY_SECRET);
      } finally {
        await app.close();
        await app.drain();
        await connection.close();
      }
    }, 60_000);

    it('nothing is lost: a gateway that cannot hand over leaves the message to the sweeper, which does', async () => {
      // The harness gateway's own sweeper is stopped, so only the sweeper started here can hand the message over.
      await gw.stopGateway();
      const connection = await Connection.connect({ address: gw.wf.env.address });
      await connection.close();
      const offline = new Client({ connection, namespace: gw.wf.env.namespace ?? 'default' });
      const appLog = collectingLogger('warn');
      const app = await serveApp(gw.config, { client: offline, taskQueue: gw.wf.taskQueue }, appLog.logger);
      const sweepLog = collectingLogger('info');
      let sweeper: { stop(): Promise<void> } | undefined;
      try {
        const res = await hit(app.url, {
          body: JSON.stringify({ chat_id: 'c-outage', user_id: 'carol', text: '/help' }),
        });
        expect(res.status).toBe(202);
        const id = res.body.message_id as string;
        expect(await getChatMessage(id)).toMatchObject({ status: 'accepted', chatId: 'c-outage', text: '/help' });
        // The gateway "dies": its queue gives up (retries exhausted), the message stays stored.
        await app.close();
        await gw.eventually(
          async () => appLog.lines.map((l) => l.msg),
          (msgs) => msgs.includes('messages stored but not yet dispatched: left to the sweeper'),
          60_000,
        );
        await app.drain();
        expect(await getChatMessage(id)).toMatchObject({ status: 'accepted' });

        sweeper = startSweeper({ client: gw.client, taskQueue: gw.wf.taskQueue }, sweepLog.logger);
        const reply = await gw.reply(id, 40_000);
        expect(reply.body).toMatchObject({ chat_id: 'c-outage', message_id: id, kind: 'final' });
        expect(sweepLog.lines).toContainEqual(
          expect.objectContaining({ msg: 'late message dispatched', messageId: id }),
        );
      } finally {
        await sweeper?.stop();
        await app.close();
        await gw.restartGateway();
      }
    }, 120_000);
  });
});
