import type { ErrorRequestHandler, RequestHandler } from 'express';
import { ApiError, envelope, RETRY_AFTER_SECONDS, unavailable } from '../domain/errors';
import { describeZodError } from '../contracts/envelope';
import { redact } from '../domain/redact';

export { ApiError, describeZodError, envelope, RETRY_AFTER_SECONDS, unavailable };

export const badRequest = (details: string) => new ApiError(400, 'Invalid request', details);
export const notFound = (kind?: string, name?: string) =>
  new ApiError(404, kind ? `${kind} not found` : 'Not found', name ? `${kind} ${name} does not exist` : '');
export const conflict = (message: string, details: string) => new ApiError(409, message, details);

/** Errors no route claimed: unknown path. */
export const notFoundHandler: RequestHandler = (req) => {
  throw new ApiError(404, 'Not found', `no route for ${req.method} ${req.path}`);
};

const MONGO_OUTAGE = /^Mongo(Network|ServerSelection|NotConnected|Topology)/;

/** The one place an error becomes an HTTP answer (DESIGN §4). Never leaks a stack trace. */
export const errorHandler: ErrorRequestHandler = (err, req, res, next) => {
  if (res.headersSent) return next(err);
  const mapped = toApiError(err);
  // The request logger redacts what it writes (api/observability.ts).
  if (mapped.status >= 500) req.log?.error({ err }, 'request failed');
  // Details may quote the request (a JSON parser's excerpt of the body): never echo a secret.
  res
    .status(mapped.status)
    .set(mapped.headers)
    .json(envelope(mapped.status, mapped.message, redact(mapped.details)));
};

function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const e = err as { type?: string; status?: number; name?: string; message?: string; code?: string };
  // A path parameter that is not valid percent-encoding names nothing (router's decodeParam).
  if (err instanceof URIError) return new ApiError(404, 'Not found', 'malformed percent-encoding in the path');
  // body-parser errors
  if (e.type === 'entity.parse.failed') return badRequest(`body: malformed JSON (${e.message})`);
  if (e.type === 'entity.too.large')
    return new ApiError(413, 'Payload too large', 'the request body exceeds the limit');
  if (e.type === 'encoding.unsupported' || e.type === 'charset.unsupported')
    return new ApiError(415, 'Unsupported media type', e.message ?? '');
  if (typeof e.status === 'number' && e.status >= 400 && e.status < 500)
    return new ApiError(e.status, 'Invalid request', e.message ?? '');
  // backing services down
  if (MONGO_OUTAGE.test(e.name ?? '') || e.message?.includes('buffering timed out'))
    return unavailable('MongoDB is unreachable');
  if (e.name === 'ServiceError' || e.code === 'UNAVAILABLE' || e.name === 'TransportError')
    return unavailable('Temporal is unreachable');
  // An update (acknowledge, resolve, an approval) Temporal did not finish in time: a worker far
  // behind in a storm. It may still land; a retry finds out (a repeat is answered 409).
  if (e.name === 'WorkflowUpdateRPCTimeoutOrCancelledError')
    return unavailable('Temporal did not answer in time; the change may still take effect: retry');
  return new ApiError(500, 'Internal error', 'the server could not complete the request');
}
