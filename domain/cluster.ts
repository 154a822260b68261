/**
 * Cluster registrations (spec "Cluster registration", DESIGN §4): names, tiers, phases and the
 * classification of a health check. Pure: the registration body is validated in
 * contracts/clusters.ts; parsing a kubeconfig and talking to clusters happen elsewhere.
 */

export const CLUSTER_TIERS = ['critical', 'standard', 'non-critical'] as const;
export type ClusterTier = (typeof CLUSTER_TIERS)[number];

export const CLUSTER_PHASES = ['Pending', 'Connected', 'Degraded', 'Unreachable', 'Unauthorized'] as const;
export type ClusterPhase = (typeof CLUSTER_PHASES)[number];

/** The cluster Foghorn runs in (in-cluster service account) or the one KUBECONFIG points at. */
export const LOCAL_CLUSTER = 'local';

/** The registration namespace when none is given (spec: GET /clusters/{name} defaults to it). */
export const DEFAULT_CLUSTER_NAMESPACE = 'default';

/** The stored secret holding a cluster's credentials (spec.kubeconfigSecret). */
export const clusterSecretName = (cluster: string) => `cluster-${cluster}-kubeconfig`;

/** One long-running health workflow and one watcher per cluster name (names are unique). */
export const clusterHealthWorkflowId = (cluster: string) => `cluster-health-${cluster}`;
export const clusterWatchWorkflowId = (cluster: string) => `cluster-watch-${cluster}`;

/** Failure types of activities that reach a cluster by name (activities/kube/client.ts). */
export const CLUSTER_NOT_FOUND = 'ClusterNotFound';
export const CLUSTER_CREDENTIALS_UNREADABLE = 'ClusterCredentialsUnreadable';
/**
 * The cluster is registered from a worker's environment (`local`), and this worker's environment
 * has no cluster: retryable, since another worker's attempt may have it.
 */
export const CLUSTER_NOT_IN_THIS_WORKER = 'ClusterNotInThisWorker';

const LOOPBACK_HOSTS = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i;

/**
 * Why a cluster's server URL is refused, or undefined when it is acceptable: https only, except
 * plain http to a loopback host (a local dev cluster); no user:password@ (a secret in the URL
 * would be stored and shown as the cluster's address).
 */
export function serverUrlProblem(server: string): string | undefined {
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    return 'the cluster server must be a URL such as https://10.0.0.1:6443';
  }
  if (url.username || url.password)
    return 'the cluster server URL must not carry a user or password (give credentials as a token or certificate)';
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && LOOPBACK_HOSTS.test(url.hostname)) return undefined;
  return 'the cluster server must be an https:// URL (plain http only to localhost/127.0.0.0/8/[::1])';
}

/** A server URL as recorded (audit) and shown: scheme, host, port and path; never userinfo, query or fragment. */
export function displayServer(server: string): string {
  try {
    const url = new URL(server);
    return `${url.protocol}//${url.host}${url.pathname === '/' ? '' : url.pathname}`;
  } catch {
    return '(not a URL)';
  }
}

/** A string read from a cluster (gitVersion, …) as stored and returned: bounded in length. */
export const clipClusterText = (text: string | undefined, max = 64): string =>
  text === undefined ? '' : text.length > max ? `${text.slice(0, max - 1)}…` : text;

/** What one health check saw; `phase` comes from classifyHealth. */
export interface ClusterObservation {
  version: string;
  nodes: number;
  readyNodes: number;
  namespaces: number;
}

/** How a failed check is reported: wrong or expired credentials, or no (sane) answer at all. */
export type ClusterFailure = 'unauthorized' | 'unreachable';

/** The phase of a check: an answer with every node Ready is Connected, fewer Ready nodes Degraded. */
export function classifyHealth(result: ClusterObservation | ClusterFailure): ClusterPhase {
  if (result === 'unauthorized') return 'Unauthorized';
  if (result === 'unreachable') return 'Unreachable';
  return result.readyNodes < result.nodes ? 'Degraded' : 'Connected';
}

/** HTTP status of a failed API call → the failure it means (401/403: the credentials). */
export function failureOfStatus(status: number | undefined): ClusterFailure {
  return status === 401 || status === 403 ? 'unauthorized' : 'unreachable';
}

/**
 * Where the `local` cluster's credentials come from, if anywhere: the in-cluster service
 * account (Foghorn runs in a pod) wins over KUBECONFIG.
 */
export function localClusterSource(env: Record<string, string | undefined>): 'in-cluster' | 'kubeconfig' | undefined {
  if (env.KUBERNETES_SERVICE_HOST) return 'in-cluster';
  if (env.KUBECONFIG) return 'kubeconfig';
  return undefined;
}
