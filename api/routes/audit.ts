import { z } from 'zod';
import { auditRecordView, type ChainVerification } from '../../domain/audit';
import { auditActionSchema, auditRecordViewSchema } from '../../contracts/audit';
import { API_VERSION, AUDIT_PAGE_SIZE, listEnvelope } from '../../domain/envelope';
import { listSchema, paginationQuery, timestampQuery } from '../../contracts/envelope';
import { listAudit, verifyAuditChain } from '../../store/audit';
import { route } from '../route';

const auditQuery = paginationQuery(AUDIT_PAGE_SIZE.max, AUDIT_PAGE_SIZE.default).extend({
  action: auditActionSchema.optional(),
  user: z.string().min(1).optional(),
  resource: z.string().min(1).optional(),
  from: timestampQuery.optional(),
  to: timestampQuery.optional(),
});

const checkpointSource = z.enum(['database', 'file']);

export const verifySchema = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal('AuditChainVerification'),
  status: z.object({
    intact: z.boolean().describe('no broken link, no missing record, no tail cut, no bad checkpoint'),
    totalRecords: z.number().int(),
    verifiedRecords: z.number().int().describe('records verified in sequence order before the first problem'),
    firstBroken: z
      .object({
        id: z.string(),
        seq: z.number().int(),
        reason: z.string(),
        problem: z
          .enum(['checksum', 'missing', 'downgrade', 'scheme', 'checkpoint'])
          .describe(
            'checksum: edited content or a checksum forged without the key; missing: records deleted before it; downgrade: an unkeyed checksum after keyed ones; scheme: unknown checksum scheme; checkpoint: differs from a signed checkpoint',
          ),
      })
      .optional(),
    head: z.object({ seq: z.number().int(), checksum: z.string() }).optional().describe('the newest record present'),
    brokenRecords: z.number().int().describe('records whose own checksum does not check out'),
    legacyRecords: z.number().int().describe('records under the unkeyed sha256 rule (written before the audit key)'),
    keyedRecords: z.number().int(),
    missing: z
      .array(z.object({ fromSeq: z.number().int(), toSeq: z.number().int() }))
      .describe('gaps in the sequence (first 100 ranges)'),
    missingRecords: z.number().int(),
    tailCut: z
      .object({
        headSeq: z.number().int(),
        checkpointSeq: z.number().int(),
        missingFromSeq: z.number().int().optional(),
        missingToSeq: z.number().int().optional(),
        reason: z.string(),
      })
      .optional()
      .describe('the head is behind the newest valid checkpoint (records deleted, or rewritten, after it)'),
    checkpoint: z
      .object({
        seq: z.number().int(),
        checksum: z.string(),
        at: z.string().datetime(),
        source: checkpointSource,
      })
      .optional()
      .describe('the newest validly signed checkpoint, which the head was compared with'),
    invalidCheckpoints: z
      .array(
        z.object({
          source: checkpointSource,
          seq: z.number().int().nullable(),
          at: z.string().datetime().nullable(),
          reason: z.string(),
        }),
      )
      .describe('checkpoints whose signature does not check out (tampering outside the audit collection)'),
  }),
});

/** The verification as JSON: timestamps as RFC 3339. */
export const verificationView = (v: ChainVerification) => ({
  ...v,
  ...(v.checkpoint && { checkpoint: { ...v.checkpoint, at: v.checkpoint.at.toISOString() } }),
  invalidCheckpoints: v.invalidCheckpoints.map((c) => ({ ...c, at: c.at ? c.at.toISOString() : null })),
});

export function auditRoutes() {
  return [
    route({
      method: 'get',
      path: '/audit',
      summary: 'List audit records, newest first',
      tag: 'Audit',
      role: 'operator',
      query: auditQuery,
      responses: { 200: { description: 'audit records', schema: listSchema('AuditLogList', auditRecordViewSchema) } },
      handler: async ({ query }) => {
        const { page, pageSize, ...filter } = query;
        const { items, totalCount } = await listAudit(filter, page, pageSize);
        return { body: listEnvelope('AuditLogList', items.map(auditRecordView), totalCount, page, pageSize) };
      },
    }),
    route({
      method: 'get',
      path: '/audit/verify',
      summary:
        'Verify the keyed audit chain against the signed checkpoints: the first broken link, missing records, a tail cut',
      tag: 'Audit',
      role: 'admin',
      responses: { 200: { description: 'verification result', schema: verifySchema } },
      handler: async () => ({
        body: {
          apiVersion: API_VERSION,
          kind: 'AuditChainVerification',
          status: verificationView(await verifyAuditChain()),
        },
      }),
    }),
  ];
}
