import { Context } from '@temporalio/activity';

/**
 * A key unique to this activity execution in this workflow run, stable across its retries:
 * writes keyed by it happen once however often Temporal retries the activity.
 */
export function idempotencyKey(suffix = ''): string {
  const { workflowExecution, activityId } = Context.current().info;
  return `${workflowExecution?.workflowId}/${workflowExecution?.runId}/${activityId}${suffix ? '/' + suffix : ''}`;
}

const HEARTBEAT_MS = 3_000;

/**
 * Runs `fn` while heartbeating: a dead worker's attempt is noticed within the heartbeat timeout
 * instead of the whole start-to-close timeout. `progress`, when given, is sent with each beat:
 * the next attempt finds the last one sent in `Context.current().info.heartbeatDetails`.
 */
export async function withHeartbeat<T>(fn: (signal: AbortSignal) => Promise<T>, progress?: () => unknown): Promise<T> {
  const activity = Context.current();
  // A local activity cannot heartbeat (the SDK would warn at every beat): its workflow task's
  // own timeout notices a dead worker.
  if (activity.info.isLocal) return fn(activity.cancellationSignal);
  activity.heartbeat(progress?.());
  const beat = setInterval(() => activity.heartbeat(progress?.()), HEARTBEAT_MS);
  try {
    return await fn(activity.cancellationSignal);
  } finally {
    clearInterval(beat);
  }
}
