import { CoreV1Api, VersionApi, type KubeConfig, type V1Node, type V1Pod } from '@kubernetes/client-node';
import { ApplicationFailure } from '@temporalio/common';
import { z } from 'zod';
import {
  classifyHealth,
  clipClusterText,
  CLUSTER_CREDENTIALS_UNREADABLE,
  failureOfStatus,
  type ClusterFailure,
  type ClusterObservation,
  type ClusterPhase,
} from '../domain/cluster';
import { cpuMillis, formatCpu, formatMemory, memoryBytes, sumQuantities } from '../domain/quantity';
import { updateClusterStatus, type ClusterStatusRecord } from '../store/clusters';
import { callOptions } from './kube/call-options';
import { kubeConfigFor } from './kube/client';
import { kubeErrorFacts } from './kube/errors';

/** Each API call of a check gives up after this long: a hung server is Unreachable, not a hung check. */
const CALL_TIMEOUT_MS = 5_000;
/** Lists are read in pages so a large cluster never arrives as one huge answer. */
const PAGE = 500;

export const checkClusterHealthInput = z.object({ cluster: z.string().min(1) });
export type CheckClusterHealthInput = z.infer<typeof checkClusterHealthInput>;

/** What a check reports to its workflow: figures and a phase, never credentials. */
export interface ClusterHealthReport {
  phase: ClusterPhase;
  connected: boolean;
  checkedAt: string;
  nodeCount?: number;
  readyNodeCount?: number;
  namespaceCount?: number;
  message: string;
}

/** Every item of a paged list call. */
async function listAll<T>(
  page: (args: { limit: number; _continue?: string }) => Promise<{ items: T[]; metadata?: { _continue?: string } }>,
): Promise<T[]> {
  const items: T[] = [];
  let next: string | undefined;
  do {
    const res = await page({ limit: PAGE, ...(next && { _continue: next }) });
    items.push(...res.items);
    next = res.metadata?._continue || undefined;
  } while (next);
  return items;
}

const isReady = (node: V1Node) =>
  node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

/** Requests of a pod's (regular) containers, in millicores and bytes. */
function podRequests(pods: V1Pod[]) {
  const requests = pods.flatMap((p) => p.spec?.containers ?? []).map((c) => c.resources?.requests ?? {});
  return {
    cpu: sumQuantities(
      requests.map((r) => r.cpu),
      cpuMillis,
    ),
    memory: sumQuantities(
      requests.map((r) => r.memory),
      memoryBytes,
    ),
  };
}

/** One look at the cluster: version, nodes, namespaces, pods' requests. Throws what the client threw. */
async function observe(kc: KubeConfig) {
  const core = kc.makeApiClient(CoreV1Api);
  const version = await kc.makeApiClient(VersionApi).getCode(callOptions(CALL_TIMEOUT_MS));
  const nodes = await listAll((p) => core.listNode(p, callOptions(CALL_TIMEOUT_MS)));
  const namespaces = await listAll((p) => core.listNamespace(p, callOptions(CALL_TIMEOUT_MS)));
  // Pods that hold their requests: finished ones (Succeeded, Failed) release them.
  const pods = await listAll((p) =>
    core.listPodForAllNamespaces(
      { ...p, fieldSelector: 'status.phase!=Succeeded,status.phase!=Failed' },
      callOptions(CALL_TIMEOUT_MS),
    ),
  );
  const used = podRequests(pods);
  const observation: ClusterObservation = {
    version: clipClusterText(version.gitVersion), // the cluster's own words: bounded before they are stored
    nodes: nodes.length,
    readyNodes: nodes.filter(isReady).length,
    namespaces: namespaces.length,
  };
  const resourceUsage = {
    cpuCapacity: formatCpu(
      sumQuantities(
        nodes.map((n) => n.status?.capacity?.cpu),
        cpuMillis,
      ),
    ),
    cpuUsed: formatCpu(used.cpu),
    memoryCapacity: formatMemory(
      sumQuantities(
        nodes.map((n) => n.status?.capacity?.memory),
        memoryBytes,
      ),
    ),
    memoryUsed: formatMemory(used.memory),
  };
  return { observation, resourceUsage };
}

/**
 * Why a call failed, in words that carry no data from the request: an HTTP status, an error
 * code (ECONNREFUSED, ...), or a timeout. The client's own messages may quote URLs and bodies,
 * and the server's Status text is not ours to store, so neither is used.
 */
function describeFailure(err: unknown): { failure: ClusterFailure; message: string } {
  const { status, reason } = kubeErrorFacts(err);
  if (status) return { failure: failureOfStatus(status), message: `the API server answered HTTP ${status}` };
  if (reason === 'Timeout') return { failure: 'unreachable', message: `no answer within ${CALL_TIMEOUT_MS / 1000}s` };
  const code = reason && /^E[A-Z0-9_]+$/.test(reason) ? ` (${clipClusterText(reason, 32)})` : '';
  return { failure: 'unreachable', message: `connection failed${code}` };
}

/** What the cluster says now, as the registration's status; a failed call is a phase, not a throw. */
async function observedStatus(kc: KubeConfig, checkedAt: Date): Promise<Partial<ClusterStatusRecord>> {
  try {
    const { observation, resourceUsage } = await observe(kc);
    const phase = classifyHealth(observation);
    return {
      phase,
      connected: true,
      lastHealthCheck: checkedAt,
      kubernetesVersion: observation.version,
      nodeCount: observation.nodes,
      readyNodeCount: observation.readyNodes,
      namespaceCount: observation.namespaces,
      resourceUsage,
      message:
        phase === 'Degraded'
          ? `${observation.nodes - observation.readyNodes} of ${observation.nodes} nodes not Ready`
          : '',
    };
  } catch (err) {
    const { failure, message } = describeFailure(err);
    return { phase: classifyHealth(failure), connected: false, lastHealthCheck: checkedAt, message };
  }
}

/**
 * Checks one cluster and writes what it saw into its registration. An unreachable or refusing
 * cluster is a result (Unreachable / Unauthorized), never an activity failure; only an unknown
 * cluster (ClusterNotFound, non-retryable) or a store outage fail it. Stored credentials that
 * cannot be decrypted (another FOGHORN_SECRET_KEY) are Unauthorized with that reason, so the
 * phase never stays stale. Idempotent: the last check wins.
 */
export async function checkClusterHealth(input: CheckClusterHealthInput): Promise<ClusterHealthReport> {
  const { cluster } = checkClusterHealthInput.parse(input);
  let kc: KubeConfig | undefined;
  let unreadable: string | undefined;
  try {
    kc = await kubeConfigFor(cluster);
  } catch (err) {
    if (!(err instanceof ApplicationFailure && err.type === CLUSTER_CREDENTIALS_UNREADABLE)) throw err;
    unreadable = err.message; // names the cluster and the key variable, no content
  }
  const checkedAt = new Date();
  const status: Partial<ClusterStatusRecord> = kc
    ? await observedStatus(kc, checkedAt)
    : { phase: 'Unauthorized', connected: false, lastHealthCheck: checkedAt, message: unreadable };
  await updateClusterStatus(cluster, status);
  return {
    phase: status.phase!,
    connected: status.connected!,
    checkedAt: checkedAt.toISOString(),
    ...(status.nodeCount !== undefined && { nodeCount: status.nodeCount }),
    ...(status.readyNodeCount !== undefined && { readyNodeCount: status.readyNodeCount }),
    ...(status.namespaceCount !== undefined && { namespaceCount: status.namespaceCount }),
    message: status.message ?? '',
  };
}

export function createClusterHealthActivities() {
  return { checkClusterHealth };
}

export type ClusterHealthActivities = ReturnType<typeof createClusterHealthActivities>;
