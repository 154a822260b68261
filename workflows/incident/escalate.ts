import { ParentClosePolicy, startChild } from '@temporalio/workflow';
import type { Escalated } from '../../activities/incident-stages';
import type { Endpoint } from '../../activities/notifications';
import { escalationMove, escalationReason, type Ladder } from '../../domain/escalation-policy';
import { escalationWorkflow, ladderReasonSignal } from '../escalation';
import { ladderAcknowledgedSignal, ladderSnoozedSignal } from '../escalation-messages';
import { ESCALATION_STATE, INCIDENT, NAMESPACE } from '../search-attributes';
import { incidentStore } from './proxies';
import { tellLadder } from './handlers';
import { isResolved, ladderId, moveTo, publish, type IncidentRun } from './state';

/**
 * Escalated (DESIGN §8): the incident's escalation policy pages people through its ladder, a
 * child workflow; the policy `none` ends the incident `Failed` instead. `message`: why automation
 * gave up, ending "; escalated to on-call". A ladder the remediation budget started already
 * (budget.ts) is not started again — nobody is paged twice for a level —, only told why its next
 * levels are paged now.
 */
export async function escalate(run: IncidentRun, message: string): Promise<void> {
  if (isResolved(run)) return;
  const why = escalationReason(message);
  const choice = await incidentStore.chooseEscalation({ incident: run.name });
  const move = escalationMove(message, choice.none, why);
  await moveTo(run, move.state, move.event);
  if (choice.none) return;
  if (run.ladderStarted) await tellLadder(run, ladderReasonSignal, { reason: why });
  else await startLadder(run, choice.ladder, why);
}

/** The triage escalated (or, under the policy `none`, failed) the incident: the run follows. */
export async function escalatedByTriage(run: IncidentRun, escalated: Escalated): Promise<void> {
  if (isResolved(run)) return; // a resolve landed after the triage's move: it stands
  run.live.state = escalated.none ? 'Failed' : 'Escalated';
  publish(run);
  if (!escalated.none) await startLadder(run, escalated.ladder, escalationReason(escalated.message), escalated.level1);
}

/** Starts the ladder; `level1`: L1's endpoints, when the triage read them. */
export async function startLadder(run: IncidentRun, ladder: Ladder, why: string, level1?: Endpoint[]): Promise<void> {
  if (isResolved(run)) return;
  const { live, input } = run;
  const told = { acknowledged: live.acknowledged, snoozeUntil: live.snoozeUntil };
  await startChild(escalationWorkflow, {
    workflowId: ladderId(run),
    args: [
      {
        incident: run.name,
        namespace: input.namespace,
        ladder,
        reason: why,
        acknowledged: told.acknowledged,
        ...(told.snoozeUntil && { snoozeUntil: told.snoozeUntil }),
        ...(level1 && { level1 }),
      },
    ],
    // It finishes its last deliveries (the resolve to PagerDuty) after the incident completes.
    parentClosePolicy: ParentClosePolicy.ABANDON,
    typedSearchAttributes: [
      { key: ESCALATION_STATE, value: 'starting' },
      { key: INCIDENT, value: run.name },
      { key: NAMESPACE, value: input.namespace },
    ],
  });
  run.ladderStarted = true;
  // What changed while the child was starting is told now.
  if (live.acknowledged && !told.acknowledged)
    await tellLadder(run, ladderAcknowledgedSignal, { by: live.acknowledgedBy ?? '', at: live.acknowledgedAt ?? '' });
  if (live.snoozeUntil && live.snoozeUntil !== told.snoozeUntil)
    await tellLadder(run, ladderSnoozedSignal, { until: live.snoozeUntil });
}
