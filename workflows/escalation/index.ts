/**
 * The escalation ladder of one incident (DESIGN §8), workflow id `<incident>-escalation`, a child
 * of the incident workflow that outlives it only to finish its last deliveries. L1 is notified at
 * once, each next level after the previous one's `escalateAfter`, the last level again every
 * `repeat.every`. Acknowledge stops the climb (PagerDuty and webhooks hear it); snooze freezes
 * the clock and mutes everything until it ends, then the ladder goes on where it was; a
 * maintenance window of the namespace holds the next notification until it closes; resolve ends
 * the ladder after telling the channels that track state. Deliveries run beside the clock: a
 * receiver that is down never delays the next level, an acknowledge or a resolve.
 */
import { allHandlersFinished, condition, continueAsNew, setHandler } from '@temporalio/workflow';
import { nextRung } from '../../domain/escalation-policy';
import {
  ladderAcknowledgedSignal,
  ladderResolvedSignal,
  ladderSnoozedSignal,
  ladderStateQuery,
} from '../escalation-messages';
import { holdWhileQuiet, runClock } from './holds';
import { mirror, notifyRung } from './rungs';
import {
  ladderReasonSignal,
  muted,
  publish,
  startLadderRun,
  stopped,
  timeToContinue,
  type EscalationWorkflowInput,
  type LadderRun,
} from './state';

export type { EscalationWorkflowInput } from './state';
export { ladderReasonSignal } from './state';

export async function escalationWorkflow(input: EscalationWorkflowInput): Promise<void> {
  const run = startLadderRun(input);
  installHandlers(run);
  if (!input.carried) await notifyFirstLevel(run);
  await climb(run);
  publish(run, 'resolved');
  mirror(run, 'incident.resolved');
  await condition(() => run.queue.idle() && allHandlersFinished());
}

function installHandlers(run: LadderRun): void {
  setHandler(ladderStateQuery, () => ({
    level: run.state === 'starting' ? 0 : run.level + 1,
    attempt: run.attempt,
    state: run.state,
  }));
  setHandler(ladderAcknowledgedSignal, () => void (run.acknowledged = true));
  setHandler(ladderSnoozedSignal, ({ until }) => void (run.snoozeUntil = Date.parse(until)));
  setHandler(ladderResolvedSignal, () => void (run.resolved = true));
  setHandler(ladderReasonSignal, ({ reason }) => void (run.reason = reason));
}

/**
 * L1 goes out even when someone acknowledged while automation still tried: automation gave up.
 * Its endpoints read by the triage: no window held the namespace then (a snooze still holds).
 */
async function notifyFirstLevel(run: LadderRun): Promise<void> {
  const level1 = muted(run) ? undefined : run.input.level1;
  if (!level1) await holdWhileQuiet(run, () => run.resolved);
  if (!run.resolved) await notifyRung(run, true, level1);
}

/** Up the ladder until resolved: each rung after its wait, held while snoozed or in maintenance. */
async function climb(run: LadderRun): Promise<void> {
  while (!run.resolved) {
    if (run.acknowledged) {
      if (!run.acknowledgeSent) {
        run.acknowledgeSent = true;
        mirror(run, 'incident.acknowledged');
      }
      publish(run, 'acknowledged');
      await condition(() => run.resolved || timeToContinue(run));
      if (!run.resolved) await continueNow(run);
      return;
    }
    const next = nextRung(run.input.ladder, { level: run.level, attempt: run.attempt });
    if (!next) {
      publish(run, 'exhausted'); // the last level's repeats are used up: waiting for a person
      await condition(() => stopped(run) || timeToContinue(run));
      if (!stopped(run)) await continueNow(run);
      continue;
    }
    run.remainingMs ??= next.waitMs;
    if (!(await runClock(run))) {
      if (!stopped(run) && timeToContinue(run)) await continueNow(run);
      continue;
    }
    run.remainingMs = undefined;
    run.level = next.level;
    run.attempt = next.attempt;
    await holdWhileQuiet(run);
    if (!stopped(run)) await notifyRung(run);
  }
}

/** Continues as new once no delivery is in flight, carrying where the ladder is. */
async function continueNow(run: LadderRun): Promise<never> {
  await condition(() => run.queue.idle() && allHandlersFinished());
  const { input, acknowledged, snoozeUntil, level, attempt, remainingMs, notified, acknowledgeSent, heldFor } = run;
  return continueAsNew<typeof escalationWorkflow>({
    ...input,
    reason: run.reason,
    acknowledged,
    ...(snoozeUntil > 0 && { snoozeUntil: new Date(snoozeUntil).toISOString() }),
    carried: { level, attempt, remainingMs, notified, acknowledgeSent, ...(heldFor && { heldFor }) },
  });
}
