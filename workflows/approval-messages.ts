import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { ApprovalDecisionRequest } from '../domain/approval-requests';
import type { ApprovalStatus } from '../domain/remediation';

/** The approval workflow's messages; payload types are in domain/approval-requests.ts. */
export const decideApprovalUpdate = defineUpdate<void, [ApprovalDecisionRequest]>('decide');
export const approvalStatusQuery = defineQuery<ApprovalStatus>('approvalStatus');
