import { z } from 'zod';
import { clusterPhaseSchema, clusterTierSchema } from '../contracts/clusters';
import { API_VERSION } from '../domain/envelope';
import type { ClusterWithCounts } from '../store/clusters';

/**
 * The spec's cluster registration detail and list item. Credentials never appear: the detail
 * names the secret (`spec.kubeconfigSecret`), nothing reads its content here.
 */

const resourceUsageSchema = z.object({
  cpuCapacity: z.string().describe('Kubernetes quantity, summed over nodes, e.g. "8" or "3500m"'),
  cpuUsed: z.string().describe("sum of the CPU requests of the cluster's running and pending pods"),
  memoryCapacity: z.string().describe('Kubernetes quantity, summed over nodes, e.g. "16Gi"'),
  memoryUsed: z.string().describe("sum of the memory requests of the cluster's running and pending pods"),
});

export const clusterDetailSchema = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal('ClusterRegistration'),
  metadata: z.object({ name: z.string(), namespace: z.string(), createdAt: z.string().datetime() }),
  spec: z.object({
    displayName: z.string(),
    kubeconfigSecret: z.string().describe('name of the stored secret; its content is never returned'),
    tier: clusterTierSchema,
    region: z.string(),
  }),
  status: z.object({
    phase: clusterPhaseSchema.describe('Pending until the first health check'),
    lastHealthCheck: z.string().datetime().optional().describe('absent until the first health check'),
    kubernetesVersion: z.string(),
    nodeCount: z.number().int(),
    namespaceCount: z.number().int(),
    activeIssues: z.number().int().describe('open incidents of the cluster'),
    activeRemediations: z
      .number()
      .int()
      .describe('remediation plans of the cluster in flight (Pending, Executing, Verifying)'),
    resourceUsage: resourceUsageSchema,
  }),
});

export const clusterListItemSchema = z.object({
  name: z.string(),
  namespace: z.string(),
  displayName: z.string(),
  tier: clusterTierSchema,
  region: z.string(),
  connected: z.boolean(),
  version: z.string(),
  nodeCount: z.number().int(),
  activeIssues: z.number().int(),
  lastHealthCheck: z.string().datetime().optional().describe('absent until the first health check'),
  creationTimestamp: z.string().datetime(),
});

const NO_USAGE = { cpuCapacity: '0', cpuUsed: '0', memoryCapacity: '0', memoryUsed: '0' };

export function clusterDetailView(c: ClusterWithCounts) {
  return {
    apiVersion: API_VERSION,
    kind: 'ClusterRegistration' as const,
    metadata: { name: c.name, namespace: c.namespace, createdAt: c.createdAt.toISOString() },
    spec: { displayName: c.displayName, kubeconfigSecret: c.kubeconfigSecret, tier: c.tier, region: c.region ?? '' },
    status: {
      phase: c.status.phase,
      ...(c.status.lastHealthCheck && { lastHealthCheck: c.status.lastHealthCheck.toISOString() }),
      kubernetesVersion: c.status.kubernetesVersion ?? '',
      nodeCount: c.status.nodeCount ?? 0,
      namespaceCount: c.status.namespaceCount ?? 0,
      activeIssues: c.activeIssues,
      activeRemediations: c.activeRemediations,
      resourceUsage: c.status.resourceUsage ?? NO_USAGE,
    },
  };
}

export function clusterListItemView(c: ClusterWithCounts) {
  return {
    name: c.name,
    namespace: c.namespace,
    displayName: c.displayName,
    tier: c.tier,
    region: c.region ?? '',
    connected: c.status.connected ?? false,
    version: c.status.kubernetesVersion ?? '',
    nodeCount: c.status.nodeCount ?? 0,
    activeIssues: c.activeIssues,
    ...(c.status.lastHealthCheck && { lastHealthCheck: c.status.lastHealthCheck.toISOString() }),
    creationTimestamp: c.createdAt.toISOString(),
  };
}
