import type { ActivityTimeouts } from './activity-options';
import { parseDuration } from './duration';
import { fingerprint } from './fingerprint';
import { redactText, REDACTED } from './redact';

/**
 * The HttpRequest and RunScript steps of a remediation (DESIGN §8) as activity inputs and
 * results. Each input carries the step's idempotency `key` (plan + step index): a finished key
 * answers its recorded result without acting again, and a script is never run twice. The inputs
 * are validated by contracts/remediation.ts.
 */

// ---------------------------------------------------------------------------------------------
// Inputs and results
// ---------------------------------------------------------------------------------------------

export const HTTP_STEP_DEFAULT_TIMEOUT_MS = 30_000;
export const HTTP_STEP_MAX_TIMEOUT_MS = 5 * 60_000;
export const SCRIPT_STEP_DEFAULT_TIMEOUT_MS = 5 * 60_000;
export const SCRIPT_STEP_MAX_TIMEOUT_MS = 30 * 60_000;
/** The part of a response body a result keeps: enough to read an error, not a payload. */
export const HTTP_BODY_EXCERPT_BYTES = 2 * 1024;

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'DELETE'] as const;

/** An HttpRequest step as the activity runs it: an http(s) URL without credentials; no body on a GET. */
export interface HttpStepInput {
  key: string;
  method: (typeof HTTP_METHODS)[number];
  url: string;
  headers?: Record<string, string>;
  body?: string;
  expectStatus?: number;
  timeoutMs?: number;
}

export interface HttpStepResult {
  status: number;
  /** status === expectStatus when one is given, else 2xx. */
  ok: boolean;
  durationMs: number;
  /** The first HTTP_BODY_EXCERPT_BYTES of the response, secrets and our header values replaced. */
  body: string;
  /** True when the key had finished before: recorded, not sent again. */
  repeated: boolean;
}

export interface ScriptStepInput {
  key: string;
  script: string;
  timeoutMs?: number;
}

export interface ScriptStepResult {
  /** null when a signal ended it (the timeout kills it). A non-zero exit is a result, not a failure. */
  exitCode: number | null;
  /** stdout and stderr in arrival order, cut at the shell's cap, secrets replaced. */
  output: string;
  truncated: boolean;
  timedOut: boolean;
  durationMs: number;
  /** True when the key had finished before: the recorded result, not a new run. */
  repeated: boolean;
}

export type StepKind = 'http' | 'script';

// ---------------------------------------------------------------------------------------------
// Failures
// ---------------------------------------------------------------------------------------------

/** The input does not validate: a retry sends the same input. */
export const STEP_INVALID_INPUT = 'StepInvalidInput';
/** The key was used before for another step (other kind, URL, method, body or script). */
export const STEP_KEY_REUSED = 'StepKeyReused';
/** A script attempt started and never recorded its end: it is not run again. */
export const STEP_INTERRUPTED = 'StepInterrupted';
/** The receiver answered a status that neither is expected nor may change on a retry (a 4xx, say). */
export const HTTP_STEP_FAILED = 'HttpStepFailed';
/** Network error, timeout, 5xx or 429: retried (the Idempotency-Key lets the receiver drop a repeat). */
export const HTTP_STEP_UNAVAILABLE = 'HttpStepUnavailable';
/** The script sandbox cannot run on this worker (not root, tools missing, a bad directory). */
export const SCRIPT_UNAVAILABLE = 'ScriptUnavailable';

export const STEP_NON_RETRYABLE_ERROR_TYPES = [
  STEP_INVALID_INPUT,
  STEP_KEY_REUSED,
  STEP_INTERRUPTED,
  HTTP_STEP_FAILED,
  SCRIPT_UNAVAILABLE,
] as const;

export const interruptedMessage = (key: string) =>
  `script step ${key} was interrupted (worker stopped) and is not re-run: check its effects by hand`;

// ---------------------------------------------------------------------------------------------
// Activity options for callers (the remediation workflow)
// ---------------------------------------------------------------------------------------------

/**
 * An attempt is bounded by the request's own timeout (5 minutes at most) plus reading the body;
 * heartbeats notice a dead worker within 30 s. Failures that may pass (network, 5xx, 429) are
 * retried with back-off for up to 15 minutes: safe, since every attempt carries the same
 * Idempotency-Key and a finished key is never sent again.
 */
export const HTTP_STEP_ACTIVITY_OPTIONS = {
  startToCloseTimeout: '6m',
  scheduleToCloseTimeout: '15m',
  heartbeatTimeout: '30s',
  retry: {
    initialInterval: '2s',
    backoffCoefficient: 2,
    maximumInterval: '1m',
    nonRetryableErrorTypes: [...STEP_NON_RETRYABLE_ERROR_TYPES],
  },
} satisfies ActivityTimeouts;

/** The least a step is given when its incident's remediation budget is (nearly) used up: one real try. */
export const STEP_BUDGET_FLOOR_MS = 60_000;

/**
 * A step's activity options bounded by the incident's remediation budget: its retries end when
 * the budget does (never sooner than STEP_BUDGET_FLOOR_MS after the step starts), so people are
 * not kept waiting on a service that does not answer. The options as they are without a budget,
 * or when their own bound ends first. `now`: when the step starts (epoch ms).
 */
export function boundedByBudget<T extends ActivityTimeouts>(
  options: T,
  budgetEndsAt: string | undefined,
  now: number,
): T {
  if (!budgetEndsAt) return options;
  const left = Math.floor(Math.max(STEP_BUDGET_FLOOR_MS, Date.parse(budgetEndsAt) - now));
  const own = options.scheduleToCloseTimeout ? parseDuration(options.scheduleToCloseTimeout) : Infinity;
  if (!(left < own)) return options;
  const bound = `${left}ms` as const;
  const attempt = options.startToCloseTimeout && parseDuration(options.startToCloseTimeout) > left;
  return { ...options, scheduleToCloseTimeout: bound, ...(attempt && { startToCloseTimeout: bound }) };
}

/**
 * A script may run 30 minutes; heartbeats every 3 s with a generous 30 s timeout, because a
 * missed heartbeat costs the step (the next attempt finds it started and refuses to re-run it).
 * Retries only cover what happens before the script starts (MongoDB away): the claim recorded
 * before running makes every later attempt answer the result or StepInterrupted.
 */
export const SCRIPT_STEP_ACTIVITY_OPTIONS = {
  startToCloseTimeout: '31m',
  scheduleToCloseTimeout: '40m',
  heartbeatTimeout: '30s',
  retry: {
    initialInterval: '2s',
    backoffCoefficient: 2,
    maximumInterval: '1m',
    nonRetryableErrorTypes: [...STEP_NON_RETRYABLE_ERROR_TYPES],
  },
} satisfies ActivityTimeouts;

// ---------------------------------------------------------------------------------------------
// HTTP rules
// ---------------------------------------------------------------------------------------------

/** The expectation met: the exact status when one is given, else any 2xx. */
export function statusMatches(status: number, expectStatus?: number): boolean {
  return expectStatus !== undefined ? status === expectStatus : status >= 200 && status < 300;
}

/** Statuses a later attempt may see differently: the receiver is down, overloaded or throttling. */
export function isRetryableStatus(status: number): boolean {
  return status >= 500 || status === 429;
}

/** What a step's URL shows in messages and records: no credentials, query or fragment (they may hold tokens). */
export function describeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return '(invalid URL)';
  }
}

/**
 * The Idempotency-Key value as draft-ietf-httpapi-idempotency-key-header defines it: an RFC 8941
 * sf-string (quoted, `"` and `\` escaped), e.g. `"RP-20261123-001/2"`.
 */
export function idempotencyKeyHeader(key: string): string {
  return `"${key.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/** Values this short are not scrubbed from bodies: they would blank ordinary words. */
const MIN_SCRUBBED_VALUE = 4;

/**
 * Text shown from a response (or a script): our own header values replaced wherever they
 * appear (a receiver may echo them), then every secret-looking value (domain/redact.ts).
 */
export function scrubText(text: string, headerValues: string[] = []): string {
  const values = [...new Set(headerValues.filter((v) => v.length >= MIN_SCRUBBED_VALUE))];
  // Longest first, so a value that contains another is replaced whole.
  values.sort((a, b) => b.length - a.length);
  const scrubbed = values.reduce((t, v) => t.split(v).join(REDACTED), text);
  return redactText(scrubbed);
}

/**
 * What a key was used for, hashed: a reused key must ask for the same step. Header names count,
 * their values do not (a hash of a short credential could be guessed back).
 */
export function stepFingerprint(kind: 'http', input: HttpStepInput): string;
export function stepFingerprint(kind: 'script', input: ScriptStepInput): string;
export function stepFingerprint(kind: StepKind, input: HttpStepInput | ScriptStepInput): string {
  const what =
    'script' in input
      ? { kind, script: input.script }
      : {
          kind,
          method: input.method,
          url: input.url,
          headers: Object.keys(input.headers ?? {})
            .map((h) => h.toLowerCase())
            .sort(),
          body: input.body ?? null,
          expectStatus: input.expectStatus ?? null,
        };
  return fingerprint(JSON.stringify(what));
}

/** `POST https://hooks.example.com/restart`, `script (120 bytes)`: what a step record shows people. */
export function describeHttpStep(input: { method: string; url: string }): string {
  return `${input.method} ${describeUrl(input.url)}`;
}
export const describeScriptStep = (script: string) => `script (${new TextEncoder().encode(script).length} bytes)`;

const TRUNCATION_NOTE = /\n\[output truncated: \d+ more bytes not shown\]$/;

/** Whether runShell cut the output (it appends this note; activities/shell.ts). */
export const outputTruncated = (output: string): boolean => TRUNCATION_NOTE.test(output);
