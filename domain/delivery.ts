/**
 * Callback delivery timing (DESIGN §10): exponential backoff with full jitter, capped, and a
 * receiver's Retry-After wins when it asks for longer. Final and error replies keep trying for
 * a day; notices and progress are worth a few quick tries only.
 */
export const RELIABLE_DELIVERY_WINDOW_MS = 24 * 60 * 60 * 1000;
export const BACKOFF_BASE_MS = 1_000;
export const BACKOFF_CAP_MS = 30 * 60 * 1000;
/** A Retry-After beyond this is treated as this (a receiver cannot park a reply for days). */
export const RETRY_AFTER_CAP_MS = 60 * 60 * 1000;

/** Delay before attempt `attempt + 1`; `random` in [0, 1) makes the jitter (half fixed, half random). */
export function retryDelayMs(attempt: number, random: number, retryAfterMs?: number): number {
  const exp = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** Math.max(0, attempt - 1));
  const jittered = Math.round(exp / 2 + (exp / 2) * random);
  if (retryAfterMs === undefined) return jittered;
  return Math.max(jittered, Math.min(retryAfterMs, RETRY_AFTER_CAP_MS));
}

/** `Retry-After` as seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, now: Date): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now.getTime());
}
