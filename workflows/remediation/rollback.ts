import { CancellationScope, patched } from '@temporalio/workflow';
import { ROLLOUT_CHANGING_STEPS } from '../../domain/remediation';
import { describeKubeResult } from '../../domain/remediation-plan';
import { failureText } from '../failure-text';
import { NEVER_BACK_INTO_FAILURE } from '../patches';
import type { ExecutedStep, PlanExecution, RemediationOutcome } from './state';
import { runKubeCall } from './steps';

/**
 * Undoes what the plan changed, newest step first, back to what the target was before the plan:
 * the plan's end state (RolledBack when everything that ran was undone) and its result. A step
 * that changed the workload's template is left in place: the template before it is the one the
 * incident is about, and Foghorn never rolls forward into a template known to fail (a person
 * takes over instead). Scale changes are undone.
 */
export async function rollBack(
  execution: PlanExecution,
  reason: string,
): Promise<[Extract<RemediationOutcome['state'], 'Failed' | 'RolledBack'>, string]> {
  const { plan, executed, records } = execution;
  return CancellationScope.nonCancellable(async () => {
    let undone = 0;
    const problems: string[] = [];
    const kept: string[] = [];
    for (const step of [...executed].reverse()) {
      if (step.undo.length === 0) continue;
      if (changesTemplate(step)) {
        kept.push(`step ${step.index + 1} ${step.type}`);
        continue;
      }
      const lines: string[] = [];
      try {
        for (const back of step.undo) lines.push(describeKubeResult(await runKubeCall(back)));
        undone++;
        await records.recordStep({
          plan: plan.name,
          index: step.index,
          outcome: 'undone',
          result: lines.join('; '),
          params: {},
          type: step.type,
        });
      } catch (err) {
        problems.push(`step ${step.index + 1} ${step.type} could not be undone: ${failureText(err)}`);
      }
    }
    const rolledBack = undone > 0 && problems.length === 0 && kept.length === 0;
    const tail =
      undone > 0
        ? `; rolled back ${undone} step(s)`
        : executed.length > 0 && kept.length === 0
          ? '; nothing could be undone'
          : '';
    const left =
      kept.length > 0
        ? `; left in place: ${kept.join(', ')} (undoing it would bring back the template the incident is about)`
        : '';
    return [
      rolledBack ? 'RolledBack' : 'Failed',
      `${reason}${tail}${left}${problems.length ? `; ${problems.join('; ')}` : ''}`,
    ];
  });
}

/** A step whose undo would write the workload's template back (the patch guards older runs, which undid it). */
function changesTemplate(step: ExecutedStep): boolean {
  return (ROLLOUT_CHANGING_STEPS as readonly string[]).includes(step.type) && patched(NEVER_BACK_INTO_FAILURE);
}
