import { EMPTY_DIGEST, EXPORT_TTL_MS, type ExportFilter, type ExportFormat } from '../domain/audit-export';
import { unavailable } from '../domain/errors';
import { createExportJob, failExportJob, type ExportJob } from '../store/audit-exports';
import { auditExportWorkflow } from '../workflows/audit-export';
import type { IncidentOps } from './incidents';

/**
 * Starts an asynchronous audit export (DESIGN §9): the job document first (so a download right
 * after the 202 finds it), then its workflow (id = job id). A workflow that cannot be started
 * leaves the job `failed`, and the caller gets 503 with Retry-After.
 */
export async function startExportJob(
  ops: IncidentOps,
  request: {
    jobId: string;
    filter: ExportFilter;
    format: ExportFormat;
    headSeq: number;
    estimatedRecords: number;
    requestedBy: string;
    at: Date;
  },
): Promise<ExportJob> {
  const job: Omit<ExportJob, 'parts' | 'bytes'> = {
    jobId: request.jobId,
    state: 'processing',
    format: request.format,
    filter: request.filter,
    headSeq: request.headSeq,
    estimatedRecords: request.estimatedRecords,
    requestedBy: request.requestedBy,
    createdAt: request.at,
    expiresAt: new Date(request.at.getTime() + EXPORT_TTL_MS),
    progress: { lastSeq: 0, lastChecksum: '', written: 0, digest: EMPTY_DIGEST },
  };
  await createExportJob(job);
  try {
    await ops.client.workflow.start(auditExportWorkflow, {
      workflowId: job.jobId,
      taskQueue: ops.taskQueue,
      args: [{ jobId: job.jobId, ttlMs: EXPORT_TTL_MS }],
    });
  } catch (err) {
    await failExportJob(job.jobId, `the export workflow could not be started: ${(err as Error).message}`, new Date());
    throw unavailable('Temporal is unreachable: the export was not started');
  }
  return { ...job, parts: [], bytes: 0 };
}
