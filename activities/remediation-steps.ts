import { ApplicationFailure } from '@temporalio/common';
import type { z } from 'zod';
import type { Config } from '../config/env';
import { parseRetryAfter } from '../domain/delivery';
import {
  describeHttpStep,
  describeScriptStep,
  describeUrl,
  HTTP_BODY_EXCERPT_BYTES,
  HTTP_STEP_DEFAULT_TIMEOUT_MS,
  HTTP_STEP_FAILED,
  HTTP_STEP_UNAVAILABLE,
  idempotencyKeyHeader,
  interruptedMessage,
  isRetryableStatus,
  outputTruncated,
  SCRIPT_STEP_DEFAULT_TIMEOUT_MS,
  SCRIPT_UNAVAILABLE,
  scrubText,
  statusMatches,
  STEP_INTERRUPTED,
  STEP_INVALID_INPUT,
  STEP_KEY_REUSED,
  stepFingerprint,
  type HttpStepInput,
  type HttpStepResult,
  type ScriptStepInput,
  type ScriptStepResult,
  type StepKind,
} from '../domain/remediation-steps';
import { httpStepInput, scriptStepInput } from '../contracts/remediation';
import {
  claimStepRun,
  completeStepRun,
  findStepRun,
  recordStepResult,
  releaseStepRun,
  type StepRunRecord,
} from '../store/step-runs';
import { withHeartbeat } from './context';
import { configuredShell, runShell, ShellDirError } from './shell';

/**
 * The HttpRequest and RunScript steps of a remediation (DESIGN §8). A finished key answers its
 * recorded result (`repeated: true`) without acting again. An HTTP request may be sent more than
 * once (every attempt carries the same Idempotency-Key, so the receiver can drop a repeat); a
 * script never is: it is recorded `started` before it runs, and an attempt that finds it started
 * but unfinished refuses (StepInterrupted) instead of guessing what it did.
 */

/** Retry-After beyond this is not waited for: the policy's longest interval. */
const RETRY_AFTER_CAP_MS = 60_000;

function parseStepInput<S extends z.ZodTypeAny>(schema: S, raw: unknown): z.output<S> {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    // Paths and messages only, never the values (a header value may be a credential).
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || 'input'}: ${i.message}`).join('; ');
    throw ApplicationFailure.nonRetryable(`invalid step input: ${problems}`, STEP_INVALID_INPUT);
  }
  return parsed.data as z.output<S>;
}

/** A record found under the key must be for this very step. */
function checkSameStep(record: StepRunRecord<unknown>, kind: StepKind, fingerprint: string, target: string): void {
  if (record.kind !== kind || record.fingerprint !== fingerprint)
    throw ApplicationFailure.nonRetryable(
      `step key ${record.key} was already used for ${record.target}, not for this ${target}`,
      STEP_KEY_REUSED,
    );
}

// ---------------------------------------------------------------------------------------------
// HttpRequest
// ---------------------------------------------------------------------------------------------

type HttpInput = z.output<typeof httpStepInput>;

/** The failure of a finished request with an unexpected status; the result rides along as details. */
function httpStepFailed(input: HttpInput, result: HttpStepResult): ApplicationFailure {
  return ApplicationFailure.create({
    message: `${describeHttpStep(input)} answered ${result.status}, expected ${input.expectStatus ?? '2xx'}`,
    type: HTTP_STEP_FAILED,
    nonRetryable: true,
    details: [result],
  });
}

/** The first `max` bytes of a body, without reading the rest (it may be large or endless). */
async function readExcerpt(res: Response, max: number): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let kept = 0;
  try {
    while (kept < max) {
      const { done, value } = await reader.read();
      if (done) break;
      const part = value.subarray(0, max - kept);
      chunks.push(part);
      kept += part.length;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function requestHeaders(input: HttpInput): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(input.headers ?? {})) headers.set(name, value);
  if (!headers.has('user-agent')) headers.set('user-agent', 'foghorn-remediation');
  // Ours, whatever the runbook says: the key is what lets a receiver drop a repeat.
  headers.set('idempotency-key', idempotencyKeyHeader(input.key));
  return headers;
}

/** Why a request got no answer, without anything it carried: `timed out after 30s`, `ECONNREFUSED`. */
function networkFailure(err: unknown, input: HttpInput, timeoutMs: number): string {
  const e = err as Error & { cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError') return `timed out after ${timeoutMs / 1000}s`;
  const why = e.cause?.code ?? e.cause?.message ?? e.message;
  // Some fetch errors quote the URL: only its scheme, host and path may show.
  return scrubText(why.split(input.url).join(describeUrl(input.url)), Object.values(input.headers ?? {}));
}

async function sendHttpStep(input: HttpInput, signal: AbortSignal): Promise<HttpStepResult> {
  const timeoutMs = input.timeoutMs ?? HTTP_STEP_DEFAULT_TIMEOUT_MS;
  const headerValues = Object.values(input.headers ?? {});
  const what = describeHttpStep(input);
  const started = Date.now();
  let res: Response;
  let body: string;
  try {
    res = await fetch(input.url, {
      method: input.method,
      headers: requestHeaders(input),
      ...(input.body !== undefined && { body: input.body }),
      signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]),
      // A redirect is an answer, not followed: the step's headers (credentials) stay with its URL.
      redirect: 'manual',
    });
    body = await readExcerpt(res, HTTP_BODY_EXCERPT_BYTES);
  } catch (err) {
    if (signal.aborted) throw signal.reason; // the activity was cancelled: say so, not "network error"
    throw ApplicationFailure.retryable(
      `${what} failed: ${networkFailure(err, input, timeoutMs)}`,
      HTTP_STEP_UNAVAILABLE,
    );
  }
  const result: HttpStepResult = {
    status: res.status,
    ok: statusMatches(res.status, input.expectStatus),
    durationMs: Date.now() - started,
    body: scrubText(body, headerValues),
    repeated: false,
  };
  if (!result.ok && isRetryableStatus(res.status)) {
    const retryAfterMs = parseRetryAfter(res.headers.get('retry-after'), new Date());
    throw ApplicationFailure.create({
      message: `${what} answered ${res.status}, expected ${input.expectStatus ?? '2xx'}: retrying`,
      type: HTTP_STEP_UNAVAILABLE,
      details: [result],
      ...(retryAfterMs !== undefined && { nextRetryDelay: Math.min(retryAfterMs, RETRY_AFTER_CAP_MS) }),
    });
  }
  return result;
}

// ---------------------------------------------------------------------------------------------
// RunScript
// ---------------------------------------------------------------------------------------------

/** What a record found under a script's key answers: its result, or the refusal to run it again. */
function answerRecorded(record: StepRunRecord<ScriptStepResult>): ScriptStepResult {
  if (record.state === 'done' && record.result) return { ...record.result, repeated: true };
  throw ApplicationFailure.nonRetryable(interruptedMessage(record.key), STEP_INTERRUPTED);
}

export function createRemediationStepActivities(config: Config) {
  return {
    /**
     * One HttpRequest step. Answers the result when the status is the expected one; throws
     * HttpStepUnavailable (retryable) on a network error, a timeout, a 5xx or 429, and
     * HttpStepFailed (non-retryable, the result as details) on any other status.
     */
    async runHttpStep(raw: HttpStepInput): Promise<HttpStepResult> {
      const input = parseStepInput(httpStepInput, raw);
      const run = {
        key: input.key,
        kind: 'http' as const,
        fingerprint: stepFingerprint('http', input),
        target: describeHttpStep(input),
      };
      const answer = (record: StepRunRecord<HttpStepResult>): HttpStepResult => {
        checkSameStep(record, run.kind, run.fingerprint, run.target);
        const result = { ...record.result!, repeated: true };
        if (!result.ok) throw httpStepFailed(input, result);
        return result;
      };

      const found = await findStepRun<HttpStepResult>(input.key);
      if (found) return answer(found);
      const result = await withHeartbeat((signal) => sendHttpStep(input, signal));
      const recorded = await recordStepResult(run, result);
      // Another attempt may have finished first: the first recorded outcome is the step's.
      if (!recorded.ours) return answer(recorded.record);
      if (!result.ok) throw httpStepFailed(input, result);
      return result;
    },

    /**
     * One RunScript step in the agent shell's sandbox (user, network and directory from
     * FOGHORN_AGENT_SHELL_*), bounded by its own timeout and the shell's output cap. A non-zero
     * exit or a timeout is a result; the workflow decides what it means.
     *
     * FOGHORN_AGENT_SHELL=off does not stop it: that switch is about the chat agent, whose
     * commands come from whoever can write in the chat, while runbook scripts are written by
     * admins and run only through a plan (approved where its risk asks). The sandbox still
     * applies: where it cannot run (a worker that is not root), the step fails ScriptUnavailable.
     */
    async runScriptStep(raw: ScriptStepInput): Promise<ScriptStepResult> {
      const input = parseStepInput(scriptStepInput, raw);
      const run = {
        key: input.key,
        kind: 'script' as const,
        fingerprint: stepFingerprint('script', input),
        target: describeScriptStep(input.script),
      };
      const answer = (record: StepRunRecord<ScriptStepResult>) => {
        checkSameStep(record, run.kind, run.fingerprint, run.target);
        return answerRecorded(record);
      };

      const found = await findStepRun<ScriptStepResult>(input.key);
      if (found) return answer(found);
      const { shell, cwd } = configuredShell(config);
      if (!shell.available)
        throw ApplicationFailure.nonRetryable(
          `script step ${input.key} cannot run on this worker: ${shell.reason}`,
          SCRIPT_UNAVAILABLE,
        );
      // Recorded before it runs: from here on, no attempt runs this key again.
      const claim = await claimStepRun<ScriptStepResult>(run);
      if (!claim.claimed) return answer(claim.record);

      const timeoutMs = input.timeoutMs ?? SCRIPT_STEP_DEFAULT_TIMEOUT_MS;
      const started = Date.now();
      let shellRun;
      try {
        shellRun = await withHeartbeat(() => runShell(input.script, { timeoutMs, cwd, sandbox: shell.sandbox }));
      } catch (err) {
        // runShell throws only before the script starts (directory, spawn): a later attempt may run it.
        await releaseStepRun(input.key);
        if (err instanceof ShellDirError)
          throw ApplicationFailure.nonRetryable(
            `script step ${input.key} cannot run: ${err.message}`,
            SCRIPT_UNAVAILABLE,
          );
        throw err;
      }
      const result: ScriptStepResult = {
        exitCode: shellRun.exitCode,
        output: scrubText(shellRun.output),
        truncated: outputTruncated(shellRun.output),
        timedOut: shellRun.timedOut,
        durationMs: Date.now() - started,
        repeated: false,
      };
      await completeStepRun(input.key, result);
      return result;
    },
  };
}

export type RemediationStepActivities = ReturnType<typeof createRemediationStepActivities>;
