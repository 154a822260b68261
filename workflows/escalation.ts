import {
  allHandlersFinished,
  condition,
  continueAsNew,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { Endpoint } from '../activities/notifications';
import { nextRung, type Ladder } from '../domain/escalation-policy';
import type { NotificationEvent } from '../domain/notification-formats';
import {
  ladderAcknowledgedSignal,
  ladderResolvedSignal,
  ladderSnoozedSignal,
  ladderStateQuery,
} from './escalation-messages';
import { laneOf, notes, notificationQueue } from './notify';
import { ESCALATION_STATE, INCIDENT, NAMESPACE } from './search-attributes';

/** Re-check an active maintenance window this often: it may be edited or removed meanwhile. */
const MAINTENANCE_RECHECK_MS = 5 * 60_000;

export interface EscalationWorkflowInput {
  incident: string;
  namespace: string;
  /** The policy's timings only: targets are read by the activities, never carried. */
  ladder: Ladder;
  /** Why automation gave up: the notifications say it. */
  reason: string;
  acknowledged: boolean;
  snoozeUntil?: string;
  /**
   * L1's endpoints, read by the triage that escalated (no maintenance window held the namespace):
   * the first rung goes out without reading them again. Absent, the ladder reads them itself.
   */
  level1?: Endpoint[];
  /** Carried across continue-as-new. */
  carried?: {
    level: number;
    attempt: number;
    remainingMs?: number;
    notified: Endpoint[];
    acknowledgeSent: boolean;
    heldFor?: string;
  };
}

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
export async function escalationWorkflow(input: EscalationWorkflowInput): Promise<void> {
  const { incident, ladder, carried } = input;
  let acknowledged = input.acknowledged;
  let snoozeUntil = input.snoozeUntil ? Date.parse(input.snoozeUntil) : 0;
  let resolved = false;
  let level = carried?.level ?? 0; // 0-based, the level notified last
  let attempt = carried?.attempt ?? 1;
  let remainingMs = carried?.remainingMs;
  const notified: Endpoint[] = carried?.notified ?? [];
  let acknowledgeSent = carried?.acknowledgeSent ?? false;
  let heldFor = carried?.heldFor;
  let state = 'starting';
  const queue = notificationQueue(incident);

  const publish = (next: string) => {
    if (next === state) return;
    state = next;
    upsertSearchAttributes([
      { key: ESCALATION_STATE, value: state },
      { key: INCIDENT, value: incident },
      { key: NAMESPACE, value: input.namespace },
    ]);
  };
  setHandler(ladderStateQuery, () => ({ level: state === 'starting' ? 0 : level + 1, attempt, state }));
  setHandler(ladderAcknowledgedSignal, () => void (acknowledged = true));
  setHandler(ladderSnoozedSignal, ({ until }) => void (snoozeUntil = Date.parse(until)));
  setHandler(ladderResolvedSignal, () => void (resolved = true));

  const muted = () => snoozeUntil > Date.now();
  const stopped = () => resolved || acknowledged;
  const idle = queue.idle;
  const timeToContinue = () => workflowInfo().continueAsNewSuggested && idle();

  /**
   * `first`: L1 goes out even to an incident acknowledged before it escalated (automation gave up:
   * that is news). `read`: the level's endpoints, when already read.
   */
  async function notifyRung(first = false, read?: Endpoint[]): Promise<void> {
    publish(`L${level + 1}`);
    // A level without a usable channel is said once, not at every repeat.
    const endpoints =
      read ?? (await notes.levelEndpoints({ incident, policy: ladder.policy, level, why: `L${level + 1}` }));
    if (resolved || (!first && acknowledged)) return; // it landed while the targets were read
    for (const endpoint of endpoints) {
      queue.send(endpoint, {
        event: 'incident.escalated',
        level: level + 1,
        attempt,
        scope: `L${level + 1}.${attempt}`,
        message: input.reason,
      });
      if (endpoint.stateful && !notified.some((n) => laneOf(n) === laneOf(endpoint))) notified.push(endpoint);
    }
  }

  /** Channels that track state hear what happened to the incident they were paged for. */
  function mirror(event: Extract<NotificationEvent, 'incident.acknowledged' | 'incident.resolved'>) {
    for (const endpoint of notified) queue.send(endpoint, { event, level: 0, attempt: 1, scope: event });
  }

  async function holdWhileSnoozed(stop = stopped): Promise<void> {
    while (muted() && !stop()) {
      publish('snoozed');
      const until = snoozeUntil;
      await condition(() => stop() || snoozeUntil !== until, Math.max(1, until - Date.now()));
    }
  }

  /**
   * Before a rung: not while snoozed, not during a maintenance window of the namespace (said once
   * per window). `stop` ends the hold: an acknowledge or resolve for later rungs, only a resolve
   * for L1 (which an earlier acknowledge does not cancel, but a snooze still delays).
   */
  async function holdWhileQuiet(stop = stopped): Promise<void> {
    for (;;) {
      if (stop()) return;
      if (muted()) {
        await holdWhileSnoozed(stop);
        continue;
      }
      const window = await notes.maintenanceWindow({ namespace: input.namespace });
      if (stop()) return;
      if (muted()) continue; // snoozed while the window was read
      if (!window) {
        if (heldFor) {
          heldFor = undefined;
          await notes.noteLadder({ incident, message: `Maintenance over: the escalation goes on with L${level + 1}` });
        }
        return;
      }
      const id = `${window.name}@${window.until}`;
      if (heldFor !== id) {
        heldFor = id;
        await notes.noteLadder({
          incident,
          message: `Escalation held: maintenance window ${window.name} covers namespace ${input.namespace} until ${window.until}${window.reason ? ` (${window.reason})` : ''}; L${level + 1} is notified when it ends`,
        });
      }
      publish('held');
      const wait = Math.min(MAINTENANCE_RECHECK_MS, Math.max(1_000, Date.parse(window.until) - Date.now()));
      await condition(() => stop() || muted(), wait); // the loop's top decides what is next
    }
  }

  /** Runs the clock to the next rung; frozen while snoozed. False when stopped (or it is time to continue as new). */
  async function runClock(): Promise<boolean> {
    while ((remainingMs ?? 0) > 0) {
      if (stopped()) return false;
      if (muted()) {
        await holdWhileSnoozed();
        continue;
      }
      if (timeToContinue()) return false;
      publish(`L${level + 1}`);
      const started = Date.now();
      const interrupted = await condition(() => stopped() || muted() || timeToContinue(), remainingMs!);
      remainingMs = interrupted ? Math.max(0, remainingMs! - (Date.now() - started)) : 0;
    }
    return !stopped();
  }

  async function continueNow(): Promise<never> {
    await condition(() => idle() && allHandlersFinished());
    return continueAsNew<typeof escalationWorkflow>({
      ...input,
      acknowledged,
      ...(snoozeUntil > 0 && { snoozeUntil: new Date(snoozeUntil).toISOString() }),
      carried: { level, attempt, remainingMs, notified, acknowledgeSent, ...(heldFor && { heldFor }) },
    });
  }

  if (!carried) {
    // L1 goes out even when someone acknowledged while automation still tried: automation gave up.
    // Its endpoints read by the triage: no window held the namespace then (a snooze still holds).
    const level1 = muted() ? undefined : input.level1;
    if (!level1) await holdWhileQuiet(() => resolved);
    if (!resolved) await notifyRung(true, level1);
  }

  while (!resolved) {
    if (acknowledged) {
      if (!acknowledgeSent) {
        acknowledgeSent = true;
        mirror('incident.acknowledged');
      }
      publish('acknowledged');
      await condition(() => resolved || timeToContinue());
      if (!resolved) await continueNow();
      break;
    }
    const next = nextRung(ladder, { level, attempt });
    if (!next) {
      publish('exhausted'); // the last level's repeats are used up: waiting for a person
      await condition(() => stopped() || timeToContinue());
      if (!stopped()) await continueNow();
      continue;
    }
    remainingMs ??= next.waitMs;
    if (!(await runClock())) {
      if (!stopped() && timeToContinue()) await continueNow();
      continue;
    }
    remainingMs = undefined;
    level = next.level;
    attempt = next.attempt;
    await holdWhileQuiet();
    if (!stopped()) await notifyRung();
  }

  publish('resolved');
  mirror('incident.resolved');
  await condition(() => idle() && allHandlersFinished());
}
