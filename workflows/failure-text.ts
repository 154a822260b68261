import { ActivityFailure, ChildWorkflowFailure } from '@temporalio/workflow';

/** The message of the failure an activity (or a child) ended with, without the wrappers' prefixes. */
export function failureText(err: unknown): string {
  let e: unknown = err;
  while ((e instanceof ActivityFailure || e instanceof ChildWorkflowFailure) && e.cause) e = e.cause;
  return e instanceof Error ? e.message : String(e);
}
