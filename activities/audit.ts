import { ApplicationFailure } from '@temporalio/common';
import { z } from 'zod';
import { type AuditRecord } from '../domain/audit';
import { auditActionSchema } from '../contracts/audit';
import { appendAudit } from '../store/audit';
import { idempotencyKey } from './context';

/** Input of the recordAudit activity; validated because it crosses the workflow boundary. */
export const recordAuditInput = z.object({
  action: auditActionSchema,
  user: z.string().min(1).default('system'),
  role: z.enum(['viewer', 'operator', 'admin', 'system']).default('system'),
  resource: z.string().default(''),
  resourceType: z.string().default(''),
  namespace: z.string().default(''),
  details: z.record(z.unknown()).default({}),
  sourceIP: z.string().default('internal'),
  userAgent: z.string().default('foghorn-worker'),
});
export type RecordAuditInput = z.input<typeof recordAuditInput>;

/**
 * Appends an audit record for a workflow. Idempotent: keyed by workflow run and activity id,
 * so a retry after a lost acknowledgement finds the record it already wrote.
 */
export async function recordAudit(input: RecordAuditInput): Promise<Pick<AuditRecord, 'id' | 'seq' | 'checksum'>> {
  const parsed = recordAuditInput.safeParse(input);
  // Invalid input is a bug in the calling workflow: retrying cannot fix it.
  if (!parsed.success)
    throw ApplicationFailure.nonRetryable(`invalid audit record: ${parsed.error.message}`, 'InvalidInput');
  const record = await appendAudit(parsed.data, new Date(), idempotencyKey());
  return { id: record.id, seq: record.seq, checksum: record.checksum };
}
