import type { ApprovalStatus } from '../domain/remediation';
import type { UserRole } from '../domain/roles';
import { isDuplicateKey } from './connection';
import { ApprovalModel } from './models';
import { findPage, type Page } from './pagination';

const NO_ID = { _id: 0 } as const;

export interface ApprovalPreview {
  step: number;
  action: string;
  target: string;
  summary: string;
  diff: string;
  dryRun: boolean;
  error?: string;
}

export interface ApprovalRecord {
  name: string;
  key: string;
  namespace: string;
  incident: string;
  plan: string;
  status: ApprovalStatus;
  /** Human-readable: what will be done. */
  action: string;
  riskScore: number;
  requiredRole: UserRole;
  runbook: string;
  reasons: string[];
  previews: ApprovalPreview[];
  requestedAt: Date;
  expiresAt: Date;
  decidedAt?: Date;
  decidedBy?: string;
  comment?: string;
  expiryReason?: string;
}

/** Creates the approval of `key` unless it exists; returns the one that holds. */
export async function createApprovalOnce(approval: ApprovalRecord): Promise<ApprovalRecord> {
  try {
    await ApprovalModel.create(approval);
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
  }
  const stored = await ApprovalModel.findOne({ key: approval.key }, NO_ID).lean<ApprovalRecord>();
  if (!stored) throw new Error(`approval ${approval.key} was not stored`);
  return stored;
}

export async function approvalByKey(key: string): Promise<ApprovalRecord | undefined> {
  return (await ApprovalModel.findOne({ key }, NO_ID).lean<ApprovalRecord>()) ?? undefined;
}

export async function getApproval(name: string): Promise<ApprovalRecord | undefined> {
  return (await ApprovalModel.findOne({ name }, NO_ID).lean<ApprovalRecord>()) ?? undefined;
}

/** Moves a pending approval to its decision; a decided one is left as it is (first decision wins). */
export async function decideApprovalOnce(
  name: string,
  decision: Pick<ApprovalRecord, 'status' | 'decidedAt'> & Partial<ApprovalRecord>,
): Promise<ApprovalRecord | undefined> {
  await ApprovalModel.updateOne({ name, status: 'pending' }, { $set: decision });
  return getApproval(name);
}

export interface ApprovalFilter {
  status?: ApprovalStatus;
  incident?: string;
  namespace?: string;
}

/** One page of approvals, newest first (DESIGN §4). */
export function listApprovals<K extends keyof ApprovalRecord = keyof ApprovalRecord>(
  filter: ApprovalFilter,
  page: number,
  pageSize: number,
  fields?: readonly K[],
): Promise<Page<Pick<ApprovalRecord, K>>> {
  const query: Record<string, unknown> = {};
  if (filter.status) query.status = filter.status;
  if (filter.incident) query.incident = filter.incident;
  if (filter.namespace) query.namespace = filter.namespace;
  return findPage<Pick<ApprovalRecord, K>>(ApprovalModel, query, { requestedAt: -1, name: -1 }, page, pageSize, fields);
}
