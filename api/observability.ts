import { randomUUID } from 'crypto';
import type { RequestHandler } from 'express';
import type { IncomingMessage } from 'http';
import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { pinoHttp } from 'pino-http';
import pinoPretty from 'pino-pretty';
import { collectDefaultMetrics, Histogram, Registry } from 'prom-client';
import { addKnownSecrets, isSecretKey, redact, REDACTED, redactText } from '../domain/redact';

/** Keys pino serializes itself (the request logger's req/res, errors); redacted after that. */
const SERIALIZED = new Set(['req', 'res', 'err']);

/** The fields of one log line, secrets out (domain/redact.ts); errors under any key keep their stack. */
function redactFields(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    if (isSecretKey(key) && value !== undefined && value !== null && value !== '') out[key] = REDACTED;
    else if (SERIALIZED.has(key)) out[key] = value;
    else out[key] = redact(value);
  }
  return out;
}

/**
 * A child's bindings (`logger.child({...})`, pino-http's per-request child) skip the bindings
 * formatter: pino keeps them as a JSON fragment, redacted here once per child.
 */
function redactBindings(child: Logger): void {
  const holder = child as unknown as Record<symbol, unknown>;
  const fragment = holder[pino.symbols.chindingsSym];
  if (typeof fragment !== 'string' || !fragment.startsWith(',')) return;
  try {
    const fields = JSON.parse(`{${fragment.slice(1)}}`) as Record<string, unknown>;
    holder[pino.symbols.chindingsSym] = `,${JSON.stringify(redactFields(fields)).slice(1, -1)}`;
  } catch {
    holder[pino.symbols.chindingsSym] = redactText(fragment);
  }
}

const redacted =
  <T>(serialize: (value: T) => unknown) =>
  (value: T) =>
    redact(serialize(value));

/** Serializers shared by every logger: pino's standard ones, then the redaction rule. */
const serializers = {
  err: redacted(pino.stdSerializers.err),
  req: redacted((req: Record<string, unknown>) => req),
  res: redacted((res: Record<string, unknown>) => res),
};

/**
 * Foghorn's logger. Every line goes through the one redaction rule (domain/redact.ts): message
 * text, fields, child bindings, request and error serializers. On a terminal the lines are
 * pretty-printed for people; otherwise (files, pipes, containers) one JSON object per line.
 */
export function createLogger(
  level: string,
  opts: { pretty?: boolean; stream?: DestinationStream; knownSecrets?: Iterable<string | undefined> } = {},
): Logger {
  if (opts.knownSecrets) addKnownSecrets(opts.knownSecrets);
  const options: LoggerOptions = {
    level,
    base: { service: 'foghorn' },
    serializers,
    formatters: { log: redactFields, bindings: redactFields },
    onChild: redactBindings,
    hooks: {
      logMethod(args, method) {
        method.apply(
          this,
          args.map((a: unknown) => (typeof a === 'string' ? redactText(a) : a)) as Parameters<typeof method>,
        );
      },
    },
  };
  const pretty = opts.pretty ?? Boolean(process.stdout.isTTY);
  if (!pretty) return opts.stream ? pino(options, opts.stream) : pino(options);
  return pino(
    options,
    pinoPretty({
      ...(opts.stream && { destination: opts.stream }),
      colorize: true,
      sync: true,
      translateTime: 'SYS:HH:MM:ss.l',
      // The message names method, path and status; JSON output (not a terminal) keeps the rest.
      ignore: 'pid,hostname,service,req,res,responseTime',
    }),
  );
}

/** The path as the client sent it (Express rewrites `url` inside mounted routers). */
const path = (req: IncomingMessage) => (req as IncomingMessage & { originalUrl?: string }).originalUrl ?? req.url ?? '';

/**
 * The secret values in a configuration (tokens, secrets, API and audit keys), for `knownSecrets`:
 * an upstream error that echoes one (an LLM's "Incorrect API key provided: …") is still redacted.
 */
export function configSecrets(config: object): string[] {
  return Object.entries(config)
    .filter(([key]) => isSecretKey(key) || /_KEYS?$/.test(key))
    .flatMap(([, value]) => (Array.isArray(value) ? value : [value]))
    .filter((value): value is string => typeof value === 'string');
}

/** Probes and scrapes: logged only at trace, whatever they answer. */
const QUIET_PATHS = /^\/(healthz|readyz|livez|metrics)(\/|$|\?)/;

/** Structured request log with a request id (taken from `X-Request-Id` when the caller sent one). */
export function requestLogger(logger: Logger): RequestHandler {
  return pinoHttp({
    logger,
    genReqId: (req, res) => {
      const given = req.headers['x-request-id'];
      const id = typeof given === 'string' && /^[\w.-]{1,128}$/.test(given) ? given : randomUUID();
      res.setHeader('X-Request-Id', id);
      return id;
    },
    // Quiet by default: a line per request only at debug (health and metrics at trace), except
    // server errors, which are always worth a line.
    customLogLevel: (req, res, err) => {
      if (QUIET_PATHS.test(path(req))) return 'trace';
      return err || res.statusCode >= 500 ? 'error' : 'debug';
    },
    customSuccessMessage: (req, res, ms) => `${req.method} ${path(req)} ${res.statusCode} ${ms}ms`,
    customErrorMessage: (req, res, err) => `${req.method} ${path(req)} ${res.statusCode} ${err.message}`,
    serializers,
  });
}

/** Prometheus metrics of one app instance: its own registry, so tests can build many apps. */
export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const duration = new Histogram({
    name: 'foghorn_http_request_duration_seconds',
    help: 'HTTP request duration by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const middleware: RequestHandler = (req, res, next) => {
    const stop = duration.startTimer();
    res.on('finish', () => {
      // The route pattern, not the raw path, keeps the label set small.
      const route = req.route?.path ? `${req.baseUrl}${String(req.route.path)}` : 'unmatched';
      stop({ method: req.method, route, status: String(res.statusCode) });
    });
    next();
  };
  return { registry, middleware };
}
