import { CoreV1Api, KubeConfig, type V1Deployment } from '@kubernetes/client-node';
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import path from 'path';
import { FAKE_NODE_ANNOTATION, startLocalKube, type LocalKube } from '../../cli/embedded/kube';
import { freePort } from './ports';
import { until } from './processes';

export interface KubeCluster extends Omit<LocalKube, 'kubeconfigPath'> {
  /** A client configuration for `admin`. */
  kc: KubeConfig;
  /** A KWOK-managed fake node (4 CPUs, 16Gi, 110 pods); resolves once it is Ready. */
  addNode(name: string): Promise<void>;
}

/** Polls `check` until it holds; a failing probe counts as not yet (the control plane converges asynchronously). */
export const waitFor = (what: string, check: () => Promise<boolean>, timeoutMs = 90_000): Promise<void> =>
  until(what, () => check().catch(() => false), timeoutMs);

/**
 * A Deployment of `replicas` pods labelled `app: <name>`; `sim` (crashloop, oomkilled, imagepull)
 * makes its pods fail (tools/kube/stages/failures.yaml).
 */
export function deploymentManifest(name: string, replicas: number, sim?: string, namespace = 'default'): V1Deployment {
  return {
    metadata: { name, namespace },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name, ...(sim && { sim }) } },
        spec: { containers: [{ name: 'app', image: `example.com/${name}:1` }] },
      },
    },
  };
}

/**
 * A real control plane for one suite (cli/embedded/kube.ts) on free loopback ports in a temp
 * dir, with the `default` namespace's service account in place so pods can be created.
 */
export async function useKube(opts: { controllerManager?: boolean; kwok?: boolean } = {}): Promise<KubeCluster> {
  const dir = mkdtempSync(path.join(tmpdir(), 'foghorn-kube-'));
  const kube = await startLocalKube({
    dir,
    ports: { etcd: await freePort(), etcdPeer: await freePort(), apiserver: await freePort() },
    ...opts,
  });
  const kc = new KubeConfig();
  kc.loadFromString(kube.kubeconfig);
  const core = kc.makeApiClient(CoreV1Api);
  try {
    if (opts.controllerManager !== false)
      await waitFor('the default service account', async () => {
        await core.readNamespacedServiceAccount({ name: 'default', namespace: 'default' });
        return true;
      });
  } catch (err) {
    await kube.stop();
    throw err;
  }
  const { kubeconfigPath: _path, ...rest } = kube;
  return {
    ...rest,
    kc,
    addNode: async (name) => {
      const resources = { cpu: '4', memory: '16Gi', pods: '110' };
      await core.createNode({
        body: {
          metadata: { name, annotations: { [FAKE_NODE_ANNOTATION]: 'fake' }, labels: { type: 'kwok' } },
          status: { capacity: resources, allocatable: resources },
        },
      });
      await waitFor(`node ${name} Ready`, async () => {
        const node = await core.readNode({ name });
        return node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
      });
    },
    stop: async () => {
      await kube.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
