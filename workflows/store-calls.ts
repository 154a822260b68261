import {
  patched,
  proxyActivities,
  proxyLocalActivities,
  type ActivityInterfaceFor,
  type ActivityOptions,
  type LocalActivityInterfaceFor,
} from '@temporalio/workflow';

/**
 * Runs started since this patch call their own store's bookkeeping as local activities. Runs
 * started before it scheduled those calls as activities, and their histories say so: they go
 * on doing that to the end of the run (continue-as-new starts the next run patched).
 */
export const LOCAL_STORE_CALLS = 'local-store-calls';

/** Quick and idempotent, so retried without a cap: a MongoDB outage delays, never fails. */
const STORE_CALL_OPTIONS = {
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' }, // unlimited attempts
} satisfies ActivityOptions;
/**
 * Above the backoff's ceiling (a minute), so every retry of a call runs in the worker as the same
 * local activity, with the same activity id: the activities' idempotency keys are made of it
 * (activities/context.ts). A retry delay past the threshold would make the SDK sleep on a timer
 * and schedule the call again under a new id.
 */
const LOCAL_RETRY_THRESHOLD = '2m';

/**
 * The activities a workflow uses for its own records in MongoDB (state, timeline, audit, plan
 * and turn records): short reads and writes, never another party's service. Local activities run
 * in the worker inside the workflow task that asked for them, and their result is one marker in
 * the history; an activity costs a round trip through the Temporal server and a workflow task
 * more to see its result. While one runs the SDK keeps the workflow task alive.
 *
 * Call it once, first thing in the workflow, before any command: the answer holds for the run.
 */
export function storeCalls<A extends object>(
  timeouts: Pick<ActivityOptions, 'startToCloseTimeout'> = {},
): ActivityInterfaceFor<A> | LocalActivityInterfaceFor<A> {
  const options = { ...STORE_CALL_OPTIONS, ...timeouts };
  return patched(LOCAL_STORE_CALLS)
    ? proxyLocalActivities<A>({ ...options, localRetryThreshold: LOCAL_RETRY_THRESHOLD })
    : proxyActivities<A>(options);
}
