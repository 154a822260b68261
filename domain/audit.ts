import { createHash, createHmac, timingSafeEqual } from 'crypto';
import type { Role } from './roles';

/**
 * The audit log is append-only and tamper-evident (DESIGN §9): every record's checksum covers
 * its canonical content and the previous record's checksum, so editing or deleting any record
 * breaks every link after it. Checksums are keyed (HMAC-SHA-256 with a key that does not live in
 * MongoDB), so someone with only database access cannot recompute a forged chain; signed
 * checkpoints of the head, kept outside the audit collection, reveal a cut tail. See docs/audit.md.
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
  'postmortem.edit',
  'config.update',
  'cluster.register',
  'cluster.delete',
  'token.create',
  'token.revoke',
  'agent.shell',
  'audit.export',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

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

/** An audit record as the API shows it (GET /audit): the timestamp as RFC 3339. */
export interface AuditRecordView {
  id: string;
  timestamp: string;
  action: string;
  user: string;
  role: string;
  resource: string;
  resourceType: string;
  namespace: string;
  details: Record<string, unknown>;
  sourceIP: string;
  userAgent: string;
  checksum: string;
}

export function auditRecordView(r: AuditRecord): AuditRecordView {
  return {
    id: r.id,
    timestamp: r.timestamp.toISOString(),
    action: r.action,
    user: r.user,
    role: r.role,
    resource: r.resource,
    resourceType: r.resourceType,
    namespace: r.namespace,
    details: r.details,
    sourceIP: r.sourceIP,
    userAgent: r.userAgent,
    checksum: r.checksum,
  };
}

/** Records written before keyed checksums: `sha256:<hex>`, verifiable by anyone (and forgeable). */
export const LEGACY_PREFIX = 'sha256:';
/** Records written since: `hmac-sha256:<hex>`, keyed with FOGHORN_AUDIT_KEY. */
export const KEYED_PREFIX = 'hmac-sha256:';

/** The checksum the first record chains from. */
export const GENESIS_CHECKSUM = LEGACY_PREFIX + '0'.repeat(64);

/** The shortest audit key accepted (FOGHORN_AUDIT_KEY). */
export const AUDIT_KEY_MIN_LENGTH = 32;

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

type Unsigned = Omit<AuditRecord, 'checksum'>;

function recordContent(record: Unsigned): string {
  // Only the record's own fields: a stored document may carry more (e.g. idempotencyKey).
  const { id, seq, timestamp, action, user, role, resource, resourceType, namespace, details, sourceIP, userAgent } =
    record;
  const valid = timestamp instanceof Date && !Number.isNaN(timestamp.getTime());
  return canonicalJson({
    id,
    seq,
    timestamp: valid ? timestamp.toISOString() : null,
    action,
    user,
    role,
    resource,
    resourceType,
    namespace,
    details,
    sourceIP,
    userAgent,
  });
}

/** The unkeyed rule of records written before the key (kept to verify them; never used to write). */
export function legacyAuditChecksum(record: Unsigned, previousChecksum: string): string {
  return (
    LEGACY_PREFIX +
    createHash('sha256').update(recordContent(record)).update('\n').update(previousChecksum).digest('hex')
  );
}

/** The keyed rule: HMAC-SHA-256 over a domain tag, the canonical content and the previous checksum. */
export function keyedAuditChecksum(record: Unsigned, previousChecksum: string, key: string): string {
  return (
    KEYED_PREFIX +
    createHmac('sha256', key)
      .update('foghorn-audit-record-v1\n')
      .update(recordContent(record))
      .update('\n')
      .update(previousChecksum)
      .digest('hex')
  );
}

/** Constant-time string comparison (checksums, signatures). */
export function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * A signed statement "the chain of database `database` had its head at `seq` with `checksum` at
 * `at`". Kept outside the audit collection (collection `audit_checkpoints` and, for the
 * embedded default, a file in the data directory), so deleting the newest records is noticed.
 */
export interface AuditCheckpoint {
  database: string;
  seq: number;
  checksum: string;
  at: Date;
  signature: string;
}
export type UnsignedCheckpoint = Omit<AuditCheckpoint, 'signature'>;

function checkpointContent(c: UnsignedCheckpoint): string {
  return canonicalJson({ database: c.database, seq: c.seq, checksum: c.checksum, at: c.at.toISOString() });
}

export function signCheckpoint(c: UnsignedCheckpoint, key: string): AuditCheckpoint {
  const signature =
    KEYED_PREFIX +
    createHmac('sha256', key).update('foghorn-audit-checkpoint-v1\n').update(checkpointContent(c)).digest('hex');
  return { database: c.database, seq: c.seq, checksum: c.checksum, at: c.at, signature };
}

/**
 * Whether one record's own link checks out against its predecessor's checksum, under the legacy
 * rule or any of `keys` (used before signing a checkpoint of the head).
 */
export function auditLinkValid(record: AuditRecord, previousChecksum: string, keys: readonly string[]): boolean {
  const { checksum, ...unsigned } = record;
  if (typeof checksum !== 'string') return false;
  if (checksum.startsWith(LEGACY_PREFIX)) return legacyAuditChecksum(unsigned, previousChecksum) === checksum;
  return keys.some((key) => sameText(keyedAuditChecksum(unsigned, previousChecksum, key), checksum));
}

/** The index (into `keys`) of the key that signed the checkpoint, or -1. */
export function checkpointKeyIndex(c: AuditCheckpoint, keys: readonly string[]): number {
  if (!(c.at instanceof Date) || Number.isNaN(c.at.getTime()) || !Number.isInteger(c.seq)) return -1;
  return keys.findIndex((key) => sameText(signCheckpoint(c, key).signature, String(c.signature)));
}

/** A checkpoint as read from the database or the mirror file, before its signature is checked. */
export interface CheckpointCandidate {
  source: 'database' | 'file';
  checkpoint: AuditCheckpoint;
}

export type ChainProblem = 'checksum' | 'missing' | 'downgrade' | 'scheme' | 'checkpoint';

export interface ChainVerification {
  /** No broken link, no missing record, no tail cut, no bad checkpoint. */
  intact: boolean;
  totalRecords: number;
  /** Records verified in sequence order before the first problem. */
  verifiedRecords: number;
  /** The first record (in sequence order) that does not check out. */
  firstBroken?: { id: string; seq: number; reason: string; problem: ChainProblem };
  /** The newest record present. */
  head?: { seq: number; checksum: string };
  /** Records whose own checksum does not check out (edited, forged, downgraded, or rewritten after a checkpoint). */
  brokenRecords: number;
  /** Records still under the unkeyed legacy rule (tamper-evident only against people without database access). */
  legacyRecords: number;
  keyedRecords: number;
  /** Sequence numbers absent between the first and the newest record (first 100 ranges). */
  missing: Array<{ fromSeq: number; toSeq: number }>;
  missingRecords: number;
  /** The newest records are gone or were replaced: the head is behind the newest valid checkpoint. */
  tailCut?: { headSeq: number; checkpointSeq: number; missingFromSeq?: number; missingToSeq?: number; reason: string };
  /** The newest valid checkpoint, the one the head was compared with. */
  checkpoint?: { seq: number; checksum: string; at: Date; source: 'database' | 'file' };
  /** Checkpoints whose signature does not check out: tampering outside the audit collection. */
  invalidCheckpoints: Array<{ source: 'database' | 'file'; seq: number | null; at: Date | null; reason: string }>;
}

const MAX_LISTED = 100;

/**
 * Walks a chain oldest first (push every record in `seq` order, then call result()).
 * `keys` are oldest first, the current key last: a record must verify under a key no older than
 * the one its predecessor used, and an unkeyed legacy record after a keyed one is a downgrade.
 */
export class AuditChainVerifier {
  private previous = GENESIS_CHECKSUM;
  private expectedSeq = 1;
  private keyIndex = 0;
  private seenKeyed = false;
  private broken = false;
  private readonly report: Omit<ChainVerification, 'intact' | 'totalRecords'>;
  private readonly byCheckpointSeq = new Map<number, CheckpointCandidate[]>();
  private readonly rewritten = new Set<number>();
  private newestCheckpoint?: CheckpointCandidate;

  constructor(
    private readonly keys: readonly string[],
    checkpoints: readonly CheckpointCandidate[] = [],
  ) {
    if (keys.length === 0) throw new Error('no audit key to verify with');
    this.report = {
      verifiedRecords: 0,
      brokenRecords: 0,
      legacyRecords: 0,
      keyedRecords: 0,
      missing: [],
      missingRecords: 0,
      invalidCheckpoints: [],
    };
    for (const candidate of checkpoints) {
      const c = candidate.checkpoint;
      if (checkpointKeyIndex(c, keys) < 0) {
        this.report.invalidCheckpoints.push({
          source: candidate.source,
          seq: Number.isInteger(c.seq) ? c.seq : null,
          at: c.at instanceof Date && !Number.isNaN(c.at.getTime()) ? c.at : null,
          reason: 'checkpoint signature does not match its content (forged or altered)',
        });
        continue;
      }
      const pinned = this.byCheckpointSeq.get(c.seq) ?? [];
      this.byCheckpointSeq.set(c.seq, [...pinned, candidate]);
      if (!this.newestCheckpoint || c.seq > this.newestCheckpoint.checkpoint.seq) this.newestCheckpoint = candidate;
    }
  }

  push(record: AuditRecord): void {
    const { checksum, ...unsigned } = record;
    const seq = unsigned.seq;
    let problem: { problem: ChainProblem; reason: string } | undefined;
    if (seq !== this.expectedSeq) {
      const range = { fromSeq: this.expectedSeq, toSeq: seq - 1 };
      this.report.missingRecords += range.toSeq - range.fromSeq + 1;
      if (this.report.missing.length < MAX_LISTED) this.report.missing.push(range);
      problem = {
        problem: 'missing',
        reason: `record(s) missing before seq ${seq} (seq ${range.fromSeq}–${range.toSeq})`,
      };
      // The deleted predecessor's checksum is unknown: this link cannot be checked, later ones can.
    } else {
      problem = this.checkLink(unsigned, String(checksum));
    }
    if (typeof checksum === 'string' && checksum.startsWith(KEYED_PREFIX)) {
      this.report.keyedRecords += 1;
      this.seenKeyed = true;
    } else this.report.legacyRecords += 1;

    const differing = (this.byCheckpointSeq.get(seq) ?? []).find((p) => p.checkpoint.checksum !== checksum);
    if (differing) this.rewritten.add(seq);
    if (!problem && differing)
      problem = {
        problem: 'checkpoint',
        reason: `checksum differs from the signed checkpoint of ${differing.checkpoint.at.toISOString()} (rewritten)`,
      };

    if (problem) {
      if (problem.problem !== 'missing') this.report.brokenRecords += 1;
      if (!this.broken) this.report.firstBroken = { id: unsigned.id, seq, ...problem };
      this.broken = true;
    } else if (!this.broken) this.report.verifiedRecords += 1;
    this.previous = String(checksum);
    this.expectedSeq = seq + 1;
    this.report.head = { seq, checksum: String(checksum) };
  }

  private checkLink(unsigned: Unsigned, checksum: string) {
    if (checksum.startsWith(LEGACY_PREFIX)) {
      if (this.seenKeyed)
        return {
          problem: 'downgrade' as const,
          reason: 'unkeyed sha256 checksum after keyed records (downgrade: checksum forged without the key)',
        };
      return legacyAuditChecksum(unsigned, this.previous) === checksum
        ? undefined
        : { problem: 'checksum' as const, reason: 'checksum does not match content and chain (edited content)' };
    }
    if (!checksum.startsWith(KEYED_PREFIX))
      return { problem: 'scheme' as const, reason: 'checksum has an unknown scheme' };
    for (let i = this.keyIndex; i < this.keys.length; i++) {
      if (sameText(keyedAuditChecksum(unsigned, this.previous, this.keys[i]), checksum)) {
        this.keyIndex = i;
        return undefined;
      }
    }
    return {
      problem: 'checksum' as const,
      reason: 'checksum does not match content and chain (edited content, or a checksum forged without the key)',
    };
  }

  result(totalRecords: number): ChainVerification {
    const report: ChainVerification = { intact: false, totalRecords, ...this.report };
    const newest = this.newestCheckpoint;
    if (newest) {
      const c = newest.checkpoint;
      report.checkpoint = { seq: c.seq, checksum: c.checksum, at: c.at, source: newest.source };
      const headSeq = report.head?.seq ?? 0;
      if (headSeq < c.seq)
        report.tailCut = {
          headSeq,
          checkpointSeq: c.seq,
          missingFromSeq: headSeq + 1,
          missingToSeq: c.seq,
          reason: `the newest record is seq ${headSeq} but a checkpoint of ${c.at.toISOString()} saw seq ${c.seq}: the newest records were deleted`,
        };
      else if (this.rewritten.has(c.seq))
        report.tailCut = {
          headSeq,
          checkpointSeq: c.seq,
          reason: `the record at seq ${c.seq} differs from the checkpoint of ${c.at.toISOString()}: the tail was cut and rewritten`,
        };
    }
    report.intact =
      !report.firstBroken && report.missingRecords === 0 && !report.tailCut && report.invalidCheckpoints.length === 0;
    return report;
  }
}
