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
 *
 * The first beat is HEARTBEAT_MS in, not at the start: the server times a missing heartbeat from
 * the attempt's start anyway, and a beat is a write of the run's state in Temporal, which an
 * activity of milliseconds (most triages, every close) made for nothing (docs/decisions.md,
 * "Workflows, insight and postmortem"). Progress that must survive the attempt is sent when it is made.
 */
export async function withHeartbeat<T>(fn: (signal: AbortSignal) => Promise<T>, progress?: () => unknown): Promise<T> {
  const activity = Context.current();
  // A local activity cannot heartbeat (the SDK would warn at every beat): its workflow task's
  // own timeout notices a dead worker.
  if (activity.info.isLocal) return fn(activity.cancellationSignal);
  const beat = setInterval(() => activity.heartbeat(progress?.()), HEARTBEAT_MS);
  try {
    return await fn(activity.cancellationSignal);
  } finally {
    clearInterval(beat);
  }
}
