import type { Endpoint } from '../../activities/notifications';
import type { NotificationEvent } from '../../domain/notification-formats';
import { laneOf, notes } from '../notify';
import { publish, type LadderRun } from './state';

/**
 * Notifies the current level. `first`: L1 goes out even to an incident acknowledged before it
 * escalated (automation gave up: that is news). `read`: the level's endpoints, when already read.
 */
export async function notifyRung(run: LadderRun, first = false, read?: Endpoint[]): Promise<void> {
  const { input, level, attempt } = run;
  publish(run, `L${level + 1}`);
  const endpoints =
    read ??
    (await notes.levelEndpoints({
      incident: input.incident,
      policy: input.ladder.policy,
      level,
      why: `L${level + 1}`,
    }));
  if (run.resolved || (!first && run.acknowledged)) return; // it landed while the targets were read
  for (const endpoint of endpoints) {
    run.queue.send(endpoint, {
      event: 'incident.escalated',
      level: level + 1,
      attempt,
      scope: `L${level + 1}.${attempt}`,
      message: run.reason,
    });
    if (endpoint.stateful && !run.notified.some((n) => laneOf(n) === laneOf(endpoint))) run.notified.push(endpoint);
  }
}

/** Channels that track state hear what happened to the incident they were paged for. */
export function mirror(
  run: LadderRun,
  event: Extract<NotificationEvent, 'incident.acknowledged' | 'incident.resolved'>,
) {
  for (const endpoint of run.notified) run.queue.send(endpoint, { event, level: 0, attempt: 1, scope: event });
}
