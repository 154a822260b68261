import type { Actor } from './incident-requests';
import type { ApprovalStatus } from './remediation';
import type { UserRole } from './roles';

/**
 * The approval workflow's payloads (its message definitions are in workflows/approval-messages.ts),
 * shared by the API, the chat agent and the workflow.
 */

export interface ApprovalDecisionRequest {
  decision: 'approve' | 'reject';
  comment?: string;
  /** The token's user and role: the approver recorded everywhere. */
  actor: Actor;
}

export interface ApprovalWorkflowInput {
  name: string;
  incident: string;
  namespace: string;
  plan: string;
  requiredRole: UserRole;
  ttlMs: number;
  /** When the record says it expires; the timer aims at it (absent in runs started before it was passed). */
  expiresAt?: string;
}

export interface ApprovalOutcome {
  status: Exclude<ApprovalStatus, 'pending'>;
  decidedBy?: string;
  comment?: string;
  /** Why an approval expired: `no decision within 30m`, `incident resolved`. */
  reason?: string;
}

/** Raised by the decide validator when the caller's role is below the approval's requiredRole. */
export const FORBIDDEN = 'Forbidden';
export const ALREADY_DECIDED = 'Approval already decided';
