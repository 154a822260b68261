import { ApiException } from '@kubernetes/client-node';
import type { KubeErrorFacts } from '../../domain/kube-actions';

// The type lives in domain/ (classifyKubeError reads it); re-exported so callers import one module.
export type { KubeErrorFacts } from '../../domain/kube-actions';

const UNDICI_TIMEOUTS = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/**
 * What a failed client-node call says, as facts that carry no request data: the HTTP status
 * and the API server's Status (`reason`, `message`) of an ApiException, or the network failure
 * behind any other error (a socket code such as ECONNREFUSED, or `Timeout` for an abort).
 */
export function kubeErrorFacts(err: unknown): KubeErrorFacts {
  if (err instanceof ApiException) {
    let body: unknown = err.body;
    if (typeof body === 'string') {
      try {
        body = JSON.parse(body);
      } catch {
        body = { message: body };
      }
    }
    const status = (body ?? {}) as { reason?: unknown; message?: unknown };
    return {
      status: err.code,
      ...(typeof status.reason === 'string' && { reason: status.reason }),
      ...(typeof status.message === 'string' && { detail: status.message }),
    };
  }
  const e = (err ?? {}) as {
    name?: unknown;
    code?: unknown;
    type?: unknown;
    statusCode?: unknown;
    cause?: { code?: unknown };
  };
  // client-node's Watch rejects a refused watch with a plain Error carrying `statusCode`.
  if (typeof e.statusCode === 'number') return { status: e.statusCode };
  if (e.name === 'AbortError' || e.name === 'TimeoutError' || e.type === 'aborted') return { reason: 'Timeout' };
  // undici (client-node's fetch) gives up on a connection or TLS handshake that never completes
  // before the per-call abort: the server did not answer in time, as for the abort.
  if (typeof e.cause?.code === 'string' && UNDICI_TIMEOUTS.has(e.cause.code)) return { reason: 'Timeout' };
  // node-fetch's FetchError carries the socket error (ECONNREFUSED, ECONNRESET, ENOTFOUND, …) as
  // `code`; fetch-style errors carry it on `cause`.
  if (typeof e.code === 'string') return { reason: e.code };
  if (typeof e.cause?.code === 'string') return { reason: e.cause.code };
  return { reason: typeof e.name === 'string' ? e.name : 'Error' };
}
