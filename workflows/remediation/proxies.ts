import { proxyActivities } from '@temporalio/workflow';
import type { AgenticActivities } from '../../activities/agentic';
import type { ApprovalActivities } from '../../activities/approvals';
import type { createKubeActionActivities } from '../../activities/kube-actions';
import type { createKubePreviewActivities } from '../../activities/kube-preview';
import type { createKubeReadActivities } from '../../activities/kube-reads';
import type { NotificationActivities } from '../../activities/notifications';
import type { RemediationActivities } from '../../activities/remediation';
import type { RemediationVerifyActivities } from '../../activities/remediation-verify';
import { AGENTIC_ACTIVITY_OPTIONS } from '../../domain/agentic';
import { KUBE_ACTION_ACTIVITY_OPTIONS, KUBE_READ_ACTIVITY_OPTIONS } from '../../domain/kube-actions';
import {
  boundedByBudget,
  HTTP_STEP_ACTIVITY_OPTIONS,
  SCRIPT_STEP_ACTIVITY_OPTIONS,
} from '../../domain/remediation-steps';
import { PATIENT_RETRY, STORE_CALL_OPTIONS } from '../store-options';

type KubeActionActivities = ReturnType<typeof createKubeActionActivities>;
type KubeReadActivities = ReturnType<typeof createKubeReadActivities>;
type KubePreviewActivities = ReturnType<typeof createKubePreviewActivities>;

/** The plan's records and approvals in MongoDB: quick, idempotent, retried without a cap (an outage delays, never fails). */
export const planStore = proxyActivities<RemediationActivities & ApprovalActivities>(STORE_CALL_OPTIONS);
/** Resolving a Kubernetes step reads the cluster: bounded like the reads, then the step fails. */
export const stepResolver = proxyActivities<RemediationActivities>(KUBE_READ_ACTIVITY_OPTIONS);
/** Kubernetes writes: retried for 10 min, safe because each key is applied once (activities/kube-actions.ts). */
export const kube = proxyActivities<KubeActionActivities>(KUBE_ACTION_ACTIVITY_OPTIONS);
/** The agent's reads and the approval previews: a few quick tries, then the caller goes on without them. */
export const kubeReads = proxyActivities<KubeReadActivities & KubePreviewActivities>(KUBE_READ_ACTIVITY_OPTIONS);
/**
 * HTTP steps read their headers and body from the plan record: they never travel in the payload.
 * An activity, not a local one: a slow service must not hold up the incident's workflow task (and
 * an operator's acknowledge with it).
 */
export const httpSteps = proxyActivities<RemediationActivities>(HTTP_STEP_ACTIVITY_OPTIONS);
/**
 * The HTTP and Kubernetes steps of a plan whose incident has a remediation budget: their retries
 * end with the budget (boundedByBudget), from when the step starts. Made per step (a proxy is a
 * table of functions, nothing more); the shared proxies above without a budget.
 */
export function stepsWithinBudget(budgetEndsAt: string | undefined) {
  if (!budgetEndsAt) return { http: httpSteps, kube };
  const now = Date.now();
  return {
    http: proxyActivities<RemediationActivities>(boundedByBudget(HTTP_STEP_ACTIVITY_OPTIONS, budgetEndsAt, now)),
    kube: proxyActivities<KubeActionActivities>(boundedByBudget(KUBE_ACTION_ACTIVITY_OPTIONS, budgetEndsAt, now)),
  };
}
/** Script steps, too, read their text from the plan record. */
export const scriptSteps = proxyActivities<RemediationActivities>(SCRIPT_STEP_ACTIVITY_OPTIONS);
/** Notify steps through the incident policy's channels: each endpoint's delivery is keyed, so a retry sends nothing twice. */
export const notifySteps = proxyActivities<NotificationActivities>({
  startToCloseTimeout: '2m',
  scheduleToCloseTimeout: '10m',
  retry: PATIENT_RETRY,
});
export const agent = proxyActivities<AgenticActivities>(AGENTIC_ACTIVITY_OPTIONS);
/**
 * Waiting for the target to be healthy runs in real time for up to the verification window;
 * heartbeats every poll, so a dead worker is noticed in 30 s and a cancelled wait stops at once.
 */
export const health = proxyActivities<RemediationVerifyActivities>({
  startToCloseTimeout: '35m',
  heartbeatTimeout: '30s',
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 5 },
});
