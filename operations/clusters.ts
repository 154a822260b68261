import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import {
  clusterHealthWorkflowId,
  clusterSecretName,
  clusterWatchWorkflowId,
  DEFAULT_CLUSTER_NAMESPACE,
  displayServer,
  LOCAL_CLUSTER,
  localClusterSource,
} from '../domain/cluster';
import { type ClusterRegistrationInput } from '../contracts/clusters';
import { ApiError, unavailable } from '../domain/errors';
import type { Actor } from '../domain/incident-requests';
import { appendAudit } from '../store/audit';
import {
  credentialsToKubeconfig,
  deleteClusterSecret,
  KubeconfigError,
  normalizeKubeconfig,
  writeClusterSecret,
} from '../store/cluster-secrets';
import {
  createCluster,
  deleteCluster,
  ensureEnvironmentCluster,
  getCluster,
  listClusterNames,
  type ClusterRecord,
} from '../store/clusters';
import type { clusterHealthWorkflow } from '../workflows/cluster-health';

/**
 * Cluster registrations: the credentials go into the encrypted store, the registration into
 * `clusters`, and each cluster gets its health workflow and its watcher (another workflow type,
 * started by name). Workflows receive the cluster's name only.
 */
export interface ClusterOps {
  client: Client;
  taskQueue: string;
}

const KIND = 'Cluster';

/** The watcher's workflow type (workflows/cluster-watch.ts), started by name. */
const WATCH_WORKFLOW = 'clusterWatchWorkflow';

async function startOnce(start: () => Promise<unknown>): Promise<void> {
  try {
    await start();
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}

/** Starts the health and watch workflows of a cluster unless they are running. Idempotent. */
export async function startClusterWorkflows({ client, taskQueue }: ClusterOps, cluster: string): Promise<void> {
  await startOnce(() =>
    client.workflow.start<typeof clusterHealthWorkflow>('clusterHealthWorkflow', {
      workflowId: clusterHealthWorkflowId(cluster),
      taskQueue,
      args: [{ cluster }],
    }),
  );
  await startOnce(() =>
    client.workflow.start(WATCH_WORKFLOW, {
      workflowId: clusterWatchWorkflowId(cluster),
      taskQueue,
      args: [{ cluster }],
    }),
  );
}

async function cancelIfRunning(client: Client, workflowId: string): Promise<void> {
  try {
    await client.workflow.getHandle(workflowId).cancel();
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err; // never started, or already closed
  }
}

/** The stored kubeconfig for a registration body, or a 400 naming the problem (never the content). */
function kubeconfigOf(spec: ClusterRegistrationInput['spec']): { kubeconfig: string; server: string } {
  try {
    return spec.kubeconfig !== undefined
      ? normalizeKubeconfig(spec.kubeconfig)
      : credentialsToKubeconfig(spec.credentials!);
  } catch (err) {
    if (err instanceof KubeconfigError)
      throw new ApiError(
        400,
        'Invalid request',
        // not "kubeconfig: …": the redactor would take the first word for a secret value
        `body.spec.${spec.kubeconfig ? 'kubeconfig' : 'credentials'} is refused: ${err.message}`,
      );
    throw err;
  }
}

/**
 * Registers a cluster: 409 when the name is taken (names are unique across registration
 * namespaces), 400 for an unusable kubeconfig. The cluster is not contacted here: the health
 * workflow reports what it finds. If Temporal cannot take the workflows, nothing is kept (503),
 * so the same request can simply be retried.
 */
export async function registerCluster(
  ops: ClusterOps,
  input: ClusterRegistrationInput,
  actor: Actor,
): Promise<ClusterRecord> {
  const { name, namespace } = input.metadata;
  const { kubeconfig, server } = kubeconfigOf(input.spec);
  const secret = clusterSecretName(name);
  const result = await createCluster({
    name,
    namespace,
    displayName: input.spec.displayName ?? name,
    tier: input.spec.tier,
    region: input.spec.region,
    kubeconfigSecret: secret,
    source: 'registered',
  });
  if (!result.created) {
    const where = result.existing ? ` in namespace ${result.existing.namespace}` : '';
    const since = result.existing ? ` (registered ${result.existing.createdAt.toISOString()})` : '';
    throw new ApiError(409, 'Cluster already exists', `cluster ${name} is already registered${where}${since}`);
  }
  try {
    await writeClusterSecret(secret, name, kubeconfig);
    await startClusterWorkflows(ops, name);
  } catch (err) {
    // Either workflow may have started before the failure: neither may outlive the registration.
    await cancelIfRunning(ops.client, clusterHealthWorkflowId(name)).catch(() => undefined);
    await cancelIfRunning(ops.client, clusterWatchWorkflowId(name)).catch(() => undefined);
    await deleteClusterSecret(secret).catch(() => undefined);
    await deleteCluster(name).catch(() => undefined);
    if (err instanceof ApiError) throw err;
    if ((err as Error).name === 'ServiceError' || (err as { code?: unknown }).code === 'UNAVAILABLE')
      throw unavailable('Temporal is unreachable: the cluster was not registered');
    throw err;
  }
  await appendAudit({
    action: 'cluster.register',
    ...actor,
    resource: name,
    resourceType: KIND,
    namespace,
    details: {
      displayName: result.cluster.displayName,
      tier: result.cluster.tier,
      region: result.cluster.region,
      server: displayServer(server), // never userinfo, query or fragment
      kubeconfigSecret: secret,
      // not `credentials`: the audit redacts a key of that name, and this is only which form was given
      credentialsForm: input.spec.kubeconfig !== undefined ? 'kubeconfig' : 'token',
    },
  });
  return result.cluster;
}

/**
 * Deletes a registration: its workflows are cancelled first (503 while Temporal is down, with
 * nothing deleted), then the record and the secret go. Undefined when no such registration.
 */
export async function unregisterCluster(
  ops: ClusterOps,
  name: string,
  namespace: string,
  actor: Actor,
): Promise<ClusterRecord | undefined> {
  const existing = await getCluster(name);
  if (!existing || existing.namespace !== namespace) return undefined;
  await cancelIfRunning(ops.client, clusterHealthWorkflowId(name));
  await cancelIfRunning(ops.client, clusterWatchWorkflowId(name));
  const deleted = await deleteCluster(name);
  if (!deleted) return undefined; // a concurrent delete won
  if (deleted.source === 'registered') await deleteClusterSecret(deleted.kubeconfigSecret);
  await appendAudit({
    action: 'cluster.delete',
    ...actor,
    resource: name,
    resourceType: KIND,
    namespace: deleted.namespace,
    details: { displayName: deleted.displayName, tier: deleted.tier, kubeconfigSecret: deleted.kubeconfigSecret },
  });
  return deleted;
}

/**
 * At worker start: the `local` cluster's registration when the environment configures one
 * (in-cluster service account or KUBECONFIG), and the workflows of every registered cluster
 * (a registration whose workflows were lost, or made while Temporal was down, gets them back).
 */
export async function ensureClusterWorkflows(
  ops: ClusterOps,
  env: Record<string, string | undefined> = process.env,
): Promise<string[]> {
  const source = localClusterSource(env);
  if (source)
    await ensureEnvironmentCluster({
      name: LOCAL_CLUSTER,
      namespace: DEFAULT_CLUSTER_NAMESPACE,
      displayName: source === 'in-cluster' ? 'local (in-cluster)' : 'local (KUBECONFIG)',
      tier: 'standard',
      region: '',
      kubeconfigSecret: source === 'in-cluster' ? 'in-cluster-service-account' : 'KUBECONFIG',
      source: 'environment',
    });
  const names = await listClusterNames();
  for (const name of names) await startClusterWorkflows(ops, name);
  return names;
}
