import { createHash } from 'crypto';
import { z } from 'zod';
import type { Role } from './roles';

/**
 * The audit log is append-only and tamper-evident (DESIGN §9): every record's checksum covers
 * its canonical content and the previous record's checksum, so editing or deleting any record
 * breaks every link after it.
 */
export const AUDIT_ACTIONS = [
  'incident.create',
  'incident.acknowledge',
  'incident.snooze',
  'incident.resolve',
  'approval.approve',
  'approval.reject',
  'runbook.create',
  'runbook.update',
  'runbook.delete',
  'remediation.execute',
  'postmortem.review',
  'postmortem.close',
  'postmortem.feedback',
  'config.update',
  'cluster.register',
  'cluster.delete',
  'token.create',
  'token.revoke',
  'agent.shell',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];
export const auditActionSchema = z.enum(AUDIT_ACTIONS);

/** What a caller supplies; the writer adds id, seq, timestamp and checksum. */
export interface AuditEntry {
  action: AuditAction;
  user: string;
  role: Role;
  resource: string;
  resourceType: string;
  namespace: string;
  details: Record<string, unknown>;
  /** Client address, or `internal` for system actions. */
  sourceIP: string;
  userAgent: string;
}

export interface AuditRecord extends AuditEntry {
  id: string;
  seq: number;
  timestamp: Date;
  checksum: string;
}

/** The checksum the first record chains from. */
export const GENESIS_CHECKSUM = 'sha256:' + '0'.repeat(64);

/** JSON with object keys sorted at every depth, so equal content always hashes the same. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

export function auditChecksum(record: Omit<AuditRecord, 'checksum'>, previousChecksum: string): string {
  const content = canonicalJson({ ...record, timestamp: record.timestamp.toISOString() });
  return 'sha256:' + createHash('sha256').update(content).update('\n').update(previousChecksum).digest('hex');
}
