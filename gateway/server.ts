import { randomUUID } from 'crypto';
import express, { type Request, type Response } from 'express';
import type { Server } from 'http';
import type { Logger } from 'pino';
import { BODY_OVERHEAD_BYTES } from '../domain/chat';
import { parseInbound, type InboundMedia } from '../contracts/chat-inbound';
import type { Config } from '../config/env';
import { ApiError, envelope, unavailable } from '../domain/errors';
import { redact } from '../domain/redact';
import { secretMatcher } from '../domain/webhook-signature';
import { saveChatMessage } from '../store/chat';
import { putMedia } from '../store/media';
import { ChatHandOverQueue } from '../operations/chat-dispatch';
import type { Dispatcher } from './dispatch';

export const SECRET_HEADER = 'x-foghorn-secret';

export interface GatewayApp {
  app: express.Express;
  /** From now on every request is answered 503 + Retry-After. */
  beginShutdown(): void;
  /** Resolves when no hand-over to Temporal is queued or running (before closing its connection). */
  drain(): Promise<void>;
}

/**
 * The webhook adapter's HTTP side (spec webhook-channel.md, DESIGN §10). Checks run in the
 * documented order — method, secret, size, body, shutting down — and a message is stored
 * (inline media in GridFS) before the 202, so an accepted message survives any crash. The 202
 * waits for nothing else: the hand-over to Temporal follows, batched per chat
 * (operations/chat-dispatch.ts), and the sweeper covers a crash in between.
 */
export function createGatewayApp(config: Config, dispatcher: Dispatcher, logger: Logger): GatewayApp {
  const secret = config.FOGHORN_WEBHOOK_SECRET;
  const secretMatches = secret ? secretMatcher(secret) : () => false;
  const maxAudio = config.FOGHORN_GATEWAY_MAX_AUDIO_BYTES;
  const maxBody = maxAudio + BODY_OVERHEAD_BYTES;
  let shuttingDown = false;
  const handOvers = new ChatHandOverQueue(dispatcher, {
    onFailed: (chatId, err, retryInMs) =>
      logger.warn(
        { err, chatId, ...(retryInMs !== undefined && { retryInMs }) },
        retryInMs === undefined
          ? 'messages stored but not yet dispatched: left to the sweeper'
          : 'messages stored but not yet dispatched: retrying',
      ),
  });
  // Details may quote the request (a JSON parser's excerpt of the body): never echo a secret.
  const fail = (res: Response, err: ApiError) =>
    res
      .status(err.status)
      .set(err.headers)
      .json(envelope(err.status, err.message, redact(err.details)));

  const app = express();
  app.disable('x-powered-by');
  // Nothing the webhook answers is a resource a cache asks for again: no ETag (a hash of each body).
  app.set('etag', false);
  app.all(config.FOGHORN_WEBHOOK_PATH, (req, res, next) => {
    if (req.method !== 'POST')
      return fail(res, new ApiError(405, 'Method not allowed', `use POST on ${req.path}`, { Allow: 'POST' }));
    if (!secret)
      return fail(
        res,
        new ApiError(401, 'Unauthorized', 'FOGHORN_WEBHOOK_SECRET is not set: every request is refused'),
      );
    if (!secretMatches(req.get(SECRET_HEADER)))
      return fail(res, new ApiError(401, 'Unauthorized', 'missing or wrong X-Foghorn-Secret header'));
    const declared = Number(req.get('content-length') ?? 0);
    if (declared > maxBody) return fail(res, tooLarge(maxBody));
    next();
  });
  // Any content type: chat systems are not always careful with it, and the body must be JSON anyway.
  app.post(config.FOGHORN_WEBHOOK_PATH, express.raw({ type: () => true, limit: maxBody }), async (req, res, next) => {
    try {
      await accept(req, res);
    } catch (err) {
      next(err);
    }
  });
  app.use((req, res) => fail(res, new ApiError(404, 'Not found', `no endpoint at ${req.path}`)));
  app.use((err: unknown, req: Request, res: Response, _next: express.NextFunction) => {
    const e = err as { type?: string; name?: string };
    if (e.type === 'entity.too.large') return fail(res, tooLarge(maxBody));
    if (e.type === 'encoding.unsupported' || e.type === 'charset.unsupported')
      return fail(res, new ApiError(415, 'Unsupported media type', (err as Error).message));
    if (e.type?.startsWith('entity.') || e.type?.startsWith('request.'))
      return fail(res, new ApiError(400, 'Invalid request', `body: ${(err as Error).message}`));
    if (/^Mongo/.test(e.name ?? '')) return fail(res, unavailable('MongoDB is unreachable'));
    logger.error({ err, path: req.path }, 'inbound message failed');
    fail(res, new ApiError(500, 'Internal error', 'the gateway could not accept the message'));
  });

  async function accept(req: Request, res: Response) {
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch (err) {
      return fail(res, new ApiError(400, 'Invalid request', `body: not valid JSON (${(err as Error).message})`));
    }
    const parsed = parseInbound(body, maxAudio);
    if (!parsed.ok)
      return fail(
        res,
        new ApiError(parsed.status, parsed.status === 413 ? 'Payload too large' : 'Invalid request', parsed.details),
      );
    if (shuttingDown) return fail(res, unavailable('the gateway is shutting down'));

    const m = parsed.message;
    const messageId = `msg-${randomUUID()}`;
    const stored = async (field: 'audio' | 'image', media?: InboundMedia) => {
      if (!media) return undefined;
      if (!media.data) return { url: media.url, ...(media.mime && { mime: media.mime }) };
      const filename = `${messageId}-${field}`;
      // A fresh id: nothing to look up first on the accept path.
      const { fileId } = await putMedia(media.data, { filename, ...(media.mime && { mime: media.mime }) });
      return { fileId, filename, ...(media.mime && { mime: media.mime }) };
    };
    const audio = await stored('audio', m.audio);
    const image = await stored('image', m.image);
    // Stamped and registered before the insert: the chat's hand-over never goes past a message
    // of this process still being stored, so chat order is acceptance order.
    const acceptedAt = new Date();
    const insert = handOvers.accepting(m.chatId, acceptedAt);
    try {
      // Not stored: not accepted (503 when MongoDB is down).
      await saveChatMessage(
        {
          messageId,
          chatId: m.chatId,
          ...(m.userId && { userId: m.userId }),
          ...(m.text && { text: m.text }),
          ...(audio && { audio }),
          ...(image && { image }),
        },
        acceptedAt,
      );
    } finally {
      insert.settled();
    }
    res.status(202).json({ message_id: messageId, chat_id: m.chatId });
  }

  return {
    app,
    beginShutdown: () => {
      shuttingDown = true;
    },
    drain: () => handOvers.drain(),
  };
}

const tooLarge = (maxBody: number) =>
  new ApiError(413, 'Payload too large', `the body exceeds ${maxBody} bytes (FOGHORN_GATEWAY_MAX_AUDIO_BYTES + 1 MiB)`);

/**
 * How long an idle keep-alive connection stays open: longer than the 60 s idle timeout load
 * balancers and proxies commonly keep towards their upstreams, so it is always the client side
 * that closes. Node's 5 s default closes first, and a request the client sends on the socket
 * as it closes fails (ECONNRESET, or a 502 from the balancer).
 */
export const KEEP_ALIVE_MS = 65_000;

/** The one way Foghorn's HTTP servers (the API and the webhook listener) listen. */
export function listen(app: express.Express, host: string, port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host, () => resolve(server)).once('error', reject);
    server.keepAliveTimeout = KEEP_ALIVE_MS;
  });
}

/**
 * Stops listening; resolves once every connection is closed. Requests in flight finish, and the
 * connections they came on close as they go idle rather than waiting out the keep-alive.
 */
export function close(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.keepAliveTimeout = 1;
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}
