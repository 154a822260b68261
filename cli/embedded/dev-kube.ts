import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { spawnSync } from 'child_process';
import path from 'path';
import { REPO_ROOT } from '../paths';
import { FAKE_NODE_ANNOTATION, kubeToolsInstalled, startLocalKube, type LocalKube } from './kube';

/** The fake nodes `foghorn dev --kube` keeps: enough to schedule a demo's workloads. */
const DEV_NODES = ['kwok-node-1', 'kwok-node-2'];

/**
 * The local control plane of `foghorn dev --kube`: built on first use (tools/kube/build.sh prints
 * its progress), state under the data dir, two fake nodes. Ports: the API server's and the next
 * two for etcd.
 */
export async function startDevKube(dir: string, port: number): Promise<LocalKube> {
  if (!kubeToolsInstalled()) {
    console.log('Building the local Kubernetes control plane (once; about 20 minutes on 2 cores)...');
    const build = spawnSync('bash', [path.join(REPO_ROOT, 'tools', 'kube', 'build.sh')], { stdio: 'inherit' });
    if (build.status !== 0) throw new Error('tools/kube/build.sh failed (see its output above)');
  }
  const kube = await startLocalKube({ dir, ports: { apiserver: port, etcd: port + 1, etcdPeer: port + 2 } });
  const kc = new KubeConfig();
  kc.loadFromString(kube.kubeconfig);
  const core = kc.makeApiClient(CoreV1Api);
  const resources = { cpu: '8', memory: '32Gi', pods: '110' };
  for (const name of DEV_NODES) {
    const exists = await core.readNode({ name }).then(
      () => true,
      (err: { code?: number }) => (err.code === 404 ? false : Promise.reject(err)),
    );
    if (!exists)
      await core.createNode({
        body: {
          metadata: { name, annotations: { [FAKE_NODE_ANNOTATION]: 'fake' }, labels: { type: 'kwok' } },
          status: { capacity: resources, allocatable: resources },
        },
      });
  }
  return kube;
}
