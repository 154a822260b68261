import { ActivityFailure, ChildWorkflowFailure, TimeoutFailure } from '@temporalio/workflow';

/**
 * The message of the failure an activity (or a child) ended with, without the wrappers' prefixes;
 * for one that ran out of time retrying, its last attempt's failure (`HTTP 503 from host`).
 */
export function failureText(err: unknown): string {
  let e: unknown = err;
  while ((e instanceof ActivityFailure || e instanceof ChildWorkflowFailure || e instanceof TimeoutFailure) && e.cause)
    e = e.cause;
  return e instanceof Error ? e.message : String(e);
}
