import { z } from 'zod';
import { AUDIT_ACTIONS } from '../domain/audit';
import {
  unreadableExport,
  verifyExportContent,
  type ExportedRecordView,
  type FileVerification,
  type MalformedExportRecord,
} from '../domain/audit-export';
import type { AuditRecordView } from '../domain/audit';
import { API_VERSION } from '../domain/envelope';
import { sameType } from './type-check';

/** The audit log at its edges (DESIGN §9): records as the API shows them, and export files read back. */

export const auditActionSchema = z.enum(AUDIT_ACTIONS);

/** An audit record as the API shows it (GET /audit): the timestamp as RFC 3339. */
export const auditRecordViewSchema = z.object({
  id: z.string(),
  timestamp: z.string().datetime(),
  action: z.string(),
  user: z.string(),
  role: z.string(),
  resource: z.string(),
  resourceType: z.string(),
  namespace: z.string(),
  details: z.record(z.unknown()),
  sourceIP: z.string(),
  userAgent: z.string(),
  checksum: z.string(),
});
sameType<z.output<typeof auditRecordViewSchema>, AuditRecordView>(true);

/** An exported record: the spec's export fields, then what the checksum also covers (so the file verifies). */
export const exportedRecordSchema = auditRecordViewSchema.omit({ details: true, userAgent: true }).extend({
  seq: z.number().int().min(1).describe('the record’s place in the chain'),
  previousChecksum: z
    .string()
    .nullable()
    .describe('the checksum this record chains from (null: its predecessor was missing from the log)'),
  details: z.record(z.unknown()),
  userAgent: z.string(),
});
sameType<z.output<typeof exportedRecordSchema>, ExportedRecordView>(true);

const exportFileSchema = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal('AuditExport'),
  metadata: z
    .object({
      totalRecords: z.number().int(),
      filters: z.object({ action: z.string(), user: z.string(), namespace: z.string() }).partial(),
    })
    .passthrough(),
  records: z.array(z.unknown()),
  integrity: z.object({ scheme: z.literal('hmac-sha256'), recordsDigest: z.string(), seal: z.string() }),
});

function exportedRecord(raw: unknown): ExportedRecordView | MalformedExportRecord {
  const parsed = exportedRecordSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const o = (raw ?? {}) as { id?: unknown; seq?: unknown };
  return { malformed: true, id: String(o.id ?? ''), seq: typeof o.seq === 'number' ? o.seq : null };
}

/**
 * Re-verifies an export file (already parsed JSON) with the audit keys (`foghorn audit
 * verify-file`): its shape and each record's are checked here, the chain and the seal by
 * domain/audit-export.ts verifyExportContent.
 */
export function verifyExportFile(file: unknown, keys: readonly string[]): FileVerification {
  if (keys.length === 0) throw new Error('no audit key to verify with');
  const shape = exportFileSchema.safeParse(file);
  if (!shape.success)
    return unreadableExport(
      `not a Foghorn JSON audit export: ${shape.error.issues.map((i) => `${i.path.join('.') || '(root)'} ${i.message}`).join('; ')}`,
    );
  const { metadata, records, integrity } = shape.data;
  return verifyExportContent(
    {
      metadata,
      rawMetadata: (file as { metadata: unknown }).metadata,
      records: records.map(exportedRecord),
      integrity,
    },
    keys,
  );
}
