import { z } from 'zod';
import { auditActionSchema, type AuditRecord } from '../../domain/audit';
import {
  API_VERSION,
  AUDIT_PAGE_SIZE,
  listEnvelope,
  listSchema,
  paginationQuery,
  timestampQuery,
} from '../../domain/schemas';
import { listAudit, verifyAuditChain } from '../../store/audit';
import { route } from '../route';

export const auditRecordSchema = z.object({
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

export const auditView = (r: AuditRecord) => ({
  id: r.id,
  timestamp: r.timestamp.toISOString(),
  action: r.action,
  user: r.user,
  role: r.role,
  resource: r.resource,
  resourceType: r.resourceType,
  namespace: r.namespace,
  details: r.details,
  sourceIP: r.sourceIP,
  userAgent: r.userAgent,
  checksum: r.checksum,
});

const auditQuery = paginationQuery(AUDIT_PAGE_SIZE.max, AUDIT_PAGE_SIZE.default).extend({
  action: auditActionSchema.optional(),
  user: z.string().min(1).optional(),
  resource: z.string().min(1).optional(),
  from: timestampQuery.optional(),
  to: timestampQuery.optional(),
});

const verifySchema = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal('AuditChainVerification'),
  status: z.object({
    intact: z.boolean(),
    totalRecords: z.number().int(),
    verifiedRecords: z.number().int(),
    firstBroken: z.object({ id: z.string(), seq: z.number().int(), reason: z.string() }).optional(),
  }),
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
      responses: { 200: { description: 'audit records', schema: listSchema('AuditLogList', auditRecordSchema) } },
      handler: async ({ query }) => {
        const { page, pageSize, ...filter } = query;
        const { items, totalCount } = await listAudit(filter, page, pageSize);
        return { body: listEnvelope('AuditLogList', items.map(auditView), totalCount, page, pageSize) };
      },
    }),
    route({
      method: 'get',
      path: '/audit/verify',
      summary: 'Verify the audit checksum chain and report the first broken record',
      tag: 'Audit',
      role: 'admin',
      responses: { 200: { description: 'verification result', schema: verifySchema } },
      handler: async () => ({
        body: { apiVersion: API_VERSION, kind: 'AuditChainVerification', status: await verifyAuditChain() },
      }),
    }),
  ];
}
