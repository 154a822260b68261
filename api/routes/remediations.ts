import { z } from 'zod';
import { namespaceSchema } from '../../contracts/incidents';
import { planStateSchema } from '../../contracts/remediation';
import { listEnvelope, PAGE_SIZE } from '../../domain/envelope';
import { paginationQuery } from '../../contracts/envelope';
import { getPlan, listPlans } from '../../store/remediations';
import { notFound } from '../errors';
import { PLAN_LIST_FIELDS, planDetail, planDetailSchema, planListItem, planListSchema } from '../remediation-views';
import { route } from '../route';

const KIND = 'Remediation plan';

/** Remediation plans (DESIGN §8): read-only; the incident workflow runs them. */
export function remediationRoutes() {
  return [
    route({
      method: 'get',
      path: '/remediations',
      summary: 'List remediation plans, newest first',
      tag: 'Remediations',
      role: 'viewer',
      query: paginationQuery(PAGE_SIZE.max, PAGE_SIZE.default).extend({
        namespace: namespaceSchema.optional(),
        state: planStateSchema.optional(),
        incident: z.string().min(1).optional(),
      }),
      responses: { 200: { description: 'RemediationPlanList', schema: planListSchema } },
      handler: async ({ query }) => {
        const { page, pageSize, ...filter } = query;
        const { items, totalCount } = await listPlans(filter, page, pageSize, PLAN_LIST_FIELDS);
        return { body: listEnvelope('RemediationPlanList', items.map(planListItem), totalCount, page, pageSize) };
      },
    }),
    route({
      method: 'get',
      path: '/remediations/{name}',
      summary: 'One remediation plan: its steps (spec) and how far it got (status)',
      tag: 'Remediations',
      role: 'viewer',
      kind: KIND,
      responses: { 200: { description: 'RemediationPlan', schema: planDetailSchema } },
      handler: async ({ params }) => {
        const plan = await getPlan(params.name);
        if (!plan) throw notFound(KIND, params.name);
        return { body: planDetail(plan) };
      },
    }),
  ];
}
