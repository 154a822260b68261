import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import { reconcilerWorkflow } from '../workflows/reconciler';

/** One schedule per task queue, so deployments sharing a Temporal namespace don't collide. */
export const reconcilerScheduleId = (taskQueue: string) => `foghorn-reconciler-${taskQueue}`;

/**
 * Creates the reconciler's schedule, or brings an existing one to `everyMs` (every worker calls
 * this at start; the first creates it). Overlapping runs are skipped, and missed runs (Temporal
 * was down) are not caught up one by one: the next run repairs everything anyway.
 */
export async function ensureReconcilerSchedule(client: Client, taskQueue: string, everyMs: number): Promise<void> {
  const scheduleId = reconcilerScheduleId(taskQueue);
  const spec = { intervals: [{ every: everyMs }] };
  const action = {
    type: 'startWorkflow' as const,
    workflowType: reconcilerWorkflow,
    workflowId: `foghorn-reconciler-${taskQueue}-run`,
    taskQueue,
    workflowExecutionTimeout: '10m' as const,
  };
  try {
    await client.schedule.create({
      scheduleId,
      spec,
      action,
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1m' },
    });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    await client.schedule.getHandle(scheduleId).update((previous) => ({ ...previous, spec, action }));
  }
}
