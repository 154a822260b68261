import { proxyActivities } from '@temporalio/workflow';
import type { IncidentActivities } from '../../activities/incidents';
import type { IncidentStageActivities } from '../../activities/incident-stages';
import type { NotificationActivities } from '../../activities/notifications';
import type { RemediationActivities } from '../../activities/remediation';
import { STORE_CALL_OPTIONS } from '../store-options';

/**
 * The incident's records: quick and idempotent, retried without a cap, so an outage of MongoDB of
 * any length delays the incident instead of failing it (the activities throw only what a retry
 * can fix).
 */
export const incidentStore = proxyActivities<IncidentActivities & RemediationActivities & NotificationActivities>(
  STORE_CALL_OPTIONS,
);

/**
 * The triage (which may call an LLM) and the close (which writes the postmortem): a longer
 * timeout and heartbeats (a dead worker is noticed in 10 s). The analysis falls back to the rules
 * analyzer itself, so what fails an attempt is the store being down: retried without a cap.
 */
export const stages = proxyActivities<IncidentStageActivities>({
  startToCloseTimeout: '2m',
  heartbeatTimeout: '10s',
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '30s' }, // unlimited attempts
});
