import type { ActivityOptions, LocalActivityOptions } from '@temporalio/common';
import { fingerprint } from './fingerprint';
import { z } from 'zod';
import { actionKeySchema } from './kube-actions';
import { redactText, REDACTED } from './redact';

/**
 * The HttpRequest and RunScript steps of a remediation (DESIGN §8) as activity inputs and
 * results. Each input carries the step's idempotency `key` (plan + step index): a finished key
 * answers its recorded result without acting again, and a script is never run twice.
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

export const httpStepInput = z
  .object({
    key: actionKeySchema,
    method: z.enum(HTTP_METHODS),
    url: z
      .string()
      .url()
      .refine((u) => /^https?:\/\//i.test(u), 'must be an http:// or https:// URL')
      // fetch() refuses them too; a credential belongs in a header, which no message shows.
      .refine((u) => !/^[a-z]+:\/\/[^/?#]*@/i.test(u), 'must not hold credentials (user:password@): use a header'),
    headers: z
      .record(
        z.string().regex(/^[A-Za-z0-9-]+$/, 'must be an HTTP header name'),
        // fetch() would refuse it with the value in its message: refuse it here, without.
        z.string().refine((v) => !/[\0\r\n]/.test(v), 'must not contain line breaks or NUL'),
      )
      .optional(),
    body: z.string().optional(),
    expectStatus: z.number().int().min(100).max(599).optional(),
    timeoutMs: z.number().int().min(1).max(HTTP_STEP_MAX_TIMEOUT_MS).optional(),
  })
  .strict()
  .refine((p) => !(p.method === 'GET' && p.body !== undefined), {
    message: 'a GET request cannot have a body',
    path: ['body'],
  });
export type HttpStepInput = z.input<typeof httpStepInput>;

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

export const scriptStepInput = z
  .object({
    key: actionKeySchema,
    script: z.string().min(1).max(10_000),
    timeoutMs: z.number().int().min(1).max(SCRIPT_STEP_MAX_TIMEOUT_MS).optional(),
  })
  .strict();
export type ScriptStepInput = z.input<typeof scriptStepInput>;

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
} satisfies ActivityOptions;

/**
 * The same step as a local activity (a plan's HttpRequest steps since release-24): no heartbeat
 * (the workflow task's own timeout watches the worker), and back-offs over 10 s wait in a durable
 * timer, so a receiver down for minutes does not hold the workflow task open.
 */
export const HTTP_STEP_LOCAL_ACTIVITY_OPTIONS = {
  startToCloseTimeout: HTTP_STEP_ACTIVITY_OPTIONS.startToCloseTimeout,
  scheduleToCloseTimeout: HTTP_STEP_ACTIVITY_OPTIONS.scheduleToCloseTimeout,
  localRetryThreshold: '10s',
  retry: HTTP_STEP_ACTIVITY_OPTIONS.retry,
} satisfies LocalActivityOptions;

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
} satisfies ActivityOptions;

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
export function stepFingerprint(kind: 'http', input: z.output<typeof httpStepInput>): string;
export function stepFingerprint(kind: 'script', input: z.output<typeof scriptStepInput>): string;
export function stepFingerprint(
  kind: StepKind,
  input: z.output<typeof httpStepInput> | z.output<typeof scriptStepInput>,
): string {
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
