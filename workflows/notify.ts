import { proxyActivities } from '@temporalio/workflow';
import type { DeliveryInput, Endpoint, NotificationActivities } from '../activities/notifications';
import { failureText } from './failure-text';
import { STORE_CALL_OPTIONS } from './store-options';

/** Store reads and timeline notes: quick, idempotent, retried without a cap (a MongoDB outage delays, never fails). */
export const notes = proxyActivities<NotificationActivities>(STORE_CALL_OPTIONS);

/**
 * One notification to one endpoint: retried for an hour with the activity's own backoff (and the
 * receiver's Retry-After), then given up and said so on the timeline. A page hours late is noise.
 */
const deliveries = proxyActivities<NotificationActivities>({
  startToCloseTimeout: '30s',
  scheduleToCloseTimeout: '1h',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '10m' },
});

/** Deliveries queue per real endpoint: two targets may reach one. */
export const laneOf = (endpoint: Endpoint): string => endpoint.id;

/**
 * Notifications of one incident, sent beside the workflow's own progress: deliveries to one
 * endpoint go in order (a resolve never overtakes its trigger), endpoints run side by side, and
 * one that runs out of tries is noted on the timeline. `idle()` says when none is in flight
 * (before continue-as-new or completing).
 */
export function notificationQueue(incident: string) {
  const queues = new Map<string, Promise<void>>();
  let inFlight = 0;
  return {
    send(endpoint: Endpoint, what: Omit<DeliveryInput, 'incident' | 'endpoint'>): void {
      const delivery: DeliveryInput = { incident, endpoint, ...what };
      inFlight++;
      const lane = laneOf(endpoint);
      const done = (queues.get(lane) ?? Promise.resolve())
        .then(() => deliveries.deliverNotification(delivery))
        .then(
          () => undefined,
          (err) => notes.noteNotificationFailed({ ...delivery, error: failureText(err) }),
        )
        .catch(() => undefined) // the note is retried without a cap: only cancellation ends it
        .finally(() => inFlight--);
      queues.set(lane, done);
    },
    idle: () => inFlight === 0,
  };
}
