import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { ALREADY_DECIDED, FORBIDDEN, type ApprovalDecisionRequest } from '../domain/approval-requests';
import { ApiError, unavailable } from '../domain/errors';
import { CONFLICT } from '../domain/incident-requests';
import { getApproval, type ApprovalRecord } from '../store/approvals';
import { decideApprovalUpdate } from '../workflows/approval-messages';
import type { IncidentOps } from './incidents';

/**
 * Deciding an approval (DESIGN §8), shared by the API and the chat agent: the approval's
 * workflow takes the decision (its validator refuses a second one and a role below the
 * approval's requiredRole); the answer is read from the store, which the update wrote.
 */

/** The approval, or 404 `Approval not found`. */
export async function findApproval(name: string): Promise<ApprovalRecord> {
  const approval = await getApproval(name);
  if (!approval) throw new ApiError(404, 'Approval not found', `approval ${name} does not exist`);
  return approval;
}

/** 409 for an approval the store says is decided: who and when, or when and why it expired. */
function alreadyDecided(a: ApprovalRecord): ApiError {
  const at = a.decidedAt ? new Date(a.decidedAt).toISOString() : 'an unknown time';
  const details =
    a.status === 'expired'
      ? `expired at ${at}${a.expiryReason ? `: ${a.expiryReason}` : ''}`
      : `${a.status} by ${a.decidedBy ?? 'unknown'} at ${at}`;
  return new ApiError(409, ALREADY_DECIDED, details);
}

/**
 * Approves or rejects as `request.actor` (the token's or the chat gateway's identity, never a
 * body field). 404 unknown, 409 decided, 403 below the required role, 503 when the approval
 * is pending but its workflow is not running. Returns the approval after the decision.
 */
export async function decideApproval(
  ops: IncidentOps,
  name: string,
  request: ApprovalDecisionRequest,
): Promise<ApprovalRecord> {
  const approval = await findApproval(name);
  // Answered from the store: a decided approval's workflow may already have finished.
  if (approval.status !== 'pending') throw alreadyDecided(approval);
  try {
    await ops.client.workflow.getHandle(name).executeUpdate(decideApprovalUpdate, { args: [request] });
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError && err.cause instanceof ApplicationFailure) {
      const failure = err.cause;
      const details = String(failure.details?.[0] ?? '');
      if (failure.type === CONFLICT) throw new ApiError(409, failure.message, details);
      if (failure.type === FORBIDDEN) throw new ApiError(403, FORBIDDEN, details);
      throw err;
    }
    if (!(err instanceof WorkflowNotFoundError)) throw err;
    // The workflow finished between our read and the update (decided or expired meanwhile).
    const fresh = await findApproval(name);
    if (fresh.status !== 'pending') throw alreadyDecided(fresh);
    throw unavailable(`the workflow of approval ${name} is not running; retry`);
  }
  return findApproval(name);
}
