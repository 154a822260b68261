/**
 * An error that maps to one answer in the spec's error envelope (status, exact message,
 * details). Shared by the API and the chat gateway, which answer with the same envelope.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly details = '',
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** How long a client should wait before retrying a 503 (MongoDB or Temporal unreachable). */
export const RETRY_AFTER_SECONDS = 5;

/** 503 `Service unavailable` + Retry-After: a dependency is down, the same request will work later. */
export const unavailable = (details: string) =>
  new ApiError(503, 'Service unavailable', details, { 'Retry-After': String(RETRY_AFTER_SECONDS) });

/** The error envelope every HTTP answer of Foghorn uses, the API's and the gateway's (DESIGN §4). */
export function envelope(status: number, message: string, details: string) {
  return { apiVersion: 'v1', kind: 'Error', error: { code: status, message, details } };
}
