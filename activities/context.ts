import { Context } from '@temporalio/activity';

/**
 * A key unique to this activity execution in this workflow run, stable across its retries:
 * writes keyed by it happen once however often Temporal retries the activity.
 */
export function idempotencyKey(suffix = ''): string {
  const { workflowExecution, activityId } = Context.current().info;
  return `${workflowExecution?.workflowId}/${workflowExecution?.runId}/${activityId}${suffix ? '/' + suffix : ''}`;
}
