/**
 * One remediation attempt, run inside its incident's workflow (DESIGN §8): an approval when the
 * plan needs one, then its steps one activity each (keyed by plan + step) or the agent's loop,
 * then verification for the runbook's window, and the rollback of what can be undone when the fix
 * did not hold. Cancelled (a person resolved the incident) it stops after the step in flight and
 * records so. Every end is recorded: a plan is never left open.
 */
import { CancellationScope, isCancellation } from '@temporalio/workflow';
import type { PreparedPlan, Verdict } from '../../domain/remediation-plan';
import { failureText } from '../failure-text';
import { planStore } from './proxies';
import { runAgent } from './agent';
import { approvalText, askApproval } from './approval';
import { planRecords } from './records';
import { rollBack } from './rollback';
import { finish, moveTo, refused, type PlanExecution, type PlanRun, type RemediationOutcome } from './state';
import { runRunbookSteps } from './steps';
import { verifyFix } from './verification';

export type { PlanInbox, PlanRun, RemediationOutcome } from './state';

export async function runRemediation(plan: PreparedPlan, run: PlanRun): Promise<RemediationOutcome> {
  const execution: PlanExecution = {
    plan,
    inbox: run.inbox,
    records: planRecords(),
    publish: run.publish,
    state: 'Pending',
    published: run.published,
    fixedAt: new Date().toISOString(),
    executed: [],
  };
  // Made Failed (a template problem): its end is recorded on the timeline, nothing runs.
  if (plan.problem) return finish(execution, 'Failed', plan.problem);
  try {
    return await attempt(execution);
  } catch (err) {
    // Anything unexpected still ends the plan: undone where possible and recorded.
    if (!isCancellation(err))
      return finish(execution, ...(await rollBack(execution, `the plan failed: ${failureText(err)}`)));
    return cancelled(execution);
  }
}

async function attempt(execution: PlanExecution): Promise<RemediationOutcome> {
  const { plan } = execution;
  if (plan.approval.required && !plan.agentic) {
    const refusal = await approve(execution);
    if (refusal) return refusal;
  }
  await moveTo(execution, 'Executing', !!plan.recordedExecuting);
  if (plan.agentic) {
    const end = await runAgent(execution);
    if (end.kind === 'stop') return finish(execution, ...(await rollBack(execution, end.result)));
    if (end.kind === 'approval') return refused(execution, end);
  } else {
    const failed = await runRunbookSteps(execution);
    if (failed) return finish(execution, ...(await rollBack(execution, failed)));
  }
  // A runbook's move to Verifying was written with its last step's record.
  await moveTo(execution, 'Verifying', !plan.agentic && plan.actions.length > 0);
  const verdict = await verdictOf(execution);
  if (!verdict.passed) {
    await execution.records.recordVerification({ plan: plan.name, ...verdict });
    return finish(execution, ...(await rollBack(execution, `verification failed: ${verdict.summary}`)));
  }
  // A verified runbook's Verification event is written with its end.
  if (!plan.agentic) return finish(execution, 'Completed', `verified: ${verdict.summary}`, {}, verdict);
  await execution.records.recordVerification({ plan: plan.name, ...verdict });
  await planStore.offerRunbook({ plan: plan.name });
  return finish(execution, 'Completed', `verified: ${verdict.summary}`);
}

/** The plan's approval gate: undefined when approved, else the plan's end. */
async function approve(execution: PlanExecution): Promise<RemediationOutcome | undefined> {
  const { plan, inbox } = execution;
  if (inbox.sourceCleared)
    return finish(execution, 'Failed', 'the alert resolved at source before an approval was asked; nothing ran', {
      approval: 'expired',
      sourceResolved: true,
    });
  const decision = await askApproval(execution, {
    key: plan.name,
    actions: plan.actions,
    need: plan.approval,
    risk: plan.riskScore,
  });
  if (decision.status === 'approved') return undefined;
  return refused(execution, {
    status: decision.status,
    name: decision.name,
    result: approvalText(decision, decision.name),
  });
}

/** The verification's verdict; a cluster that could not be read (down, forbidden, gone) proves nothing. */
async function verdictOf(execution: PlanExecution): Promise<Verdict> {
  try {
    return await verifyFix(execution);
  } catch (err) {
    if (isCancellation(err)) throw err;
    const why = failureText(err);
    return { passed: false, checked: [], seen: [why], summary: `verification could not run: ${why}` };
  }
}

/**
 * Cancelled because a person resolved the incident. An approval asked for whose workflow had not
 * answered would stay `pending` for ever (listed, answering 503): it expires (a no-op once decided).
 */
async function cancelled(execution: PlanExecution): Promise<RemediationOutcome> {
  const orphan = execution.undecided;
  if (orphan)
    await CancellationScope.nonCancellable(() =>
      planStore.expireApproval({ name: orphan, at: new Date().toISOString(), reason: 'incident resolved' }),
    );
  return finish(
    execution,
    'Failed',
    `cancelled in state ${execution.state}: the incident was resolved while the plan ran (no further step ran; ${execution.executed.length} step(s) stayed applied)`,
  );
}
