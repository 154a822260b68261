import { z } from 'zod';
import { namespaceSchema } from '../../contracts/incidents';
import { listEnvelope, PAGE_SIZE } from '../../domain/envelope';
import { paginationQuery } from '../../contracts/envelope';
import { listInsights } from '../../store/insights';
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
        const { items, totalCount } = await listInsights(
          { namespace: query.namespace, incident: query.incident },
          query.page,
          query.pageSize,
        );
        return { body: listEnvelope('AIInsightList', items.map(insightView), totalCount, query.page, query.pageSize) };
      },
    }),
  ];
}
