import { z } from 'zod';
import { redact } from '../domain/redact';
import { FINAL_PLAN_STATES } from '../domain/remediation';
import { approvalStatusSchema, planStateSchema } from '../contracts/remediation';
import { publicStep } from '../domain/remediation-plan';
import { userRoleSchema } from '../contracts/roles';
import { actionTypeSchema } from '../contracts/runbooks';
import { API_VERSION } from '../domain/envelope';
import { listSchema } from '../contracts/envelope';
import type { ApprovalRecord } from '../store/approvals';
import type { PlanAction, PlanRecord } from '../store/remediations';
import { iso } from './views';

/**
 * JSON shapes of remediation plans and approvals (spec: Remediation plan, Approval), plus the
 * extras that explain them (risk, why an approval was needed, what each step did). Params,
 * results and diffs pass through redact: a step's params are filled from incident labels and
 * insights, so a secret could have been templated into one.
 */

const isFinal = (p: Pick<PlanRecord, 'state'>) => FINAL_PLAN_STATES.includes(p.state);

/** An action as run: the spec's {type, params}, and what happened when it ran. */
function actionView(a: PlanAction) {
  return {
    type: a.type,
    params: publicStep(a).params, // never an HTTP step's headers or body, nor a script's text
    ...(a.description && { description: a.description }),
    ...(a.outcome && { outcome: a.outcome }),
    ...(a.result !== undefined && { result: redact(a.result) }),
  };
}

/** What GET /remediations reads of each plan: the fields planListItem renders. */
export const PLAN_LIST_FIELDS = [
  'name',
  'namespace',
  'issueRef',
  'attempt',
  'strategy',
  'state',
  'startedAt',
  'completedAt',
  'result',
  'agenticMode',
  'agenticStepCount',
  'actions',
  'creationTimestamp',
  'runbook',
  'riskScore',
  'approvalRequired',
  'approvalReasons',
  'approval',
  'cluster',
] as const satisfies readonly (keyof PlanRecord)[];

export function planListItem(p: Pick<PlanRecord, (typeof PLAN_LIST_FIELDS)[number]>) {
  return {
    name: p.name,
    namespace: p.namespace,
    issueRef: p.issueRef,
    attempt: p.attempt,
    strategy: p.strategy,
    state: p.state,
    startedAt: iso(p.startedAt),
    ...(isFinal(p) && p.completedAt && { completedAt: iso(p.completedAt) }),
    result: isFinal(p) ? p.result : '',
    agenticMode: p.agenticMode,
    agenticStepCount: p.agenticStepCount,
    actions: p.actions.map(actionView),
    creationTimestamp: iso(p.creationTimestamp),
    runbook: p.runbook,
    riskScore: p.riskScore,
    approvalRequired: p.approvalRequired,
    approvalReasons: p.approvalReasons,
    approval: p.approval,
    cluster: p.cluster,
  };
}

/** One plan: what it is to do (spec) and how far it got (status). */
export function planDetail(p: PlanRecord) {
  return {
    apiVersion: API_VERSION,
    kind: 'RemediationPlan',
    metadata: { name: p.name, namespace: p.namespace, creationTimestamp: iso(p.creationTimestamp) },
    spec: {
      issueRef: p.issueRef,
      cluster: p.cluster,
      attempt: p.attempt,
      strategy: p.strategy,
      runbook: p.runbook,
      agenticMode: p.agenticMode,
      actions: p.actions.map(actionView),
      riskScore: p.riskScore,
      approvalRequired: p.approvalRequired,
      approvalReasons: p.approvalReasons,
    },
    status: {
      state: p.state,
      startedAt: iso(p.startedAt),
      ...(isFinal(p) && p.completedAt && { completedAt: iso(p.completedAt) }),
      result: isFinal(p) ? p.result : '',
      agenticStepCount: p.agenticStepCount,
      approval: p.approval,
    },
  };
}

/** What GET /approvals reads of each approval: the fields approvalListItem renders (not the previews). */
export const APPROVAL_LIST_FIELDS = [
  'name',
  'namespace',
  'status',
  'incident',
  'action',
  'riskScore',
  'requiredRole',
  'runbook',
  'requestedAt',
  'expiresAt',
  'decidedAt',
  'decidedBy',
  'plan',
  'reasons',
  'comment',
  'expiryReason',
] as const satisfies readonly (keyof ApprovalRecord)[];

export function approvalListItem(a: Pick<ApprovalRecord, (typeof APPROVAL_LIST_FIELDS)[number]>) {
  return {
    name: a.name,
    namespace: a.namespace,
    status: a.status,
    incident: a.incident,
    action: a.action,
    riskScore: a.riskScore,
    requiredRole: a.requiredRole,
    runbook: a.runbook,
    requestedAt: iso(a.requestedAt),
    ...(a.status === 'pending' && { expiresAt: iso(a.expiresAt) }),
    ...(a.status !== 'pending' && a.decidedAt && { decidedAt: iso(a.decidedAt) }),
    ...(a.decidedBy && { decidedBy: a.decidedBy }),
    plan: a.plan,
    reasons: a.reasons,
    ...(a.comment && { comment: a.comment }),
    ...(a.expiryReason && { expiryReason: a.expiryReason }),
  };
}

/** One approval, with the previews of what it lets run. */
export function approvalDetail(a: ApprovalRecord) {
  return {
    apiVersion: API_VERSION,
    kind: 'Approval',
    ...approvalListItem(a),
    previews: a.previews.map((p) => ({
      step: p.step,
      action: p.action,
      target: p.target,
      summary: redact(p.summary),
      diff: redact(p.diff),
      dryRun: p.dryRun,
      ...(p.error && { error: redact(p.error) }),
    })),
  };
}

// ---------------------------------------------------------------------------------------------
// Response schemas (the OpenAPI document; schemathesis checks answers against them)
// ---------------------------------------------------------------------------------------------

const timestamp = z.string().datetime();

const planActionSchema = z.object({
  type: actionTypeSchema,
  params: z.record(z.unknown()).describe('the params as run (templates filled)'),
  description: z.string().optional(),
  outcome: z.enum(['ok', 'failed', 'undone', 'skipped']).optional().describe('absent until the step ran'),
  result: z.string().optional().describe('what the step did, in words; absent until it ran'),
});

const planFields = {
  riskScore: z.number().int().describe("the incident's risk plus each step's weight, capped at 100"),
  approvalRequired: z.boolean(),
  approvalReasons: z.array(z.string()).describe('why a person must approve; empty when none must'),
};
const completedAt = timestamp.optional().describe('absent until the plan is final (Completed, Failed, RolledBack)');
const planResult = z.string().describe('empty until the plan is final');
const approvalName = z.string().describe("the approval's name (APR-…), or empty when none was requested");

export const planListSchema = listSchema(
  'RemediationPlanList',
  z.object({
    name: z.string(),
    namespace: z.string(),
    issueRef: z.string().describe("the incident's name"),
    attempt: z.number().int(),
    strategy: z.string().describe('the runbook and its match tier, the insight it was generated from, or agentic'),
    state: planStateSchema,
    startedAt: timestamp,
    completedAt,
    result: planResult,
    agenticMode: z.boolean(),
    agenticStepCount: z.number().int(),
    actions: z.array(planActionSchema),
    creationTimestamp: timestamp,
    runbook: z.string().describe('empty for an agentic plan'),
    ...planFields,
    approval: approvalName,
    cluster: z.string(),
  }),
);

export const planDetailSchema = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal('RemediationPlan'),
  metadata: z.object({ name: z.string(), namespace: z.string(), creationTimestamp: timestamp }),
  spec: z.object({
    issueRef: z.string().describe("the incident's name"),
    cluster: z.string(),
    attempt: z.number().int(),
    strategy: z.string(),
    runbook: z.string(),
    agenticMode: z.boolean(),
    actions: z.array(planActionSchema).describe('in agentic mode, the actions the agent ran so far'),
    ...planFields,
  }),
  status: z.object({
    state: planStateSchema,
    startedAt: timestamp,
    completedAt,
    result: planResult,
    agenticStepCount: z.number().int(),
    approval: approvalName,
  }),
});

const approvalItemShape = {
  name: z.string(),
  namespace: z.string(),
  status: approvalStatusSchema,
  incident: z.string(),
  action: z.string().describe('what will be done, in words'),
  riskScore: z.number().int(),
  requiredRole: userRoleSchema.describe('the lowest role that may decide'),
  runbook: z.string(),
  requestedAt: timestamp,
  expiresAt: timestamp.optional().describe('present while pending'),
  decidedAt: timestamp.optional().describe('when it was approved, rejected or expired'),
  decidedBy: z.string().optional().describe('the token user who approved or rejected'),
  plan: z.string().describe("the remediation plan's name"),
  reasons: z.array(z.string()).describe('why a person must approve'),
  comment: z.string().optional().describe("the decider's comment or reason"),
  expiryReason: z.string().optional().describe('why it expired: no decision in time, or the incident was resolved'),
};

export const approvalListSchema = listSchema('ApprovalList', z.object(approvalItemShape));

export const approvalDetailSchema = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal('Approval'),
  ...approvalItemShape,
  previews: z
    .array(
      z.object({
        step: z.number().int(),
        action: z.string(),
        target: z.string(),
        summary: z.string(),
        diff: z.string().describe('what the step changes, as a diff of the object'),
        dryRun: z.boolean().describe("true when the cluster's server-side dry run produced the diff"),
        error: z.string().optional().describe('why no preview could be made'),
      }),
    )
    .describe('one per Kubernetes step the approval covers'),
});
