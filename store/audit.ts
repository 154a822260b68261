import { randomUUID } from 'crypto';
import { mkdir, open, readFile, rename, unlink } from 'fs/promises';
import mongoose from 'mongoose';
import path from 'path';
import {
  AUDIT_KEY_MIN_LENGTH,
  AuditChainVerifier,
  auditLinkValid,
  checkpointKeyIndex,
  GENESIS_CHECKSUM,
  KEYED_PREFIX,
  keyedAuditChecksum,
  signCheckpoint,
  type AuditCheckpoint,
  type AuditEntry,
  type AuditRecord,
  type ChainVerification,
  type CheckpointCandidate,
} from '../domain/audit';
import { redact } from '../domain/redact';
import { isDuplicateKey } from './connection';
import { AuditCheckpointModel, AuditRecordModel } from './models';
import { GroupInsert } from './group-insert';
import { allocateNamesAt } from './names';
import { findPage, type Page } from './pagination';

/**
 * The audit key (FOGHORN_AUDIT_KEY or the data dir's audit-key file, see cli/services.ts
 * ensureAuditKey) and any retired keys, oldest first, the current key last. It never lives in
 * MongoDB. Without it, appending, checkpointing and verifying fail: no silent unkeyed fallback.
 */
let auditKeys: string[] = [];
/** Where this process mirrors the newest checkpoint (the embedded default's data dir), if anywhere. */
let checkpointFile: string | undefined;

export function configureAuditKey(key: string | undefined, opts: { retiredKeys?: readonly string[] } = {}): void {
  if (key === undefined) {
    auditKeys = [];
    return;
  }
  for (const k of [...(opts.retiredKeys ?? []), key])
    if (k.length < AUDIT_KEY_MIN_LENGTH)
      throw new Error(`the audit key must be at least ${AUDIT_KEY_MIN_LENGTH} characters`);
  auditKeys = [...(opts.retiredKeys ?? []).filter((k) => k !== key), key];
}

/** The file that mirrors the newest checkpoint outside MongoDB (undefined: none). */
export function configureAuditCheckpointFile(file: string | undefined): void {
  checkpointFile = file;
}

/** The key new records and export seals are signed with; throws when none is configured. */
export function currentAuditKey(): string {
  const key = auditKeys[auditKeys.length - 1];
  if (!key)
    throw new Error(
      'audit key not configured: set FOGHORN_AUDIT_KEY (or FOGHORN_AUDIT_KEY_FILE), or let foghorn use <data dir>/audit-key',
    );
  return key;
}

/** One record asked for: its content, its time and, from activities, the key that makes it once. */
interface Append {
  entry: AuditEntry;
  at: Date;
  idempotencyKey?: string;
}

/**
 * The one audit writer (DESIGN §9), used by the API and by activities. Appends are group-committed
 * in-process: those asked for while a write is in flight go out together as the next one, chained
 * in the order they were asked (a burst of remediations asks for hundreds at once, and five
 * commands each, one record at a time, was a queue of its own: docs/decisions.md, "Audit").
 * Across processes the unique `seq` index decides, and the loser re-reads the tail and
 * retries.
 */
const appends = new GroupInsert<Append, AuditRecord | Error>(appendMany, 100);

export async function appendAudit(
  entry: AuditEntry,
  at: Date = new Date(),
  idempotencyKey?: string,
): Promise<AuditRecord> {
  const [result] = await appends.add([{ entry, at, ...(idempotencyKey && { idempotencyKey }) }]);
  if (result instanceof Error) throw result;
  return result;
}

const MAX_TRIES = 100;

const RECORD_FIELDS = { _id: 0, idempotencyKey: 0 };

/**
 * Appends a batch in order; each ask gets its record, or the error that refused its entry alone.
 * An event already written under its idempotency key (a retried activity, or another process
 * first) is returned, not written again, and so is one asked for twice in the batch.
 */
async function appendMany(batch: Append[]): Promise<(AuditRecord | Error)[]> {
  const key = currentAuditKey();
  const results: (AuditRecord | Error | undefined)[] = new Array(batch.length);
  const unsettled = (indexes: number[]) => indexes.filter((i) => results[i] === undefined);
  const findWritten = async (indexes: number[]) => {
    const keys = [...new Set(indexes.flatMap((i) => batch[i].idempotencyKey ?? []))];
    if (keys.length === 0) return;
    const found = await AuditRecordModel.find({ idempotencyKey: { $in: keys } }, { _id: 0 }).lean<
      (AuditRecord & { idempotencyKey: string })[]
    >();
    const byKey = new Map(found.map(({ idempotencyKey, ...record }) => [idempotencyKey, record]));
    for (const i of indexes) results[i] = byKey.get(batch[i].idempotencyKey ?? '') ?? results[i];
  };

  await findWritten(batch.map((_, i) => i));
  const contents: AuditEntry[] = [];
  const firstAsk = new Map<string, number>();
  const repeats: [number, number][] = [];
  let todo: number[] = [];
  for (const [i, { entry, at, idempotencyKey: asked }] of batch.entries()) {
    if (results[i]) continue;
    try {
      contents[i] = normalise(entry);
      await new AuditRecordModel({ ...contents[i], id: '-', seq: 1, timestamp: at, checksum: '-' }).validate();
    } catch (err) {
      results[i] = err instanceof Error ? err : new Error(String(err)); // this entry alone is refused
      continue;
    }
    const first = asked === undefined ? undefined : firstAsk.get(asked);
    if (first !== undefined) repeats.push([i, first]);
    else {
      if (asked) firstAsk.set(asked, i);
      todo.push(i);
    }
  }
  const ids = await allocateNamesAt(
    'audit',
    todo.map((i) => batch[i].at),
  );
  const idOf = new Map(todo.map((i, n) => [i, ids[n]]));

  for (let attempt = 0; todo.length > 0; attempt++) {
    if (attempt >= MAX_TRIES) throw new Error(`audit append lost the race ${MAX_TRIES} times`);
    const last = await AuditRecordModel.findOne({}, { seq: 1, checksum: 1 }).sort({ seq: -1 }).lean();
    let seq = last?.seq ?? 0;
    let previous = last?.checksum ?? GENESIS_CHECKSUM;
    const records = todo.map((i): AuditRecord => {
      const unsigned = { ...contents[i], id: idOf.get(i)!, seq: ++seq, timestamp: batch[i].at };
      previous = keyedAuditChecksum(unsigned, previous, key);
      return { ...unsigned, checksum: previous };
    });
    try {
      // Validated above: no documents to build again. Ordered: a record never lands without its predecessor.
      await AuditRecordModel.insertMany(
        records.map((r, n) => ({
          ...r,
          ...(batch[todo[n]].idempotencyKey && { idempotencyKey: batch[todo[n]].idempotencyKey }),
        })),
        { ordered: true, lean: true },
      );
      todo.forEach((i, n) => (results[i] = records[n]));
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      // Another process took a `seq` (or wrote one of these events first). What got in before it
      // stays (the ids are ours alone); the rest re-reads the tail.
      const landed = await AuditRecordModel.find({ id: { $in: records.map((r) => r.id) } }, { _id: 0, id: 1 }).lean<
        { id: string }[]
      >();
      const ids = new Set(landed.map((r) => r.id));
      todo.forEach((i, n) => ids.has(records[n].id) && (results[i] = records[n]));
      await findWritten(unsettled(todo));
    }
    todo = unsettled(todo);
  }
  for (const [i, first] of repeats) results[i] = results[first];
  return results as (AuditRecord | Error)[];
}

/**
 * Exactly the fields that are stored, so the checksum of what is read back matches. Details
 * are redacted first: a secret in them would otherwise be kept forever, under a checksum.
 */
function normalise(e: AuditEntry): AuditEntry {
  return {
    action: e.action,
    user: e.user,
    role: e.role,
    resource: e.resource ?? '',
    resourceType: e.resourceType ?? '',
    namespace: e.namespace ?? '',
    details: redact(JSON.parse(JSON.stringify(e.details ?? {})) as Record<string, unknown>),
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
  return findPage<AuditRecord>(AuditRecordModel, query, { seq: -1 }, page, pageSize, RECORD_FIELDS);
}

/** True when some record was written under an audit key (so a newly generated key would be wrong). */
export async function hasKeyedAuditRecords(): Promise<boolean> {
  // A prefix as a range ('hmac-sha256:' ≤ c < 'hmac-sha256;'): the MongoDB-wire server mis-parses $regex here.
  const prefix = { $gte: KEYED_PREFIX, $lt: KEYED_PREFIX.slice(0, -1) + ';' };
  return (await AuditRecordModel.exists({ checksum: prefix })) !== null;
}

/** How many checkpoints verify compares (newest first); older ones add little. */
const CHECKPOINTS_COMPARED = 1_000;

/**
 * Walks the chain oldest first: every link (keyed, or legacy before the first keyed record),
 * gaps in `seq`, and the head against the signed checkpoints in `audit_checkpoints` and the
 * mirror file. Checkpoints are read before the records, so appends during the walk are fine.
 */
export async function verifyAuditChain(): Promise<ChainVerification> {
  currentAuditKey();
  const candidates: CheckpointCandidate[] = (
    await AuditCheckpointModel.find({}, { _id: 0 }).sort({ seq: -1 }).limit(CHECKPOINTS_COMPARED).lean()
  ).map((doc) => ({ source: 'database' as const, checkpoint: asCheckpoint(doc) }));
  const mirror = await readMirror();
  if (mirror) candidates.push(mirror);
  const verifier = new AuditChainVerifier(auditKeys, candidates);
  const totalRecords = await AuditRecordModel.countDocuments();
  for await (const doc of AuditRecordModel.find({}, RECORD_FIELDS).sort({ seq: 1 }).lean().cursor())
    verifier.push(doc as unknown as AuditRecord);
  return verifier.result(totalRecords);
}

/** A checkpoint document or file as found, whatever an intruder may have made of it. */
function asCheckpoint(raw: unknown): AuditCheckpoint {
  const o = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
  const at = o.at instanceof Date ? o.at : new Date(typeof o.at === 'string' ? o.at : NaN);
  return {
    database: String(o.database ?? ''),
    seq: typeof o.seq === 'number' ? o.seq : NaN,
    checksum: String(o.checksum ?? ''),
    at,
    signature: String(o.signature ?? ''),
  };
}

async function readMirror(): Promise<CheckpointCandidate | undefined> {
  if (!checkpointFile) return undefined;
  let text: string;
  try {
    text = await readFile(checkpointFile, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = {}; // unreadable: reported as a checkpoint whose signature does not check out
  }
  const checkpoint = asCheckpoint(parsed);
  // A mirror of another database's chain (e.g. MONGODB_URI changed) says nothing about this one.
  if (checkpoint.database && checkpoint.database !== mongoose.connection.name) return undefined;
  return { source: 'file', checkpoint };
}

/**
 * Binds the chain to one key: a signed checkpoint at seq 0 (the genesis) is written once, by the
 * first process that starts, and every later process checks that it verifies under its own
 * keys. Two hosts that each generated a key, or a process started with the wrong key, stop here
 * instead of writing records nobody can verify. Idempotent (unique seq); throws on a mismatch.
 */
export async function claimAuditChain(at: Date = new Date()): Promise<void> {
  const key = currentAuditKey();
  const genesis = signCheckpoint({ database: mongoose.connection.name, seq: 0, checksum: GENESIS_CHECKSUM, at }, key);
  try {
    await AuditCheckpointModel.create(genesis);
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
  }
  const stored = await AuditCheckpointModel.findOne({ seq: 0 }, { _id: 0 }).lean();
  if (checkpointKeyIndex(asCheckpoint(stored), auditKeys) >= 0) return;
  auditKeys = []; // never append with a key the chain does not know
  throw new Error(
    'the audit chain in MongoDB was started with another audit key: give every process the same FOGHORN_AUDIT_KEY (or FOGHORN_AUDIT_KEY_FILE), keeping earlier keys in FOGHORN_AUDIT_RETIRED_KEYS',
  );
}

export type CheckpointResult =
  | {
      status: 'written' | 'exists';
      seq: number;
      checksum: string;
      /** Set when the mirror file could not be written (the database checkpoint still was). */
      mirrorError?: string;
    }
  | { status: 'empty' }
  | { status: 'head-invalid'; seq: number };

/**
 * Signs the chain's current head and stores it in `audit_checkpoints` (and the mirror file when
 * configured). Idempotent and safe from several processes at once: one document per head seq,
 * never overwritten; the mirror only moves forward. A head whose own link does not check out
 * is not signed (a checkpoint must never vouch for a forged record).
 */
export async function writeAuditCheckpoint(at: Date = new Date()): Promise<CheckpointResult> {
  const key = currentAuditKey();
  const [record, previous] = await AuditRecordModel.find({}, RECORD_FIELDS)
    .sort({ seq: -1 })
    .limit(2)
    .lean<AuditRecord[]>();
  if (!record) return { status: 'empty' };
  const before = record.seq === 1 ? GENESIS_CHECKSUM : previous?.seq === record.seq - 1 ? previous.checksum : undefined;
  // With a gap right before the head its link cannot be checked; verify reports the gap.
  if (before !== undefined && !auditLinkValid(record, before, auditKeys))
    return { status: 'head-invalid', seq: record.seq };
  const checkpoint = signCheckpoint(
    { database: mongoose.connection.name, seq: record.seq, checksum: record.checksum, at },
    key,
  );
  let status: 'written' | 'exists' = 'written';
  try {
    await AuditCheckpointModel.create(checkpoint);
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
    status = 'exists';
  }
  // A read-only or full disk must not fail the caller (the checkpointer would fail every tick).
  const mirrorError = await writeMirror(checkpoint).then(
    () => undefined,
    (err: Error) => `cannot write ${checkpointFile}: ${err.message}`,
  );
  return { status, seq: checkpoint.seq, checksum: checkpoint.checksum, ...(mirrorError && { mirrorError }) };
}

let mirrorTail: Promise<unknown> = Promise.resolve();

/** Serialised in-process; across processes the rename is atomic and a lower seq never replaces a higher one. */
function writeMirror(checkpoint: AuditCheckpoint): Promise<void> {
  const file = checkpointFile;
  if (!file) return Promise.resolve();
  const next = mirrorTail.then(async () => {
    const current = await readMirror().catch(() => undefined);
    if (current && current.checkpoint.database === checkpoint.database && current.checkpoint.seq >= checkpoint.seq)
      return;
    await mkdir(path.dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.${randomUUID().slice(0, 8)}.tmp`;
    const handle = await open(tmp, 'w', 0o600);
    try {
      await handle.writeFile(JSON.stringify({ ...checkpoint, at: checkpoint.at.toISOString() }, null, 2) + '\n');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, file).catch(async (err) => {
      await unlink(tmp).catch(() => undefined);
      throw err;
    });
  });
  mirrorTail = next.catch(() => undefined);
  return next;
}

/**
 * Writes a checkpoint now, then every `intervalMs` (default one minute), and a last one on stop().
 * Call stop() before disconnecting MongoDB. Failures (e.g. MongoDB down) go to onError; the next
 * tick tries again.
 */
export function startAuditCheckpointer(opts: { intervalMs?: number; onError?: (err: unknown) => void } = {}): {
  stop(): Promise<void>;
} {
  const onError =
    opts.onError ?? ((err: unknown) => console.error(`audit checkpoint failed: ${(err as Error).message}`));
  let running: Promise<unknown> | undefined;
  const write = () =>
    writeAuditCheckpoint().then((result) => {
      if ('mirrorError' in result && result.mirrorError) onError(new Error(result.mirrorError));
      if (result.status === 'head-invalid')
        onError(new Error(`audit head seq ${result.seq} does not verify: not checkpointed (see GET /audit/verify)`));
    }, onError);
  const tick = () => {
    running ??= write().finally(() => {
      running = undefined;
    });
    return running;
  };
  void tick();
  const timer = setInterval(() => void tick(), opts.intervalMs ?? 60_000);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
      await write();
    },
  };
}
