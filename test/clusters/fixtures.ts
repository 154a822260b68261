import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { clusterSecretName } from '../../domain/cluster';
import { configureSecretKey, writeClusterSecret } from '../../store/cluster-secrets';
import { createCluster } from '../../store/clusters';
import { useKube } from '../harness/kube';
import { TEST_SECRET_KEY, useMongo } from '../harness/mongo';

export { TEST_SECRET_KEY };

/** Configures the test key again (useMongo sets it; tests that switch keys restore it with this). */
export function useTestSecretKey(): void {
  configureSecretKey(TEST_SECRET_KEY);
}

/** A kubeconfig with distinctive secret strings, for tests that never contact the cluster. */
export function fakeKubeconfig(opts: { server?: string; token?: string } = {}): string {
  const server = opts.server ?? 'https://127.0.0.1:1';
  const token = opts.token ?? 'fake-token-4f9c2a7e1b3d5c6a8e0f';
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: c1',
    '  cluster:',
    `    server: ${server}`,
    'users:',
    '- name: u1',
    '  user:',
    `    token: ${token}`,
    'contexts:',
    '- name: ctx',
    '  context: {cluster: c1, user: u1}',
    'current-context: ctx',
    '',
  ].join('\n');
}

/** A registration straight in the store (its secret sealed, as POST /clusters does), for activity tests. */
export async function registerTestCluster(name: string, kubeconfig: string): Promise<void> {
  const secret = clusterSecretName(name);
  await writeClusterSecret(secret, name, kubeconfig);
  await createCluster({
    name,
    namespace: 'default',
    displayName: name,
    tier: 'standard',
    region: '',
    kubeconfigSecret: secret,
    source: 'registered',
  });
}

/**
 * For activity tests against a real cluster: MongoDB, a control plane with one fake node, and
 * `cluster` registered with its admin kubeconfig.
 */
export async function useRegisteredKube(cluster: string) {
  const mongo = await useMongo();
  const kube = await useKube();
  await kube.addNode('kwok-node-1');
  await registerTestCluster(cluster, kube.kubeconfig);
  return {
    kube,
    apps: kube.kc.makeApiClient(AppsV1Api),
    core: kube.kc.makeApiClient(CoreV1Api),
    stop: async () => {
      await kube.stop();
      await mongo.stop();
    },
  };
}
