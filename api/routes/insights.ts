import { z } from 'zod';
import { namespaceSchema } from '../../domain/incident';
import { listEnvelope, PAGE_SIZE, paginationQuery } from '../../domain/schemas';
import { InsightModel } from '../../store/models';
import { findPage } from '../../store/pagination';
import { route } from '../route';
import { insightListSchema, insightView } from '../views';

export function insightRoutes() {
  return [
    route({
      method: 'get',
      path: '/aiinsights',
      summary: 'List AI insights, newest first',
      tag: 'AI insights',
      role: 'viewer',
      query: paginationQuery(PAGE_SIZE.max, PAGE_SIZE.default).extend({
        namespace: namespaceSchema.optional(),
        incident: z.string().min(1).optional(),
      }),
      responses: { 200: { description: 'AIInsightList', schema: insightListSchema } },
      handler: async ({ query }) => {
        const filter: Record<string, unknown> = {};
        if (query.namespace) filter.namespace = query.namespace;
        if (query.incident) filter.issueRef = query.incident;
        const { items, totalCount } = await findPage(
          InsightModel,
          filter,
          { creationTimestamp: -1, name: -1 },
          query.page,
          query.pageSize,
        );
        return { body: listEnvelope('AIInsightList', items.map(insightView), totalCount, query.page, query.pageSize) };
      },
    }),
  ];
}
