import { proxyActivities, sleep } from '@temporalio/workflow';
import type { AuditExportActivities } from '../activities/audit-export';
import { failureText } from './failure-text';

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
  startToCloseTimeout: '1m',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' },
});

export interface AuditExportInput {
  jobId: string;
  /** RFC 3339: when the file is deleted (24h after the request). */
  expiresAt: string;
}

/**
 * One asynchronous audit export (DESIGN §9), workflow id = job id: writes the file to GridFS
 * (completed, or failed with the reason), keeps it until `expiresAt`, then deletes it.
 */
export async function auditExportWorkflow(input: AuditExportInput): Promise<void> {
  try {
    await writeAuditExport({ jobId: input.jobId });
  } catch (err) {
    await failAuditExport({ jobId: input.jobId, reason: failureText(err) });
  }
  const left = Date.parse(input.expiresAt) - Date.now();
  if (left > 0) await sleep(left);
  await expireAuditExport({ jobId: input.jobId });
}
