import { z } from 'zod';
import { namespaceSchema } from '../../contracts/incidents';
import { approvalStatusSchema } from '../../contracts/remediation';
import { listEnvelope, PAGE_SIZE } from '../../domain/envelope';
import { paginationQuery } from '../../contracts/envelope';
import { decideApproval, findApproval } from '../../operations/approvals';
import type { IncidentOps } from '../../operations/incidents';
import { listApprovals } from '../../store/approvals';
import { auditSource } from '../auth';
import {
  APPROVAL_LIST_FIELDS,
  approvalDetail,
  approvalDetailSchema,
  approvalListItem,
  approvalListSchema,
} from '../remediation-views';
import { route } from '../route';

const KIND = 'Approval';

/** The decider's words; who decided is the token's user, never a body field (strict). */
const decisionBody = z.object({ comment: z.string().max(2000).optional() }).strict();
const decisionResponses = {
  200: { description: 'the approval after the decision', schema: approvalDetailSchema },
  403: { description: "Forbidden: the approval's requiredRole is above the caller's role (details say which)" },
  409: { description: 'Approval already decided (details say who and when, or when and why it expired)' },
};

/** Approvals (DESIGN §8): reads from the store, decisions through the approval's workflow. */
export function approvalRoutes(ops: () => IncidentOps) {
  const decide = (decision: 'approve' | 'reject') =>
    route({
      method: 'post',
      path: `/approvals/{name}/${decision}`,
      summary: decision === 'approve' ? 'Approve: the plan goes on' : 'Reject: the plan does not run',
      tag: 'Approvals',
      role: 'operator',
      kind: KIND,
      body: decisionBody,
      responses: decisionResponses,
      handler: async ({ params, body, req }) => {
        const after = await decideApproval(ops(), params.name, {
          decision,
          ...(body.comment && { comment: body.comment }),
          actor: auditSource(req),
        });
        return { body: approvalDetail(after) };
      },
    });

  return [
    route({
      method: 'get',
      path: '/approvals',
      summary: 'List pending and decided approvals, newest first',
      tag: 'Approvals',
      role: 'viewer',
      query: paginationQuery(PAGE_SIZE.max, PAGE_SIZE.default).extend({
        status: approvalStatusSchema.optional(),
        incident: z.string().min(1).optional(),
        namespace: namespaceSchema.optional(),
      }),
      responses: { 200: { description: 'ApprovalList', schema: approvalListSchema } },
      handler: async ({ query }) => {
        const { page, pageSize, ...filter } = query;
        const { items, totalCount } = await listApprovals(filter, page, pageSize, APPROVAL_LIST_FIELDS);
        return { body: listEnvelope('ApprovalList', items.map(approvalListItem), totalCount, page, pageSize) };
      },
    }),
    route({
      method: 'get',
      path: '/approvals/{name}',
      summary: 'One approval, with previews of the changes it lets run',
      tag: 'Approvals',
      role: 'viewer',
      kind: KIND,
      responses: { 200: { description: 'Approval', schema: approvalDetailSchema } },
      handler: async ({ params }) => ({ body: approvalDetail(await findApproval(params.name)) }),
    }),
    decide('approve'),
    decide('reject'),
  ];
}
