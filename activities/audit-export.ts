import { ApplicationFailure, Context } from '@temporalio/activity';
import { CSV_HEADER, csvRow, exportMetadata, jsonHead, jsonRecord, jsonTail, nextDigest } from '../domain/audit-export';
import { currentAuditKey } from '../store/audit';
import {
  commitExportPart,
  completeExportJob,
  deleteExportFiles,
  expireExportJob,
  exportBatches,
  failExportJob,
  getExportJob,
  putExportPart,
  removeExportFile,
  type ExportJob,
  type ExportProgress,
} from '../store/audit-exports';
import { withHeartbeat } from './context';

/** Records per GridFS part: a kill loses at most one batch of work, and a part stays small. */
export const EXPORT_BATCH = 1_000;

/**
 * The export workflow's activities (workflows/audit-export.ts). Writing resumes from the job's
 * committed progress, never from heartbeat details (a heartbeat may not have reached the server
 * before a kill), and each part is committed with a compare-and-set on the records written so
 * far: a record is never written twice or skipped, even when a superseded attempt still runs.
 */
export function createAuditExportActivities() {
  return {
    async writeAuditExport(input: { jobId: string }): Promise<{ records: number; bytes: number }> {
      const attempt = Context.current().info.attempt;
      return withHeartbeat(async (cancelled) => {
        for (;;) {
          const job = await jobOrFail(input.jobId);
          if (job.state !== 'processing') return { records: job.progress.written, bytes: job.bytes };
          const outcome = await writeRemainingParts(job, attempt, cancelled);
          if (outcome === 'superseded') continue; // another attempt committed first: go on from its progress
          await writeHeadAndTail(await jobOrFail(input.jobId), attempt);
          const done = await jobOrFail(input.jobId);
          return { records: done.progress.written, bytes: done.bytes };
        }
      });
    },

    async failAuditExport(input: { jobId: string; reason: string }): Promise<void> {
      await failExportJob(input.jobId, input.reason, new Date());
      await deleteExportFiles(input.jobId);
    },

    async expireAuditExport(input: { jobId: string }): Promise<void> {
      await expireExportJob(input.jobId);
    },
  };
}

export type AuditExportActivities = ReturnType<typeof createAuditExportActivities>;

async function jobOrFail(jobId: string): Promise<ExportJob> {
  const job = await getExportJob(jobId);
  if (!job) throw ApplicationFailure.nonRetryable(`export job ${jobId} does not exist`, 'ExportJobMissing');
  return job;
}

const partId = (jobId: string, n: number, attempt: number) => `${jobId}/part-${String(n).padStart(6, '0')}-a${attempt}`;

async function writeRemainingParts(
  job: ExportJob,
  attempt: number,
  cancelled: AbortSignal,
): Promise<'done' | 'superseded'> {
  let progress = job.progress;
  let part = job.parts.length;
  const batches = exportBatches(job.filter, {
    headSeq: job.headSeq,
    afterSeq: progress.lastSeq,
    ...(progress.lastSeq > 0 && { previous: { seq: progress.lastSeq, checksum: progress.lastChecksum } }),
    batchSize: EXPORT_BATCH,
  });
  for await (const batch of batches) {
    if (cancelled.aborted) throw ApplicationFailure.retryable('export cancelled', 'Cancelled');
    let text = '';
    let digest = progress.digest;
    let written = progress.written;
    for (const r of batch) {
      text += job.format === 'csv' ? csvRow(r) : jsonRecord(r, written);
      digest = nextDigest(digest, r);
      written += 1;
    }
    const last = batch[batch.length - 1]!;
    const next: ExportProgress = {
      lastSeq: last.seq,
      lastChecksum: last.checksum,
      written,
      digest,
      firstTimestamp: progress.firstTimestamp ?? batch[0]!.timestamp,
    };
    part += 1;
    const id = partId(job.jobId, part, attempt);
    const bytes = await putExportPart(job.jobId, id, text);
    if (!(await commitExportPart(job.jobId, progress.written, id, bytes, next))) {
      await removeExportFile(id); // only ours: the winner's uncommitted part may be in flight
      return 'superseded';
    }
    progress = next;
  }
  return 'done';
}

/**
 * The head (which needs the final count) and the sealed tail, then the job is completed. Their
 * ids carry the attempt too, so two attempts finishing at once never write the same file.
 */
async function writeHeadAndTail(job: ExportJob, attempt: number): Promise<void> {
  if (job.state !== 'processing') return;
  const metadata = exportMetadata(job.filter, {
    exportedAt: job.createdAt,
    firstTimestamp: job.progress.firstTimestamp,
    totalRecords: job.progress.written,
    format: job.format,
    jobId: job.jobId,
  });
  const head = `${job.jobId}/head-a${attempt}`;
  const tail = job.format === 'json' ? `${job.jobId}/tail-a${attempt}` : '';
  let bytes = await putExportPart(job.jobId, head, job.format === 'csv' ? CSV_HEADER : jsonHead(metadata));
  if (tail) bytes += await putExportPart(job.jobId, tail, jsonTail(metadata, job.progress.digest, currentAuditKey()));
  if (await completeExportJob(job.jobId, { head, tail, bytes }, new Date()))
    await deleteExportFiles(job.jobId, new Set([head, tail, ...job.parts])); // parts of dead attempts
  else for (const id of [head, tail]) if (id) await removeExportFile(id);
}
