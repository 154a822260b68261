import { auditChecksum, GENESIS_CHECKSUM, type AuditEntry, type AuditRecord } from '../domain/audit';
import { isDuplicateKey } from './connection';
import { AuditRecordModel } from './models';
import { allocateName } from './names';
import { findPage, type Page } from './pagination';

/**
 * The one audit writer (DESIGN §9), used by the API and by activities.
 * Appends are serialised in-process (cheap, no retries between our own writers); across
 * processes the unique `seq` index decides, and the loser re-reads the tail and retries.
 */
let tail: Promise<unknown> = Promise.resolve();

export function appendAudit(entry: AuditEntry, at: Date = new Date(), idempotencyKey?: string): Promise<AuditRecord> {
  const next = tail.then(() => appendNow(entry, at, idempotencyKey));
  tail = next.catch(() => undefined);
  return next;
}

const MAX_TRIES = 100;

const RECORD_FIELDS = { _id: 0, idempotencyKey: 0 };

async function appendNow(entry: AuditEntry, at: Date, idempotencyKey?: string): Promise<AuditRecord> {
  const existing = async () =>
    idempotencyKey ? await AuditRecordModel.findOne({ idempotencyKey }, RECORD_FIELDS).lean<AuditRecord>() : null;
  const done = await existing();
  if (done) return done;
  const id = await allocateName('audit', at);
  for (let attempt = 0; attempt < MAX_TRIES; attempt++) {
    const last = await AuditRecordModel.findOne({}, { seq: 1, checksum: 1 }).sort({ seq: -1 }).lean();
    const unsigned = { ...normalise(entry), id, seq: (last?.seq ?? 0) + 1, timestamp: at };
    const record: AuditRecord = { ...unsigned, checksum: auditChecksum(unsigned, last?.checksum ?? GENESIS_CHECKSUM) };
    try {
      await AuditRecordModel.create({ ...record, ...(idempotencyKey && { idempotencyKey }) });
      return record;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      const raced = await existing(); // another process wrote the same event first
      if (raced) return raced;
    }
  }
  throw new Error(`audit append lost the race ${MAX_TRIES} times`);
}

/** Exactly the fields that are stored, so the checksum of what is read back matches. */
function normalise(e: AuditEntry): AuditEntry {
  return {
    action: e.action,
    user: e.user,
    role: e.role,
    resource: e.resource ?? '',
    resourceType: e.resourceType ?? '',
    namespace: e.namespace ?? '',
    details: JSON.parse(JSON.stringify(e.details ?? {})) as Record<string, unknown>,
    sourceIP: e.sourceIP ?? '',
    userAgent: e.userAgent ?? '',
  };
}

export interface AuditFilter {
  action?: string;
  user?: string;
  resource?: string;
  from?: Date;
  to?: Date;
}

export function listAudit(filter: AuditFilter, page: number, pageSize: number): Promise<Page<AuditRecord>> {
  const query: Record<string, unknown> = {};
  if (filter.action) query.action = filter.action;
  if (filter.user) query.user = filter.user;
  if (filter.resource) query.resource = filter.resource;
  if (filter.from || filter.to) {
    query.timestamp = { ...(filter.from && { $gte: filter.from }), ...(filter.to && { $lte: filter.to }) };
  }
  return findPage<AuditRecord>(AuditRecordModel, query, { seq: -1 }, page, pageSize);
}

export interface ChainReport {
  intact: boolean;
  totalRecords: number;
  verifiedRecords: number;
  firstBroken?: { id: string; seq: number; reason: string };
}

/** Walks the chain oldest first and stops at the first record that does not check out. */
export async function verifyAuditChain(): Promise<ChainReport> {
  let previous = GENESIS_CHECKSUM;
  let expectedSeq = 1;
  let verified = 0;
  const totalRecords = await AuditRecordModel.countDocuments();
  for await (const doc of AuditRecordModel.find({}, RECORD_FIELDS).sort({ seq: 1 }).lean().cursor()) {
    const { checksum, ...unsigned } = doc as unknown as AuditRecord;
    const reason =
      unsigned.seq !== expectedSeq
        ? `record(s) missing before seq ${unsigned.seq}`
        : auditChecksum(unsigned, previous) !== checksum
          ? 'checksum does not match content and chain'
          : undefined;
    if (reason)
      return {
        intact: false,
        totalRecords,
        verifiedRecords: verified,
        firstBroken: { id: unsigned.id, seq: unsigned.seq, reason },
      };
    previous = checksum;
    expectedSeq += 1;
    verified += 1;
  }
  return { intact: true, totalRecords, verifiedRecords: verified };
}
