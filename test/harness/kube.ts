import { CoreV1Api, CustomObjectsApi, KubeConfig, type V1Deployment, type V1Pod } from '@kubernetes/client-node';
import { existsSync, mkdtempSync, rmSync } from 'fs';
import { mkdir, readFile, rm, writeFile } from 'fs/promises';
import { tmpdir } from 'os';
import path from 'path';
import {
  EMPTY_POD_LOG,
  FAKE_NODE_ANNOTATION,
  NO_PREVIOUS_POD_LOG,
  startLocalKube,
  type LocalKube,
} from '../../cli/embedded/kube';
import { freePort } from './ports';
import { until } from './processes';

export interface KubeCluster extends Omit<LocalKube, 'kubeconfigPath' | 'podLogsDir'> {
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
  /**
   * Gives one container of a pod (by name, or every pod matching `labelSelector` now) the log
   * lines `GET …/pods/{pod}/log?container=…` answers, and with `previous` those of
   * `previous=true` (without it, `previous=true` answers 400 as for a container that never
   * restarted). Resolves with the pods' names once the API server serves the lines. The pods must
   * be scheduled; a later call replaces the lines. Containers never given lines answer an empty
   * log (200). How: files under the state dir in the CRI log format, a KWOK `Logs` object per pod
   * (owned by the pod) naming them; KWOK's kubelet server reads them on each request.
   */
  setContainerLogs(logs: ContainerLogs): Promise<string[]>;
}

export interface ContainerLogs {
  /** Default `default`. */
  namespace?: string;
  /** One pod by name, or every pod `labelSelector` matches (at least one). */
  pod?: string;
  labelSelector?: string;
  container: string;
  /** One line each (no newline needed). */
  current: string[];
  previous?: string[];
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
  /** The `fieldManager` of the request URI (Foghorn's patches name `foghorn`), or ''. */
  fieldManager: string;
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
      fieldManager: decodeURIComponent(/[?&]fieldManager=([^&]*)/.exec(e.requestURI)?.[1] ?? ''),
    });
  }
  const keys = Object.keys(filter) as (keyof WriteFilter)[];
  return writes.filter((w) => keys.every((k) => filter[k] === undefined || w[k] === filter[k]));
}

/** Polls `check` until it holds; a failing probe counts as not yet (the control plane converges asynchronously). */
export const waitFor = (what: string, check: () => Promise<boolean>, timeoutMs = 90_000): Promise<void> =>
  until(what, () => check().catch(() => false), timeoutMs);

interface KwokLog {
  containers?: string[];
  logsFile?: string;
  previousLogsFile?: string;
}

const LOGS = { group: 'kwok.x-k8s.io', version: 'v1alpha1', plural: 'logs' };

/** Lines in the CRI log format the kubelet reads (`<RFC 3339 time> stdout F <line>`). */
const criLog = (lines: string[], at: Date): string =>
  lines
    .flatMap((l) => l.split('\n'))
    .map((l) => `${at.toISOString()} stdout F ${l}\n`)
    .join('');

/** What `GET …/log` answers for these lines. */
const served = (lines: string[]): string => lines.flatMap((l) => l.split('\n').map((x) => `${x}\n`)).join('');

async function setContainerLogs(kc: KubeConfig, podLogsDir: string, logs: ContainerLogs): Promise<string[]> {
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const namespace = logs.namespace ?? 'default';
  if (!logs.pod === !logs.labelSelector) throw new Error('setContainerLogs: give either pod or labelSelector');
  const pods: V1Pod[] = logs.pod
    ? [await core.readNamespacedPod({ name: logs.pod, namespace })]
    : (await core.listNamespacedPod({ namespace, labelSelector: logs.labelSelector })).items;
  if (pods.length === 0) throw new Error(`setContainerLogs: no pod matches ${logs.labelSelector} in ${namespace}`);
  for (const pod of pods) {
    const name = pod.metadata!.name!;
    const dir = path.join(podLogsDir, namespace, name);
    await mkdir(dir, { recursive: true });
    const current = path.join(dir, `${logs.container}.log`);
    const previous = path.join(dir, `${logs.container}.previous.log`);
    const now = Date.now();
    await writeFile(current, criLog(logs.current, new Date(now)));
    if (logs.previous) await writeFile(previous, criLog(logs.previous, new Date(now - 10_000)));
    else await rm(previous, { force: true });
    const entry: KwokLog = {
      containers: [logs.container],
      logsFile: current,
      previousLogsFile: logs.previous ? previous : path.join(podLogsDir, NO_PREVIOUS_POD_LOG),
    };
    const ref = { ...LOGS, namespace, name };
    const existing = (await custom
      .getNamespacedCustomObject(ref)
      .catch((err: { code?: number }) => (err.code === 404 ? undefined : Promise.reject(err)))) as
      { metadata: { resourceVersion: string }; spec: { logs: KwokLog[] } } | undefined;
    // A Logs object replaces the default (empty) log for all the pod's containers: keep the
    // others' entries and, last, a default entry (no containers) for the rest.
    const others = (existing?.spec.logs ?? []).filter(
      (l) => l.containers?.length && !l.containers.includes(logs.container),
    );
    const body = {
      apiVersion: `${LOGS.group}/${LOGS.version}`,
      kind: 'Logs',
      metadata: {
        name,
        namespace,
        ...(existing && { resourceVersion: existing.metadata.resourceVersion }),
        ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name, uid: pod.metadata!.uid! }],
      },
      spec: {
        logs: [
          ...others,
          entry,
          {
            logsFile: path.join(podLogsDir, EMPTY_POD_LOG),
            previousLogsFile: path.join(podLogsDir, NO_PREVIOUS_POD_LOG),
          },
        ],
      },
    };
    if (existing) await custom.replaceNamespacedCustomObject({ ...ref, body });
    else await custom.createNamespacedCustomObject({ ...LOGS, namespace, body });
    // KWOK learns of the object through a watch: wait until the API server serves the lines.
    const read = (previous: boolean) =>
      core.readNamespacedPodLog({ name, namespace, container: logs.container, previous });
    await waitFor(`the logs of ${namespace}/${name}`, async () => {
      if ((await read(false)) !== served(logs.current)) return false;
      if (logs.previous) return (await read(true)) === served(logs.previous);
      return read(true).then(
        () => false,
        (err: { code?: number }) => err.code === 400,
      );
    });
  }
  return pods.map((p) => p.metadata!.name!);
}

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
    ports: { etcd: await freePort(), etcdPeer: await freePort(), apiserver: await freePort(), kwok: await freePort() },
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
  const { kubeconfigPath: _path, podLogsDir, ...rest } = kube;
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
    setContainerLogs: (logs) => setContainerLogs(kc, podLogsDir, logs),
    stop: async () => {
      await kube.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
