import { z } from 'zod';
import { APPROVAL_STATUSES, fillSteps, PLAN_STATES } from '../domain/remediation';
import {
  HTTP_METHODS,
  HTTP_STEP_MAX_TIMEOUT_MS,
  SCRIPT_STEP_MAX_TIMEOUT_MS,
  type HttpStepInput,
  type ScriptStepInput,
} from '../domain/remediation-steps';
import type { RunbookAction } from '../domain/runbook';
import { actionKeySchema } from './kube-actions';
import { actionSchema } from './runbooks';
import { sameType } from './type-check';

/**
 * The remediation engine at its edges (DESIGN §8): plan and approval states as the API filters
 * by them, the HttpRequest and RunScript step inputs their activities validate, and runbook
 * steps validated again once their templates are filled or when an insight suggests them.
 */

export const planStateSchema = z.enum(PLAN_STATES);
export const approvalStatusSchema = z.enum(APPROVAL_STATUSES);

// ---------------------------------------------------------------------------------------------
// Step inputs (domain/remediation-steps.ts)
// ---------------------------------------------------------------------------------------------

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
sameType<z.input<typeof httpStepInput>, HttpStepInput>(true);
sameType<z.output<typeof httpStepInput>, HttpStepInput>(true);

export const scriptStepInput = z
  .object({
    key: actionKeySchema,
    script: z.string().min(1).max(10_000),
    timeoutMs: z.number().int().min(1).max(SCRIPT_STEP_MAX_TIMEOUT_MS).optional(),
  })
  .strict();
sameType<z.input<typeof scriptStepInput>, ScriptStepInput>(true);
sameType<z.output<typeof scriptStepInput>, ScriptStepInput>(true);

// ---------------------------------------------------------------------------------------------
// Runbook steps from an insight, and after their templates are filled
// ---------------------------------------------------------------------------------------------

interface Suggestion {
  action: string;
  params: Record<string, unknown>;
  description?: string;
}

/** Whether a suggested action parses as a runbook step (a bad suggestion is worse than none). */
export const isRunbookStep = (s: Suggestion): boolean =>
  actionSchema.safeParse({ type: s.action, params: s.params, description: s.description }).success;

/**
 * The insight's suggested actions as runbook steps: each one that parses as a runbook action
 * (the same schema an admin's runbook passes) is kept, in order; the rest are reported.
 */
export function stepsFromSuggestions(suggested: readonly Suggestion[]): {
  steps: RunbookAction[];
  dropped: string[];
} {
  const steps: RunbookAction[] = [];
  const dropped: string[] = [];
  for (const s of suggested) {
    const parsed = actionSchema.safeParse({ type: s.action, params: s.params });
    if (parsed.success) steps.push(parsed.data);
    else dropped.push(`${s.action}: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  }
  return { steps, dropped };
}

/**
 * A runbook's steps with their templates filled (domain/remediation.ts fillSteps) and each step
 * validated again: the list of actions to run, or the reason the plan cannot start (nothing has
 * run yet).
 */
export function renderSteps(
  steps: readonly RunbookAction[],
  vars: Readonly<Record<string, string>>,
): { ok: true; actions: RunbookAction[] } | { ok: false; problem: string } {
  const filled = fillSteps(steps, vars);
  if (!filled.ok) return filled;
  const actions: RunbookAction[] = [];
  for (const [i, step] of filled.filled.entries()) {
    const parsed = actionSchema.safeParse(step);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return {
        ok: false,
        problem: `step ${i + 1} (${(step as RunbookAction).type}) is invalid after filling its templates: ${issue?.path.join('.') || 'params'}: ${issue?.message}; no step was run`,
      };
    }
    actions.push(parsed.data);
  }
  return { ok: true, actions };
}
