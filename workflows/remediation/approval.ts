import { CancellationScope, condition, executeChild, isCancellation } from '@temporalio/workflow';
import type { ApprovalOutcome } from '../../domain/approval-requests';
import { isKubeAction } from '../../domain/remediation';
import { publicStep, type PreparedPlan } from '../../domain/remediation-plan';
import type { RunbookAction } from '../../domain/runbook';
import { approvalWorkflow } from '../approval';
import { failureText } from '../failure-text';
import { kubeReads, planStore, stepResolver } from './proxies';
import type { PlanExecution } from './state';

export type Decision = ApprovalOutcome & { name: string };

/** What a person is asked to approve: the steps, the risk, and who may approve. */
export interface ApprovalAsk {
  /** The approval's idempotency key: the plan's name, or `<plan>/<agent step>`. */
  key: string;
  actions: RunbookAction[];
  need: PreparedPlan['approval'];
  risk: number;
  /** The steps' indexes in the plan record (an agent's action is appended to it). */
  indexes?: number[];
}

/**
 * Asks for an approval and waits for its workflow's outcome. The request carries a preview of
 * what each Kubernetes step changes; the wait ends early when the alert clears at source
 * (nothing ran, nothing is left to approve).
 */
export async function askApproval(execution: PlanExecution, ask: ApprovalAsk): Promise<Decision> {
  const { plan, inbox } = execution;
  const previews = await previewSteps(execution, ask.actions, ask.indexes ?? ask.actions.map((_, i) => i));
  // Not cancellable: once the record may exist, we must know its name to expire it.
  const request = await CancellationScope.nonCancellable(() =>
    planStore.requestApproval({
      key: ask.key,
      incident: plan.incident,
      namespace: plan.namespace,
      plan: plan.name,
      action: ask.actions.map((a) => describeAction(publicStep(a))).join(', then '),
      riskScore: ask.risk,
      requiredRole: ask.need.requiredRole,
      runbook: plan.runbook,
      reasons: ask.need.reasons,
      previews,
      ttlMs: plan.approvalTtlMs,
    }),
  );
  execution.undecided = request.name;
  await execution.records.setPlanState({ plan: plan.name, state: 'Pending', approval: request.name });
  const waiting = new CancellationScope();
  const decided = waiting.run(() =>
    executeChild(approvalWorkflow, {
      workflowId: request.name,
      args: [
        {
          name: request.name,
          incident: plan.incident,
          namespace: plan.namespace,
          plan: plan.name,
          requiredRole: ask.need.requiredRole,
          ttlMs: plan.approvalTtlMs,
          expiresAt: request.expiresAt,
        },
      ],
    }),
  );
  // (Rejected when the plan itself is cancelled: the scope is cancelled with it, nothing to do.)
  void condition(() => inbox.sourceCleared).then(
    () => waiting.cancel(),
    () => undefined,
  );
  let outcome: ApprovalOutcome;
  try {
    outcome = await decided;
  } catch (err) {
    if (!(inbox.sourceCleared && isCancellation(err))) throw err;
    // Cancelled before its workflow could answer: the record must not stay pending.
    const at = new Date().toISOString();
    await CancellationScope.nonCancellable(() =>
      planStore.expireApproval({ name: request.name, at, reason: 'the alert resolved at source' }),
    );
    outcome = { status: 'expired', reason: 'incident resolved' };
  }
  if (inbox.sourceCleared && outcome.status === 'expired')
    outcome = { ...outcome, reason: 'the alert resolved at source' };
  execution.undecided = undefined;
  return { ...outcome, name: request.name };
}

/** What each Kubernetes step would change (a dry run); a step that cannot be previewed says why. */
async function previewSteps(execution: PlanExecution, actions: RunbookAction[], indexes: number[]) {
  const previews = [];
  for (const [n, action] of actions.entries()) {
    const index = indexes[n];
    if (!isKubeAction(action.type)) continue;
    try {
      const resolved = await stepResolver.resolveKubeStep({ plan: execution.plan.name, index });
      for (const step of resolved.inputs) {
        const { key: _key, ...input } = step.input;
        const preview = await kubeReads.kubePreviewAction({ action: step.action, ...input } as never);
        previews.push({ step: index + 1, action: step.action, ...preview });
      }
    } catch (err) {
      if (isCancellation(err)) throw err;
      previews.push({
        step: index + 1,
        action: action.type,
        target: '',
        summary: 'no preview',
        diff: '',
        dryRun: false,
        error: failureText(err),
      });
    }
  }
  return previews;
}

/** `approval APR-… rejected by bob: not now` / `approval APR-… expired: no decision within 30m`. */
export function approvalText(outcome: ApprovalOutcome, name: string): string {
  if (outcome.status === 'expired') return `approval ${name} expired: ${outcome.reason ?? 'no decision in time'}`;
  return `approval ${name} ${outcome.status} by ${outcome.decidedBy}${outcome.comment ? `: ${outcome.comment}` : ''}`;
}

/**
 * `ScaleDeployment {"replicas":3}` for the approval's `action` text, which is stored, listed by
 * GET /approvals, put on the timeline and sent to chat (so only a step's public form, publicStep).
 */
function describeAction(a: RunbookAction): string {
  if (a.type === 'HttpRequest') return `HttpRequest ${a.params.method} ${a.params.url}`;
  const params = JSON.stringify(a.params);
  return params === '{}' ? a.type : `${a.type} ${params}`;
}
