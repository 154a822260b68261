/**
 * One approval (DESIGN §8), workflow id = its name `APR-…`: announced on the timeline and, at
 * once, to level 1 of the incident's escalation policy (schedules resolved to who is on call; by
 * default the chat home channel; the timeline says so when that reaches nobody), then waits for
 * a decision (the `decide` update, whose validator answers 403/409 synchronously) or its expiry
 * on a durable timer. Cancelled — the incident was resolved
 * by a person — it ends `expired` with the reason `incident resolved`.
 */
import {
  ApplicationFailure,
  CancellationScope,
  allHandlersFinished,
  condition,
  isCancellation,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { ApprovalActivities } from '../activities/approvals';
import {
  ALREADY_DECIDED,
  FORBIDDEN,
  type ApprovalOutcome,
  type ApprovalWorkflowInput,
} from '../domain/approval-requests';
import { formatDuration } from '../domain/duration';
import { CONFLICT } from '../domain/incident-requests';
import type { ApprovalStatus } from '../domain/remediation';
import { roleAtLeast } from '../domain/roles';
import type { Endpoint } from '../activities/notifications';
import { approvalStatusQuery, decideApprovalUpdate } from './approval-messages';
import { notes, notificationQueue } from './notify';
import { APPROVAL_STATUS, INCIDENT, NAMESPACE } from './search-attributes';
import { STORE_CALL_OPTIONS } from './store-options';

/** Store writes: quick and idempotent, retried without a cap (a MongoDB outage delays, never fails). */
const approvalStore = proxyActivities<ApprovalActivities>(STORE_CALL_OPTIONS);

export async function approvalWorkflow(input: ApprovalWorkflowInput): Promise<ApprovalOutcome> {
  let status: ApprovalStatus = 'pending';
  let decided: { by: string; at: string; comment?: string } | undefined;
  const publish = () =>
    upsertSearchAttributes([
      { key: APPROVAL_STATUS, value: status },
      { key: INCIDENT, value: input.incident },
      { key: NAMESPACE, value: input.namespace },
    ]);
  publish();

  setHandler(approvalStatusQuery, () => status);
  setHandler(
    decideApprovalUpdate,
    async (request) => {
      status = request.decision === 'approve' ? 'approved' : 'rejected';
      decided = { by: request.actor.user, at: new Date().toISOString(), comment: request.comment };
      publish();
      // Persisted before the update returns: the API answers from the store (read-your-writes).
      await approvalStore.recordApprovalDecision({
        name: input.name,
        status,
        actor: request.actor,
        at: decided.at,
        ...(request.comment && { comment: request.comment }),
      });
    },
    {
      validator: (request) => {
        if (status !== 'pending')
          throw ApplicationFailure.create({
            type: CONFLICT,
            message: ALREADY_DECIDED,
            details: [decided ? `${status} by ${decided.by} at ${decided.at}` : `${status}`],
          });
        if (!roleAtLeast(request.actor.role, input.requiredRole))
          throw ApplicationFailure.create({
            type: FORBIDDEN,
            message: 'Forbidden',
            details: [
              `approval ${input.name} needs the ${input.requiredRole} role; ${request.actor.user} is ${request.actor.role}`,
            ],
          });
      },
    },
  );

  const expire = async (reason: string): Promise<ApprovalOutcome> => {
    status = 'expired';
    publish();
    await approvalStore.expireApproval({ name: input.name, at: new Date().toISOString(), reason });
    await settled();
    return { status: 'expired', reason };
  };

  // Approvals are announced to the incident policy's first level (docs/escalation.md); PagerDuty,
  // which keeps an alert open, hears when the approval closes.
  const queue = notificationQueue(input.incident);
  let paged: Endpoint[] = [];
  const closeAlerts = () => {
    for (const endpoint of paged.filter((e) => e.channel === 'pagerduty'))
      queue.send(endpoint, { event: 'approval.closed', level: 0, attempt: 1, scope: input.name, approval: input.name });
  };
  /** The decision never waits on a receiver that is down: a closing alert gets a short while, then is dropped. */
  const settled = async () => {
    closeAlerts();
    if (!queue.idle()) await condition(queue.idle, CLOSE_ALERTS_WITHIN_MS);
    await condition(allHandlersFinished);
  };

  try {
    await approvalStore.announceApproval({ name: input.name });
    const text = await approvalStore.approvalNotice({ name: input.name });
    paged = await notes.levelEndpoints({ incident: input.incident, level: 0, why: `approval ${input.name}` });
    for (const endpoint of paged)
      queue.send(endpoint, {
        event: 'approval.requested',
        level: 1,
        attempt: 1,
        scope: input.name,
        approval: input.name,
        message: text,
      });
    // Aimed at the recorded expiresAt, which people were shown, not ttl from whenever we got here.
    const wait = input.expiresAt ? Math.max(1_000, Date.parse(input.expiresAt) - Date.now()) : input.ttlMs;
    const inTime = await condition(() => status !== 'pending', wait);
    if (!inTime && status === 'pending') return await expire(`no decision within ${formatDuration(input.ttlMs)}`);
  } catch (err) {
    if (!isCancellation(err) || status !== 'pending') throw err;
    // The incident was resolved while we waited: nothing will run, the approval is moot.
    return await CancellationScope.nonCancellable(() => expire('incident resolved'));
  }
  await settled();
  return { status: status as 'approved' | 'rejected', decidedBy: decided?.by, comment: decided?.comment };
}

const CLOSE_ALERTS_WITHIN_MS = 30_000;
