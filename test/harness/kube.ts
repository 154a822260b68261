import { CoreV1Api, KubeConfig, type V1Deployment } from '@kubernetes/client-node';
import { existsSync, mkdtempSync, rmSync } from 'fs';
import { readFile } from 'fs/promises';
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
  /**
   * The writes (create, update, patch, delete) to Deployments, their scale and pods the API
   * server has completed, oldest first, from its audit log. A write shows up just after its
   * response: wait for the one you expect (waitFor) before counting.
   */
  writes(filter?: WriteFilter): Promise<ApiWrite[]>;
}

export interface ApiWrite {
  verb: string;
  /** `deployments`, `pods` */
  resource: string;
  /** `scale` for a write through the scale subresource. */
  subresource?: string;
  namespace: string;
  name: string;
  user: string;
  userAgent: string;
  /** The HTTP status answered. */
  code: number;
  /**
   * `dryRun=All` in the request URI. A delete with a body takes its options from the body
   * only, so for deletes this says what the client asked for in the URI, not what the server did.
   */
  dryRun: boolean;
}

export type WriteFilter = Partial<Pick<ApiWrite, 'verb' | 'resource' | 'subresource' | 'name' | 'namespace'>>;

interface AuditEvent {
  auditID: string;
  stage: string;
  verb: string;
  requestURI: string;
  userAgent?: string;
  user?: { username?: string };
  objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string };
  responseStatus?: { code?: number };
}

/** The completed writes of an audit log (JSON lines), each request once. */
async function auditedWrites(logPath: string, filter: WriteFilter = {}): Promise<ApiWrite[]> {
  if (!existsSync(logPath)) return [];
  const seen = new Set<string>();
  const writes: ApiWrite[] = [];
  for (const line of (await readFile(logPath, 'utf8')).split('\n')) {
    if (!line.trim()) continue;
    let e: AuditEvent;
    try {
      e = JSON.parse(line) as AuditEvent;
    } catch {
      continue; // the last line may be half written
    }
    if (e.stage !== 'ResponseComplete' || seen.has(e.auditID)) continue;
    seen.add(e.auditID);
    const ref = e.objectRef ?? {};
    writes.push({
      verb: e.verb,
      resource: ref.resource ?? '',
      ...(ref.subresource && { subresource: ref.subresource }),
      namespace: ref.namespace ?? '',
      name: ref.name ?? '',
      user: e.user?.username ?? '',
      userAgent: e.userAgent ?? '',
      code: e.responseStatus?.code ?? 0,
      dryRun: /[?&]dryRun=All(&|$)/.test(e.requestURI),
    });
  }
  const keys = Object.keys(filter) as (keyof WriteFilter)[];
  return writes.filter((w) => keys.every((k) => filter[k] === undefined || w[k] === filter[k]));
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
 * dir, with the `default` namespace's service account in place so pods can be created, and
 * its writes to Deployments and pods audited (`writes()`).
 */
export async function useKube(opts: { controllerManager?: boolean; kwok?: boolean } = {}): Promise<KubeCluster> {
  const dir = mkdtempSync(path.join(tmpdir(), 'foghorn-kube-'));
  const auditLogPath = path.join(dir, 'audit.log');
  const kube = await startLocalKube({
    dir,
    ports: { etcd: await freePort(), etcdPeer: await freePort(), apiserver: await freePort() },
    auditLogPath,
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
    writes: (filter) => auditedWrites(auditLogPath, filter),
    stop: async () => {
      await kube.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
