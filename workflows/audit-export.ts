/**
 * One asynchronous audit export (DESIGN §9), workflow id = job id: writes the file to GridFS
 * (completed, or failed with the reason), keeps it for `ttlMs` from the workflow's start, then
 * deletes it. Measured on the workflow's own clock: the API's clock may differ from the Temporal
 * server's (the API refuses the download from `expiresAt` on its own clock anyway).
 */
import { proxyActivities, sleep, workflowInfo } from '@temporalio/workflow';
import type { AuditExportActivities } from '../activities/audit-export';
import { failureText } from './failure-text';
import { STORE_CALL_OPTIONS } from './store-options';

/**
 * Writing heartbeats every few seconds, so a killed worker is noticed within the heartbeat
 * timeout and another one resumes after the last committed batch. Ten attempts (about ten
 * minutes of a failing store) before the job is reported failed.
 */
const { writeAuditExport } = proxyActivities<AuditExportActivities>({
  startToCloseTimeout: '2h',
  heartbeatTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '2m', maximumAttempts: 10 },
});

/** Bookkeeping on the job document: retried until the store answers. */
const { failAuditExport, expireAuditExport } = proxyActivities<AuditExportActivities>({
  ...STORE_CALL_OPTIONS,
  startToCloseTimeout: '1m',
});

export interface AuditExportInput {
  jobId: string;
  /** How long the file is kept after the request (24h); the job's `expiresAt` says when that is. */
  ttlMs: number;
}

export async function auditExportWorkflow(input: AuditExportInput): Promise<void> {
  try {
    await writeAuditExport({ jobId: input.jobId });
  } catch (err) {
    await failAuditExport({ jobId: input.jobId, reason: failureText(err) });
  }
  const left = workflowInfo().startTime.getTime() + input.ttlMs - Date.now();
  if (left > 0) await sleep(left);
  await expireAuditExport({ jobId: input.jobId });
}
