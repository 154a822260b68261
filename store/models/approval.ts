import { Schema, model } from 'mongoose';
import { APPROVAL_STATUSES } from '../../domain/remediation';

/** A preview of one Kubernetes step: what the approver approves, as a diff. */
const previewSchema = new Schema(
  { step: Number, action: String, target: String, summary: String, diff: String, dryRun: Boolean, error: String },
  { _id: false },
);

/**
 * Approvals (collection `approvals`): name `APR-…` = the approval workflow's id. Written by the
 * approval workflow's activities only; `key` (`<plan>` or `<plan>/<step>`) makes a retried
 * request find the first record.
 */
const approvalSchema = new Schema(
  {
    name: { type: String, required: true, unique: true },
    key: { type: String, required: true, unique: true },
    namespace: { type: String, required: true },
    incident: { type: String, required: true },
    plan: { type: String, required: true },
    status: { type: String, required: true, enum: APPROVAL_STATUSES },
    action: { type: String, required: true },
    riskScore: { type: Number, required: true },
    requiredRole: { type: String, required: true },
    runbook: { type: String, default: '' },
    reasons: { type: [String], default: [] },
    previews: { type: [previewSchema], default: [] },
    requestedAt: { type: Date, required: true },
    expiresAt: { type: Date, required: true },
    decidedAt: Date,
    decidedBy: String,
    comment: String,
    expiryReason: String,
  },
  { versionKey: false, minimize: false },
);
// The list's order (newest first, the name breaks ties) after each filter's equality, so the
// index gives the page without a sort (test/store/index-shapes.test.ts).
approvalSchema.index({ requestedAt: -1, name: -1 });
approvalSchema.index({ status: 1, requestedAt: -1, name: -1 });
approvalSchema.index({ incident: 1, requestedAt: -1, name: -1 });
approvalSchema.index({ namespace: 1, requestedAt: -1, name: -1 });

export const ApprovalModel = model('Approval', approvalSchema, 'approvals');
