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
import type { CallbackActivities } from '../activities/callbacks';
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
import { approvalStatusQuery, decideApprovalUpdate } from './approval-messages';
import { APPROVAL_STATUS, INCIDENT, NAMESPACE } from './search-attributes';

/** Store writes: quick and idempotent, retried without a cap (a MongoDB outage delays, never fails). */
const acts = proxyActivities<ApprovalActivities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' },
});
/** The chat notice: worth an hour of retries, never worth holding the decision up. */
const notify = proxyActivities<CallbackActivities>({
  startToCloseTimeout: '30s',
  scheduleToCloseTimeout: '1h',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '10m' },
});

/**
 * One approval (DESIGN §8), workflow id = its name `APR-…`: announced on the timeline and in the
 * chat home channel, then waits for a decision (the `decide` update, whose validator answers
 * 403/409 synchronously) or its expiry on a durable timer. Cancelled — the incident was resolved
 * by a person — it ends `expired` with the reason `incident resolved`.
 */
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
      await acts.recordApprovalDecision({
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
    await acts.expireApproval({ name: input.name, at: new Date().toISOString(), reason });
    await condition(allHandlersFinished);
    return { status: 'expired', reason };
  };

  try {
    await acts.announceApproval({ name: input.name });
    // Not awaited: a slow chat system must not delay the decision.
    const text = await acts.approvalNotice({ name: input.name });
    void notify
      .notifyHomeChannel({ incident: input.incident, event: `approval.${input.name}`, text })
      .catch(() => undefined);
    // Aimed at the recorded expiresAt, which people were shown, not ttl from whenever we got here.
    const wait = input.expiresAt ? Math.max(1_000, Date.parse(input.expiresAt) - Date.now()) : input.ttlMs;
    const inTime = await condition(() => status !== 'pending', wait);
    if (!inTime && status === 'pending') return await expire(`no decision within ${formatDuration(input.ttlMs)}`);
  } catch (err) {
    if (!isCancellation(err) || status !== 'pending') throw err;
    // The incident was resolved while we waited: nothing will run, the approval is moot.
    return await CancellationScope.nonCancellable(() => expire('incident resolved'));
  }
  await condition(allHandlersFinished);
  return { status: status as 'approved' | 'rejected', decidedBy: decided?.by, comment: decided?.comment };
}
