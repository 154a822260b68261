/**
 * One pass of the reconciler (started by the `foghorn-reconciler` schedule, every minute by
 * default): repairs what a crash between two writes can leave behind. Every step is idempotent,
 * so overlapping or repeated runs are harmless.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { ReconcileActivities } from '../activities/reconcile';

/**
 * Each run is short and the schedule starts the next one a minute later, so a run that fails
 * is simply followed by the next: a few retries, no more.
 */
const reconcile = proxyActivities<ReconcileActivities>({
  startToCloseTimeout: '5m',
  heartbeatTimeout: '1m',
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumAttempts: 3 },
});

export interface ReconcileSummary {
  incidentRepairs: number;
  chatMessagesHandedOver: number;
}

export async function reconcilerWorkflow(): Promise<ReconcileSummary> {
  const incidentRepairs = await reconcile.reconcileIncidents();
  const chatMessagesHandedOver = await reconcile.reconcileChats();
  return { incidentRepairs, chatMessagesHandedOver };
}
