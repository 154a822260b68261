import { pipeline } from 'stream/promises';
import { z } from 'zod';
import { auditActionSchema } from '../../contracts/audit';
import {
  CSV_COLUMNS,
  EXPORT_FORMATS,
  exportContentType,
  exportFilename,
  SYNC_EXPORT_LIMIT,
  type ExportFilter,
} from '../../domain/audit-export';
import { exportedRecordSchema } from '../../contracts/audit';
import { ApiError } from '../../domain/errors';
import { API_VERSION } from '../../domain/envelope';
import { timestampQuery } from '../../contracts/envelope';
import type { IncidentOps } from '../../operations/incidents';
import { startExportJob } from '../../operations/audit-exports';
import { appendAudit } from '../../store/audit';
import {
  auditHeadSeq,
  countExportRecords,
  getExportJob,
  openExportFile,
  type ExportJob,
} from '../../store/audit-exports';
import { allocateName } from '../../store/names';
import { streamExport } from '../audit-export-stream';
import { auditSource } from '../auth';
import { nonBlank, route } from '../route';

const exportQuery = z
  .object({
    format: z.enum(EXPORT_FORMATS).default('json'),
    start: timestampQuery.optional(),
    end: timestampQuery.optional(),
    action: auditActionSchema.optional(),
    user: nonBlank(200).optional(),
    namespace: nonBlank(253).optional(),
  })
  .refine((q) => !q.start || !q.end || q.start <= q.end, { message: 'start must not be after end', path: ['start'] });

const exportSchema = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal('AuditExport'),
  metadata: z.object({
    exportedAt: z.string().datetime(),
    from: z.string().datetime(),
    to: z.string().datetime(),
    totalRecords: z.number().int(),
    format: z.enum(EXPORT_FORMATS),
    filters: z.object({ action: z.string(), user: z.string(), namespace: z.string() }).partial(),
    jobId: z.string().optional(),
  }),
  records: z.array(exportedRecordSchema).describe('oldest first (chain order)'),
  integrity: z
    .object({ scheme: z.literal('hmac-sha256'), recordsDigest: z.string(), seal: z.string() })
    .describe('a seal, under the audit key, over the metadata and the records in order'),
});

const jobSchema = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal('AuditExportJob'),
  metadata: z.object({ jobId: z.string() }),
  status: z.object({
    state: z.enum(['processing', 'completed', 'failed', 'expired']),
    estimatedRecords: z.number().int(),
    downloadUrl: z.string(),
    expiresAt: z.string().datetime(),
    exportedRecords: z.number().int().describe('records written so far'),
    completedAt: z.string().datetime().optional(),
    reason: z.string().optional().describe('why a failed export failed'),
  }),
});

const fileHeaders = {
  'Content-Disposition': {
    description: 'attachment; filename="audit-export-<yyyymmdd>.<csv|json>"',
    pattern: '^attachment; filename="audit-export-\\d{8}\\.(csv|json)"$',
  },
};
const fileResponse = {
  description: `the export: JSON (the AuditExport wrapper) or CSV with the header ${CSV_COLUMNS.join(',')}`,
  schema: exportSchema,
  alternatives: { 'text/csv': z.string().describe(`RFC 4180, CRLF line ends; header ${CSV_COLUMNS.join(',')}`) },
  headers: fileHeaders,
};

export function jobView(basePath: string, job: ExportJob) {
  return {
    apiVersion: API_VERSION,
    kind: 'AuditExportJob',
    metadata: { jobId: job.jobId },
    status: {
      state: job.state,
      estimatedRecords: job.estimatedRecords,
      downloadUrl: `${basePath}/audit/export/download/${job.jobId}`,
      expiresAt: job.expiresAt.toISOString(),
      exportedRecords: job.progress.written,
      ...(job.completedAt && { completedAt: job.completedAt.toISOString() }),
      ...(job.reason && { reason: job.reason }),
    },
  };
}

/**
 * Audit export (DESIGN §9): up to `syncLimit` records streamed at once, above it a job whose
 * file is downloaded later. `syncLimit` is the spec's 10,000; tests and benchmarks lower it.
 */
export function auditExportRoutes(basePath: string, ops: () => IncidentOps, syncLimit = SYNC_EXPORT_LIMIT) {
  return [
    route({
      method: 'get',
      path: '/audit/export',
      summary: `Export the audit log oldest first: up to ${SYNC_EXPORT_LIMIT.toLocaleString('en')} records at once, more as a job (202)`,
      tag: 'Audit',
      role: 'admin',
      query: exportQuery,
      responses: {
        200: fileResponse,
        202: { description: 'too many records for one answer: the export job', schema: jobSchema },
      },
      handler: async ({ query, req, res }) => {
        const at = new Date();
        const filter: ExportFilter = {
          ...(query.start && { start: query.start }),
          end: query.end ?? at,
          ...(query.action && { action: query.action }),
          ...(query.user && { user: query.user }),
          ...(query.namespace && { namespace: query.namespace }),
        };
        const headSeq = await auditHeadSeq();
        const records = await countExportRecords(filter, headSeq);
        const filters = { ...filter, start: filter.start?.toISOString(), end: filter.end.toISOString() };
        const source = auditSource(req);
        if (records <= syncLimit) {
          // Audited before the first byte leaves: an export nobody could record is not made.
          await appendAudit({
            action: 'audit.export',
            ...source,
            resource: 'audit',
            resourceType: 'AuditExport',
            namespace: filter.namespace ?? '',
            details: { format: query.format, filters, records, mode: 'sync' },
          });
          await streamExport(req, res, {
            filter,
            format: query.format,
            headSeq,
            totalRecords: records,
            exportedAt: at,
          });
          return undefined;
        }
        const jobId = await allocateName('export', at);
        const handle = ops(); // 503 before anything is written when Temporal is not configured
        await appendAudit({
          action: 'audit.export',
          ...source,
          resource: jobId,
          resourceType: 'AuditExport',
          namespace: filter.namespace ?? '',
          details: { format: query.format, filters, records, mode: 'async' },
        });
        const job = await startExportJob(handle, {
          jobId,
          filter,
          format: query.format,
          headSeq,
          estimatedRecords: records,
          requestedBy: source.user,
          at,
        });
        return { status: 202, body: jobView(basePath, job) };
      },
    }),
    route({
      method: 'get',
      path: '/audit/export/download/{jobId}',
      summary: 'Download an export job’s file: 200 when done, 202 while processing, 410 after expiry',
      tag: 'Audit',
      role: 'admin',
      kind: 'AuditExportJob',
      responses: {
        200: fileResponse,
        202: { description: 'still processing: the job', schema: jobSchema },
        409: { description: 'the export failed (the reason is in details)' },
        410: { description: 'the file expired (24h after the request) and was deleted' },
      },
      handler: async ({ params, res }) => {
        const job = await getExportJob(params.jobId!);
        if (!job) throw new ApiError(404, 'AuditExportJob not found', `export job ${params.jobId} does not exist`);
        if (job.state === 'expired' || job.expiresAt.getTime() <= Date.now())
          throw new ApiError(410, 'Export expired', `export ${job.jobId} expired at ${job.expiresAt.toISOString()}`);
        if (job.state === 'processing') return { status: 202, body: jobView(basePath, job) };
        if (job.state === 'failed')
          throw new ApiError(409, 'Export failed', `export ${job.jobId} failed: ${job.reason ?? 'unknown reason'}`);
        res.status(200).set({
          'Content-Type': exportContentType(job.format),
          'Content-Disposition': `attachment; filename="${exportFilename(job.format, job.createdAt)}"`,
          'Content-Length': String(job.bytes),
          'Cache-Control': 'no-store',
        });
        await pipeline(openExportFile(job), res);
        return undefined;
      },
    }),
  ];
}
