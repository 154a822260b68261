import { z } from 'zod';
import { DEFAULT_CLUSTER_NAMESPACE } from '../../domain/cluster';
import { clusterRegistrationSchema, clusterSpecSchema, clusterTierSchema } from '../../contracts/clusters';
import { listEnvelope, PAGE_SIZE } from '../../domain/envelope';
import { listSchema, paginationQuery } from '../../contracts/envelope';
import { getClusterWithCounts, listClusters } from '../../store/clusters';
import { registerCluster, unregisterCluster, type ClusterOps } from '../../operations/clusters';
import { auditSource } from '../auth';
import { clusterDetailSchema, clusterDetailView, clusterListItemSchema, clusterListItemView } from '../cluster-views';
import { ApiError } from '../errors';
import { route } from '../route';

const KIND = 'Cluster';

const clusterNotFound = (name: string, namespace: string) =>
  new ApiError(404, 'Cluster not found', `cluster ${name} is not registered in namespace ${namespace}`);

const namespaceQuery = z.object({
  namespace: z.string().min(1).max(63).default(DEFAULT_CLUSTER_NAMESPACE).describe('namespace of the registration'),
});

const listQuery = paginationQuery(PAGE_SIZE.max, PAGE_SIZE.default).extend({ tier: clusterTierSchema.optional() });

/** The document states the one-of rule too, so clients (and the contract test) see it. */
const registrationBody = clusterRegistrationSchema.extend({
  spec: clusterSpecSchema.openapi({ oneOf: [{ required: ['kubeconfig'] }, { required: ['credentials'] }] }),
});

/**
 * Cluster registrations (DESIGN §4, §5): everyone reads, admins register and delete. The
 * registration body carries credentials, which go to the encrypted store and never come back.
 */
export function clusterRoutes(basePath: string, ops: () => ClusterOps) {
  return [
    route({
      method: 'get',
      path: '/federation/clusters',
      summary: 'List registered clusters, sorted by name',
      tag: 'Clusters',
      role: 'viewer',
      query: listQuery,
      responses: {
        200: { description: 'clusters', schema: listSchema('ClusterRegistrationList', clusterListItemSchema) },
      },
      handler: async ({ query }) => {
        const { page, pageSize, ...filter } = query;
        const { items, totalCount } = await listClusters(filter, page, pageSize);
        return {
          body: listEnvelope('ClusterRegistrationList', items.map(clusterListItemView), totalCount, page, pageSize),
        };
      },
    }),
    route({
      method: 'get',
      path: '/clusters/{name}',
      summary: 'Get a cluster registration',
      tag: 'Clusters',
      role: 'viewer',
      kind: KIND,
      query: namespaceQuery,
      responses: { 200: { description: 'the registration', schema: clusterDetailSchema } },
      handler: async ({ params, query }) => {
        const cluster = await getClusterWithCounts(params.name);
        if (!cluster || cluster.namespace !== query.namespace) throw clusterNotFound(params.name, query.namespace);
        return { body: clusterDetailView(cluster) };
      },
    }),
    route({
      method: 'post',
      path: '/clusters',
      summary: 'Register a cluster (credentials are stored encrypted and never returned)',
      tag: 'Clusters',
      role: 'admin',
      body: registrationBody,
      responses: {
        201: { description: 'registered; health checks start', schema: clusterDetailSchema },
        409: { description: 'a cluster of that name is already registered' },
      },
      handler: async ({ body, req }) => {
        const cluster = await registerCluster(ops(), body, auditSource(req));
        const view = clusterDetailView({ ...cluster, activeIssues: 0, activeRemediations: 0 });
        const ns =
          cluster.namespace === DEFAULT_CLUSTER_NAMESPACE ? '' : `?namespace=${encodeURIComponent(cluster.namespace)}`;
        return {
          status: 201,
          headers: { Location: `${basePath}/clusters/${encodeURIComponent(cluster.name)}${ns}` },
          body: view,
        };
      },
    }),
    route({
      method: 'delete',
      path: '/clusters/{name}',
      summary: 'Delete a cluster registration, its stored credentials and its health and watch workflows',
      tag: 'Clusters',
      role: 'admin',
      kind: KIND,
      query: namespaceQuery,
      responses: { 204: { description: 'deleted' } },
      handler: async ({ params, query, req }) => {
        const deleted = await unregisterCluster(ops(), params.name, query.namespace, auditSource(req));
        if (!deleted) throw clusterNotFound(params.name, query.namespace);
        return { status: 204 };
      },
    }),
  ];
}
