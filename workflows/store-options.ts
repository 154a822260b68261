import type { ActivityOptions, RetryPolicy } from '@temporalio/workflow';

/**
 * Retried until it succeeds: from 1 s, doubling, at most a minute apart, with no cap on
 * attempts. For calls that throw only what a retry can fix, so a MongoDB outage of any length
 * delays a workflow instead of failing it.
 */
export const PATIENT_RETRY = {
  initialInterval: '1s',
  backoffCoefficient: 2,
  maximumInterval: '1m',
} satisfies RetryPolicy;

/** A workflow's own records in MongoDB (state, timeline, audit, plans, turns): quick, idempotent, patient. */
export const STORE_CALL_OPTIONS = { startToCloseTimeout: '30s', retry: PATIENT_RETRY } satisfies ActivityOptions;
