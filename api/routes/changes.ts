import { changesQuerySchema, changeViewSchema } from '../../contracts/changes';
import { listSchema, paginationQuery, timestampQuery } from '../../contracts/envelope';
import type { RevisionHealth } from '../../domain/changes';
import { listEnvelope, PAGE_SIZE } from '../../domain/envelope';
import { listChanges, revisionsNamed, type ChangeRecord } from '../../store/changes';
import { route } from '../route';
import { iso } from '../views';

const changeListSchema = listSchema('ChangeList', changeViewSchema);

const revisionKey = (r: { cluster: string; namespace: string; resource: string; revision?: number }) =>
  `${r.cluster}|${r.namespace}|${r.resource}|${r.revision}`;

export function changeView(c: ChangeRecord, health?: RevisionHealth) {
  return {
    id: c.id,
    cluster: c.cluster,
    namespace: c.namespace,
    resource: c.resource,
    type: c.type,
    at: iso(c.at)!,
    ...(c.revision !== undefined && c.revision !== null && { revision: c.revision }),
    ...(c.previousRevision !== undefined && c.previousRevision !== null && { previousRevision: c.previousRevision }),
    summary: c.summary,
    diff: c.diff.map(({ field, from, to }) => ({ field, from, to })),
    by: c.by,
    workloads: c.workloads,
    ...(health && {
      revisionHealth: {
        state: health.state,
        ...(health.healthyAt && { healthyAt: iso(health.healthyAt) }),
        ...(health.failure && {
          failure: {
            signal: health.failure.signal,
            reason: health.failure.reason,
            ...(health.failure.exitCode !== undefined &&
              health.failure.exitCode !== null && { exitCode: health.failure.exitCode }),
            at: iso(health.failure.at)!,
          },
        }),
        images: health.images,
      },
    }),
  };
}

/** The change record: what changed in watched clusters, newest first (docs/kubernetes.md §3). */
export function changeRoutes() {
  return [
    route({
      method: 'get',
      path: '/changes',
      summary: 'List changes in watched clusters, newest first',
      tag: 'Changes',
      role: 'viewer',
      query: paginationQuery(PAGE_SIZE.max, PAGE_SIZE.default)
        .merge(changesQuerySchema)
        .extend({ since: timestampQuery.optional() }),
      responses: { 200: { description: 'ChangeList', schema: changeListSchema } },
      handler: async ({ query }) => {
        const { page, pageSize, ...filter } = query;
        const { items, totalCount } = await listChanges(filter, page, pageSize);
        const health = await revisionsNamed(
          items.filter((c) => c.revision !== undefined && c.resource.startsWith('Deployment/')),
        );
        const byKey = new Map(health.map((h) => [revisionKey(h), h]));
        return {
          body: listEnvelope(
            'ChangeList',
            items.map((c) => changeView(c, byKey.get(revisionKey(c)))),
            totalCount,
            page,
            pageSize,
          ),
        };
      },
    }),
  ];
}
