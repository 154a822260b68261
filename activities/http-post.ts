import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { parseRetryAfter, retryDelayMs } from '../domain/delivery';

const ATTEMPT_TIMEOUT_MS = 15_000;

export type PostOutcome =
  { ok: true; status: number } | { ok: false; failure: string; retryAfterMs?: number; permanent?: boolean };

/** 4xx answers a retry cannot change (a revoked Slack webhook 404s, a bad routing key 400s); 408, 409, 425 and 429 can. */
const isPermanent = (status: number) => status >= 400 && status < 500 && ![408, 409, 425, 429].includes(status);

/**
 * One POST of a JSON body to a receiver that may be slow, down or rate limiting (callbacks,
 * notification channels). Failures are described by host and status only: the URL's path and
 * query may hold the receiver's token (Slack incoming webhooks do), so they never appear.
 */
export async function postJson(url: string, json: string, headers: Record<string, string>): Promise<PostOutcome> {
  const host = new URL(url).host;
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...headers },
      body: json,
      signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
      redirect: 'manual',
    });
    await res.body?.cancel();
    if (res.ok) return { ok: true, status: res.status };
    const retryAfterMs = parseRetryAfter(res.headers.get('retry-after'), new Date());
    return {
      ok: false,
      failure: `HTTP ${res.status} from ${host}`,
      ...(retryAfterMs !== undefined && { retryAfterMs }),
      ...(isPermanent(res.status) && { permanent: true }),
    };
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code;
    const why = (err as Error).name === 'TimeoutError' ? 'timed out' : (cause ?? 'network error');
    return { ok: false, failure: `${why} posting to ${host}` };
  }
}

/**
 * The failure that makes Temporal try again after our own delay: backoff with jitter from the
 * activity's attempt number, or the receiver's Retry-After when it asks for longer (429, 503).
 */
export function retryLater(message: string, type: string, retryAfterMs?: number): ApplicationFailure {
  const { attempt } = Context.current().info;
  return ApplicationFailure.create({
    message,
    type,
    nextRetryDelay: retryDelayMs(attempt, Math.random(), retryAfterMs),
  });
}
