import { ApplicationFailure, CancellationScope, CancelledFailure, isCancellation, sleep } from '@temporalio/workflow';
import { parseDuration } from '../../domain/duration';
import { isKubeAction, type PlanState } from '../../domain/remediation';
import { describeKubeResult, undoInput, type KubeStepInput, type KubeStepResult } from '../../domain/remediation-plan';
import type { RunbookAction } from '../../domain/runbook';
import { failureText } from '../failure-text';
import { kube, notifySteps, scriptSteps, stepResolver, stepsWithinBudget } from './proxies';
import type { ExecutedStep, PlanExecution } from './state';

/**
 * Runs a runbook's steps in order; the reason the plan failed, or undefined when every step ran.
 * Steps that change things finish once started (not cancellable); a cancel is seen between them.
 * A Wait changes nothing: it is cut short. The move to Verifying rides with the last step's record.
 */
export async function runRunbookSteps(execution: PlanExecution): Promise<string | undefined> {
  const { actions } = execution.plan;
  for (const [index, action] of actions.entries()) {
    if (CancellationScope.current().consideredCancelled) throw new CancelledFailure('the plan was cancelled');
    const then = index === actions.length - 1 ? 'Verifying' : undefined;
    try {
      if (action.type === 'Wait') await runStep(execution, index, action, then);
      else await CancellationScope.nonCancellable(() => runStep(execution, index, action, then));
    } catch (err) {
      if (isCancellation(err)) throw err;
      return `step ${index + 1} ${action.type} failed: ${failureText(err)}`;
    }
  }
  return undefined;
}

/**
 * Runs step `index` and records it (`ActionExecuted` + audit, and the plan's move to `then` when
 * it succeeded); throws when the step failed. A runbook goes on while the record is written (in
 * order, before the next record); an agentic plan's next decision reads it, so it waits.
 */
export async function runStep(
  execution: PlanExecution,
  index: number,
  action: RunbookAction,
  then?: PlanState,
): Promise<string> {
  const { plan, records } = execution;
  const record = { plan: plan.name, index, params: action.params as Record<string, unknown>, type: action.type };
  let result: string;
  try {
    result = await execute(execution, index, action);
  } catch (err) {
    if (isCancellation(err)) throw err; // a Wait cut short by a resolve did not fail: no record
    await records.recordStep({ ...record, outcome: 'failed', result: failureText(err) });
    throw err;
  }
  const written = records.recordStep({ ...record, outcome: 'ok', result, ...(then && { then }) });
  // A record that failed fails the plan's next write instead.
  if (plan.agentic) await written;
  else written.catch(() => undefined);
  return result;
}

async function execute(execution: PlanExecution, index: number, action: RunbookAction): Promise<string> {
  const { plan } = execution;
  if (isKubeAction(action.type)) return executeKubeStep(execution, index, action.type);
  switch (action.type) {
    case 'Wait':
      await sleep(parseDuration(action.params.duration));
      return `waited ${action.params.duration}`;
    case 'Notify':
      return notifySteps.notifyStep({ plan: plan.name, index });
    case 'HttpRequest': {
      const p = action.params;
      const r = await stepsWithinBudget(execution.inbox.budgetEndsAt).http.runHttpPlanStep({ plan: plan.name, index });
      if (!r.ok)
        throw ApplicationFailure.nonRetryable(
          `${p.method} answered ${r.status}${p.expectStatus ? ` (expected ${p.expectStatus})` : ''}`,
        );
      return `${p.method} answered ${r.status} in ${r.durationMs} ms`;
    }
    case 'RunScript': {
      const r = await scriptSteps.runScriptPlanStep({ plan: plan.name, index });
      if (r.exitCode !== 0)
        throw ApplicationFailure.nonRetryable(
          `script ${r.timedOut ? 'timed out' : `exited ${r.exitCode}`}: ${r.output.slice(-300)}`,
        );
      return `script exited 0 in ${r.durationMs} ms${r.output ? `: ${r.output.slice(-300)}` : ''}`;
    }
    default:
      throw ApplicationFailure.nonRetryable(`${action.type} cannot run here`);
  }
}

/** A Kubernetes step: resolved against the cluster, each of its calls run and made undoable. */
async function executeKubeStep(execution: PlanExecution, index: number, type: string): Promise<string> {
  const { plan } = execution;
  const resolved = await stepResolver.resolveKubeStep({ plan: plan.name, index });
  const { kube: within } = stepsWithinBudget(execution.inbox.budgetEndsAt);
  const lines: string[] = [];
  // Recorded before the first call: a step that fails half way (one container of two) is undone
  // as far as it got.
  const done: ExecutedStep = { index, type, undo: [] };
  execution.executed.push(done);
  for (const [n, step] of resolved.inputs.entries()) {
    const r = await runKubeCall(step, within);
    lines.push(describeKubeResult(r));
    const back = undoInput(step, r, resolved.revisionBefore, `${plan.name}/undo/${index}/${n}`);
    if (back) done.undo.push(back);
  }
  execution.fixedAt = new Date().toISOString();
  return lines.join('; ');
}

/** One Kubernetes call; `via`: the proxy bounded by the budget for a step (an undo takes the shared one). */
export async function runKubeCall(step: KubeStepInput, via: typeof kube = kube): Promise<KubeStepResult> {
  switch (step.action) {
    case 'RestartDeployment':
      return via.kubeRestartDeployment(step.input);
    case 'ScaleDeployment':
      return via.kubeScaleDeployment(step.input);
    case 'AdjustResources':
      return via.kubeAdjustResources(step.input);
    case 'RollbackDeployment':
      return via.kubeRollbackDeployment(step.input);
    case 'DeletePod':
      return via.kubeDeletePod(step.input);
  }
}
