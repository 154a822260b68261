import { CancellationScope } from '@temporalio/workflow';
import { describeKubeResult } from '../../domain/remediation-plan';
import { failureText } from '../failure-text';
import type { PlanExecution, RemediationOutcome } from './state';
import { runKubeCall } from './steps';

/**
 * Undoes what the plan changed, newest step first, back to what the target was before the plan:
 * the plan's end state (RolledBack when everything that ran was undone) and its result.
 */
export async function rollBack(
  execution: PlanExecution,
  reason: string,
): Promise<[Extract<RemediationOutcome['state'], 'Failed' | 'RolledBack'>, string]> {
  const { plan, executed, records } = execution;
  return CancellationScope.nonCancellable(async () => {
    let undone = 0;
    const problems: string[] = [];
    for (const step of [...executed].reverse()) {
      if (step.undo.length === 0) continue;
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
    const rolledBack = undone > 0 && problems.length === 0;
    const tail =
      undone > 0 ? `; rolled back ${undone} step(s)` : executed.length > 0 ? '; nothing could be undone' : '';
    return [
      rolledBack ? 'RolledBack' : 'Failed',
      `${reason}${tail}${problems.length ? `; ${problems.join('; ')}` : ''}`,
    ];
  });
}
