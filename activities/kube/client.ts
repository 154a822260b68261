import { KubeConfig } from '@kubernetes/client-node';
import { ApplicationFailure } from '@temporalio/common';
import {
  CLUSTER_CREDENTIALS_UNREADABLE,
  CLUSTER_NOT_FOUND,
  CLUSTER_NOT_IN_THIS_WORKER,
  LOCAL_CLUSTER,
  localClusterSource,
} from '../../domain/cluster';
import { clusterSecretRevision, readClusterSecret, SecretUnreadableError } from '../../store/cluster-secrets';
import { getCluster } from '../../store/clusters';

/**
 * The one way activities reach a cluster: by name. Workflows carry the name only; the
 * credentials are decrypted here, inside the activity, and never returned to a workflow,
 * logged or put in an error message.
 */

/** Decrypted configs per cluster, valid while the stored secret keeps its revision. */
const cache = new Map<string, { revision: string; kc: KubeConfig }>();

const notRegistered = (cluster: string) =>
  ApplicationFailure.nonRetryable(`Cluster ${cluster} is not registered`, CLUSTER_NOT_FOUND);

/** Not retried: only a configured key (FOGHORN_SECRET_KEY / _RETIRED_KEYS) or a new registration helps. */
const unreadable = (cluster: string) =>
  ApplicationFailure.nonRetryable(
    `credentials of cluster ${cluster} cannot be decrypted (was FOGHORN_SECRET_KEY changed?)`,
    CLUSTER_CREDENTIALS_UNREADABLE,
  );

/** The stored secret, decrypted; a key problem as the non-retryable failure (a store outage stays retryable). */
async function openClusterSecret(cluster: string, secretName: string) {
  try {
    return await readClusterSecret(secretName);
  } catch (err) {
    if (err instanceof SecretUnreadableError) throw unreadable(cluster);
    throw err;
  }
}

/**
 * The local cluster from the environment: the in-cluster service account when Foghorn runs in
 * a pod (KUBERNETES_SERVICE_HOST), else KUBECONFIG; undefined when neither is there. Read each
 * time: the service-account token is rotated on disk by the kubelet.
 */
export function localKubeConfig(env: NodeJS.ProcessEnv = process.env): KubeConfig | undefined {
  const source = localClusterSource(env);
  if (!source) return undefined;
  const kc = new KubeConfig();
  if (source === 'in-cluster') kc.loadFromCluster();
  else kc.loadFromDefault(); // reads every file of KUBECONFIG (a path list), as kubectl does
  return kc;
}

/**
 * A KubeConfig for a cluster registered under `cluster` (its decrypted, stored credentials), or
 * for `local` from the environment when no registration of that name holds credentials.
 * Throws the non-retryable `ClusterNotFound` failure for an unknown cluster (or one being deleted),
 * and the non-retryable `ClusterCredentialsUnreadable` when the stored secret does not decrypt.
 * The registration and the secret's revision are read on every use, so a deleted or
 * re-registered cluster is never served from the cache (which the worker process keeps).
 */
export async function kubeConfigFor(cluster: string): Promise<KubeConfig> {
  const record = await getCluster(cluster);
  if (record?.source === 'registered') {
    const revision = await clusterSecretRevision(record.kubeconfigSecret);
    const cached = cache.get(cluster);
    if (revision !== undefined && cached?.revision === revision) return cached.kc;
    cache.delete(cluster); // stale credentials do not stay in memory
    if (revision === undefined) throw notRegistered(cluster);
    const secret = await openClusterSecret(cluster, record.kubeconfigSecret);
    if (!secret) throw notRegistered(cluster);
    const kc = new KubeConfig();
    kc.loadFromString(secret.plaintext);
    cache.set(cluster, { revision: secret.revision, kc });
    return kc;
  }
  cache.delete(cluster);
  if (cluster === LOCAL_CLUSTER) {
    const local = localKubeConfig();
    if (local) return local;
  }
  // Registered from the environment of the worker that started first: a worker whose own
  // environment has no cluster must not end the cluster's watch and health checks for everyone.
  if (record?.source === 'environment')
    throw ApplicationFailure.retryable(
      `cluster ${cluster} comes from a worker's environment (KUBECONFIG or the in-cluster service account) and this worker has none; another worker's attempt can reach it`,
      CLUSTER_NOT_IN_THIS_WORKER,
    );
  throw notRegistered(cluster);
}

/** True when kubeConfigFor(cluster) has somewhere to look: a registration, or `local` from the environment. */
export async function clusterKnown(cluster: string): Promise<boolean> {
  if (await getCluster(cluster)) return true;
  return cluster === LOCAL_CLUSTER && localClusterSource(process.env) !== undefined;
}
