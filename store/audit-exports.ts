import mongoose from 'mongoose';
import { Readable } from 'stream';
import { GENESIS_CHECKSUM, type AuditRecord } from '../domain/audit';
import type { ExportFilter, ExportFormat, ExportRecord } from '../domain/audit-export';
import { AuditExportJobModel, AuditRecordModel } from './models';

/**
 * Reading the audit chain for an export, and the asynchronous export jobs with their files
 * (GridFS bucket `audit_exports`). Records are read in `seq` order from one cursor, never all
 * at once, and never past the head seen when the export was asked for.
 */

const RECORD_FIELDS = { _id: 0, idempotencyKey: 0 };

function exportQuery(filter: ExportFilter, headSeq: number, afterSeq = 0): Record<string, unknown> {
  return {
    seq: { $gt: afterSeq, $lte: headSeq },
    timestamp: { ...(filter.start && { $gte: filter.start }), $lte: filter.end },
    ...(filter.action && { action: filter.action }),
    ...(filter.user && { user: filter.user }),
    ...(filter.namespace && { namespace: filter.namespace }),
  };
}

/** The newest record's seq (0: empty log). */
export async function auditHeadSeq(): Promise<number> {
  const head = await AuditRecordModel.findOne({}, { seq: 1 }).sort({ seq: -1 }).lean();
  return head?.seq ?? 0;
}

export function countExportRecords(filter: ExportFilter, headSeq: number): Promise<number> {
  return AuditRecordModel.countDocuments(exportQuery(filter, headSeq));
}

/** The oldest matching record's timestamp: an export without `start` is "from" there. */
export async function firstExportTimestamp(filter: ExportFilter, headSeq: number): Promise<Date | undefined> {
  const first = await AuditRecordModel.findOne(exportQuery(filter, headSeq), { timestamp: 1 }).sort({ seq: 1 }).lean();
  return first?.timestamp;
}

/**
 * The matching records after `afterSeq` (up to `headSeq`), in batches, each record with its
 * predecessor's checksum: the previous record read when it is the one before, else looked up
 * (a filtered export skips records). A predecessor deleted from the log gives null.
 */
export async function* exportBatches(
  filter: ExportFilter,
  opts: { headSeq: number; afterSeq?: number; previous?: { seq: number; checksum: string }; batchSize: number },
): AsyncGenerator<ExportRecord[]> {
  const cursor = AuditRecordModel.find(exportQuery(filter, opts.headSeq, opts.afterSeq), RECORD_FIELDS)
    .sort({ seq: 1 })
    .batchSize(opts.batchSize)
    .lean<AuditRecord>()
    .cursor();
  let previous = opts.previous;
  let batch: AuditRecord[] = [];
  const withPredecessors = async (records: AuditRecord[]): Promise<ExportRecord[]> => {
    const known = new Map<number, string>([[0, GENESIS_CHECKSUM]]);
    if (previous) known.set(previous.seq, previous.checksum);
    for (const r of records) known.set(r.seq, r.checksum);
    const unknown = records.map((r) => r.seq - 1).filter((s) => !known.has(s));
    if (unknown.length > 0) {
      const found = await AuditRecordModel.find({ seq: { $in: unknown } }, { _id: 0, seq: 1, checksum: 1 }).lean();
      for (const p of found) known.set(p.seq, p.checksum);
    }
    const last = records[records.length - 1];
    if (last) previous = { seq: last.seq, checksum: last.checksum };
    return records.map((r) => ({ ...r, previousChecksum: known.get(r.seq - 1) ?? null }));
  };
  try {
    for await (const doc of cursor) {
      batch.push(doc as AuditRecord);
      if (batch.length >= opts.batchSize) {
        const ready = batch;
        batch = [];
        yield await withPredecessors(ready);
      }
    }
    if (batch.length > 0) yield await withPredecessors(batch);
  } finally {
    await cursor.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Jobs
// ---------------------------------------------------------------------------------------------

export interface ExportProgress {
  lastSeq: number;
  lastChecksum: string;
  written: number;
  /** The records digest so far (domain/audit-export.ts nextDigest). */
  digest: string;
  firstTimestamp?: Date;
}

export interface ExportJob {
  jobId: string;
  state: 'processing' | 'completed' | 'failed' | 'expired';
  format: ExportFormat;
  filter: ExportFilter;
  headSeq: number;
  estimatedRecords: number;
  requestedBy: string;
  createdAt: Date;
  expiresAt: Date;
  progress: ExportProgress;
  parts: string[];
  head?: string;
  tail?: string;
  bytes: number;
  completedAt?: Date;
  reason?: string;
}

export async function createExportJob(job: Omit<ExportJob, 'parts' | 'bytes'>): Promise<void> {
  await AuditExportJobModel.create({ ...job, parts: [], bytes: 0 });
}

export function getExportJob(jobId: string): Promise<ExportJob | null> {
  return AuditExportJobModel.findOne({ jobId }, { _id: 0 }).lean<ExportJob>();
}

/**
 * Commits one written part, only if nobody committed past `written` meanwhile (an attempt that
 * lost its heartbeat may still be running): false means the caller's part is an orphan.
 */
export async function commitExportPart(
  jobId: string,
  written: number,
  partId: string,
  bytes: number,
  progress: ExportProgress,
): Promise<boolean> {
  const res = await AuditExportJobModel.updateOne(
    { jobId, state: 'processing', 'progress.written': written },
    { $set: { progress }, $push: { parts: partId }, $inc: { bytes } },
  );
  return res.modifiedCount === 1;
}

/** Completes the job with these head and tail files; false when another attempt completed it first. */
export async function completeExportJob(
  jobId: string,
  files: { head: string; tail: string; bytes: number },
  at: Date,
): Promise<boolean> {
  const res = await AuditExportJobModel.updateOne(
    { jobId, state: 'processing' },
    { $set: { state: 'completed', head: files.head, tail: files.tail, completedAt: at }, $inc: { bytes: files.bytes } },
  );
  return res.modifiedCount === 1;
}

export async function failExportJob(jobId: string, reason: string, at: Date): Promise<void> {
  await AuditExportJobModel.updateOne(
    { jobId, state: 'processing' },
    { $set: { state: 'failed', reason, completedAt: at } },
  );
}

/** Deletes the job's files and marks it expired (idempotent). */
export async function expireExportJob(jobId: string): Promise<void> {
  await deleteExportFiles(jobId);
  await AuditExportJobModel.updateOne({ jobId }, { $set: { state: 'expired' } });
}

// ---------------------------------------------------------------------------------------------
// Files
// ---------------------------------------------------------------------------------------------

const BUCKET = 'audit_exports';

function bucket(): mongoose.mongo.GridFSBucket {
  const db = mongoose.connection.db;
  if (!db) throw new Error('MongoDB is not connected');
  return new mongoose.mongo.GridFSBucket(db, { bucketName: BUCKET });
}

const asId = (id: string) => id as unknown as mongoose.mongo.ObjectId;

/** Writes one part under `id`, replacing whatever an interrupted write of the same id left. */
export async function putExportPart(jobId: string, id: string, text: string): Promise<number> {
  const data = Buffer.from(text, 'utf8');
  await removeExportFile(id);
  await new Promise<void>((resolve, reject) => {
    const upload = bucket().openUploadStreamWithId(asId(id), id, { metadata: { jobId } });
    upload.once('error', reject).once('finish', () => resolve());
    upload.end(data);
  });
  return data.length;
}

/** A file id and its chunks, even when the write stopped before the file document was written. */
export async function removeExportFile(id: string): Promise<void> {
  const db = mongoose.connection.db;
  if (!db) throw new Error('MongoDB is not connected');
  await db.collection(`${BUCKET}.chunks`).deleteMany({ files_id: id });
  await db.collection(`${BUCKET}.files`).deleteOne({ _id: asId(id) });
}

/** Every file of the job except `keep` (orphans of superseded attempts, or everything at expiry). */
export async function deleteExportFiles(jobId: string, keep: ReadonlySet<string> = new Set()): Promise<void> {
  const db = mongoose.connection.db;
  if (!db) throw new Error('MongoDB is not connected');
  const files = await db
    .collection(`${BUCKET}.files`)
    .find({ 'metadata.jobId': jobId }, { projection: { _id: 1 } })
    .toArray();
  for (const f of files) if (!keep.has(String(f._id))) await removeExportFile(String(f._id));
  // Chunks of a part whose write died before its file document exist only under its id prefix.
  const orphans = await db
    .collection(`${BUCKET}.chunks`)
    .distinct('files_id', { files_id: { $gte: `${jobId}/`, $lt: `${jobId}0` } });
  for (const id of orphans) if (!keep.has(String(id))) await removeExportFile(String(id));
}

/** The completed job's file: head, record parts and tail, streamed part by part. */
export function openExportFile(job: ExportJob): Readable {
  const ids = [job.head, ...job.parts, job.tail].filter((id): id is string => !!id);
  async function* chunks() {
    for (const id of ids) for await (const chunk of bucket().openDownloadStream(asId(id))) yield chunk as Buffer;
  }
  return Readable.from(chunks());
}
