import { AppsV1Api, CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { Client, Connection, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { mkdtempSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import path from 'path';
import { startEmbeddedMongo } from '../../cli/embedded/mongo';
import type { ServerProcess } from '../../cli/embedded/process';
import { startEmbeddedTemporal } from '../../cli/embedded/temporal';
import { clusterWatchWorkflowId } from '../../domain/cluster';
import type { WatchCheckpoint } from '../../domain/kube-watch-state';
import { listChanges, type ChangeRecord } from '../../store/changes';
import { connectMongo, disconnectMongo, mongoReady } from '../../store/connection';
import { clusterWatchWorkflow } from '../../workflows/cluster-watch';
import { deploymentManifest, useKube, type KubeCluster } from '../harness/kube';
import { freePort } from '../harness/ports';
import { killAll, spawnCli, survivors, until, waitPolling, type CliProcess } from '../harness/processes';

/**
 * kill -9 of the worker that runs a cluster's watch (issue 9 §3): the watch activity is retried
 * on a new worker, which resumes from the heartbeated checkpoint and ingestion's record — the
 * failure that began while no worker ran is detected, nothing known before is sent again.
 * Separate processes (`foghorn worker`, `foghorn api`) on a Temporal dev server, as in production.
 * And the change record (issue 60): killed mid-rollout, the watch loses no rollout and records
 * none twice.
 */

jest.setTimeout(600_000);

const TOKEN = 'fh_watch-crash-admin-token-0123456789abcdefghij';
const TASK_QUEUE = 'foghorn';
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- API JSON
type Json = any;

let kube: KubeCluster;
let dir: string;
const servers: ServerProcess[] = [];
let env: NodeJS.ProcessEnv;
let api: string;
let temporalAddress: string;
let connection: Connection;
let client: Client;
let apiProc: CliProcess;
let worker: CliProcess;
let temporalPort: number;

beforeAll(async () => {
  kube = await useKube();
  await kube.addNode('node-a');
  dir = mkdtempSync(path.join(tmpdir(), 'foghorn-watch-crash-'));
  writeFileSync(path.join(dir, 'kubeconfig'), kube.kubeconfig, { mode: 0o600 });
  const mongo = await startEmbeddedMongo({ port: await freePort() });
  servers.push(mongo);
  temporalPort = await freePort();
  const temporal = await startEmbeddedTemporal({ port: temporalPort, dbFile: path.join(dir, 'temporal.db') });
  servers.push(temporal);
  temporalAddress = temporal.address;
  env = {
    FOGHORN_DATA_DIR: path.join(dir, 'data'),
    MONGODB_URI: mongo.uri,
    TEMPORAL_ADDRESS: temporal.address,
    FOGHORN_API_ADDR: `127.0.0.1:${await freePort()}`,
    FOGHORN_ADMIN_TOKEN: TOKEN,
    FOGHORN_LOG_LEVEL: 'warn',
    FOGHORN_LLM_BASE_URL: '',
    FOGHORN_WEBHOOK_ADDR: '',
    KUBECONFIG: path.join(dir, 'kubeconfig'),
    // Long enough that no DeploymentFailing joins during the test: the counts stay exact.
    FOGHORN_WATCH_NOT_READY_AFTER: '1h',
  };
  api = `http://${env.FOGHORN_API_ADDR}/api/v1`;
  apiProc = spawnCli(['api'], env);
  await until(
    'api ready',
    () =>
      fetch(`http://${env.FOGHORN_API_ADDR}/readyz`).then(
        (r) => r.status === 200,
        () => false,
      ),
    180_000,
    apiProc.output,
  );
  connection = await Connection.connect({ address: temporal.address });
  client = new Client({ connection });
});

afterAll(async () => {
  if (mongoReady()) await disconnectMongo();
  await killAll();
  expect(await survivors()).toEqual([]);
  await connection?.close();
  for (const s of servers.reverse()) await s.stop();
  await kube?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function get(pathAndQuery: string): Promise<Json> {
  const res = await fetch(`${api}${pathAndQuery}`, { headers: { authorization: `Bearer ${TOKEN}` } });
  if (res.status !== 200) throw new Error(`GET ${pathAndQuery}: ${res.status} ${await res.text()}`);
  return res.json();
}

const incidentsOf = async (resource: string): Promise<Json[]> =>
  (await get(`/incidents?resource=${encodeURIComponent(resource)}&pageSize=100`)).items;

const correlated = async (incident: string): Promise<Json[]> =>
  (await get(`/incidents/${incident}/timeline`)).events.filter((e: Json) => e.type === 'SignalCorrelated');

async function startWorker(): Promise<CliProcess> {
  const worker = spawnCli(['worker'], env);
  await waitPolling(temporalAddress, TASK_QUEUE, worker);
  return worker;
}

/** The local cluster's watch (started at process start by operations/clusters.ts, or here). */
async function startWatch(): Promise<void> {
  await client.workflow
    .start(clusterWatchWorkflow, {
      taskQueue: TASK_QUEUE,
      workflowId: clusterWatchWorkflowId('local'),
      args: [{ cluster: 'local' }],
    })
    .catch((err) => {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    });
}

/** Every payload in `value` (history events, pending activities), decoded. */
const decoded = (value: unknown): string => {
  const out: string[] = [];
  JSON.stringify(value, (key, v: unknown) => {
    if (key === 'data' && typeof v === 'string') out.push(Buffer.from(v, 'base64').toString('utf8'));
    return v;
  });
  return out.join('\n');
};

it('resumes after kill -9 of its worker: no failure missed, none duplicated', async () => {
  const apps = kube.kc.makeApiClient(AppsV1Api);
  const core = kube.kc.makeApiClient(CoreV1Api);
  worker = await startWorker();
  await startWatch();
  const handle = client.workflow.getHandle(clusterWatchWorkflowId('local'));

  // Before the crash: a 3-pod crash loop, its incident and the two other pods correlated.
  await apps.createNamespacedDeployment({ namespace: 'default', body: deploymentManifest('before', 3, 'crashloop') });
  let before: Json[] = [];
  await until(
    'the incident of Deployment/before with its 2 other pods',
    async () => {
      before = await incidentsOf('Deployment/before');
      return before.length === 1 && (await correlated(before[0].name)).length >= 2;
    },
    180_000,
    worker.output,
  );
  const correlatedBefore = (await correlated(before[0].name)).length;
  expect(correlatedBefore).toBe(2);

  // kill -9 mid-watch; a new workload fails while no worker runs.
  await worker.crash();
  await apps.createNamespacedDeployment({ namespace: 'default', body: deploymentManifest('during', 2, 'oomkilled') });
  await until(
    'both pods of Deployment/during OOMKilled (while no worker runs)',
    async () => {
      const pods = (await core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=during' })).items;
      return (
        pods.length === 2 &&
        pods.every((p) => p.status?.containerStatuses?.[0]?.lastState?.terminated?.reason === 'OOMKilled')
      );
    },
    180_000,
  );
  expect(await incidentsOf('Deployment/during')).toEqual([]);

  // A new worker takes the watch over (after the heartbeat timeout) and catches up.
  worker = await startWorker();
  let during: Json[] = [];
  await until(
    'the incident of Deployment/during with its other pod',
    async () => {
      during = await incidentsOf('Deployment/during');
      return during.length === 1 && (await correlated(during[0].name)).length >= 1;
    },
    240_000,
    worker.output,
  );
  const detail = await get(`/incidents/${during[0].name}`);
  expect(detail.spec).toMatchObject({ signalType: 'OOMKilled', detectionSource: 'kubernetes-watcher' });
  expect(await correlated(during[0].name)).toHaveLength(1);

  // Nothing known before the crash came again: one incident, no extra correlated signal.
  expect(await incidentsOf('Deployment/before')).toHaveLength(1);
  expect(await correlated(before[0].name)).toHaveLength(correlatedBefore);

  // The workflow carries the cluster's name and the heartbeat a checkpoint, never credentials.
  const history = decoded(await handle.fetchHistory());
  expect(history).toContain('"cluster":"local"');
  expect(history).not.toContain(kube.token);
  let heartbeat = '';
  await until(
    'a heartbeat with the checkpoint of both deployments',
    async () => {
      heartbeat = decoded((await handle.describe()).raw.pendingActivities);
      return heartbeat.includes('default/Deployment/during') && heartbeat.includes('default/Deployment/before');
    },
    120_000,
  );
  expect(heartbeat).toContain('"resourceVersions":{');
  expect(heartbeat).not.toContain(kube.token);
  expect(worker.output()).not.toContain(kube.token);
});

it('records the signals while Temporal is down; the workflow takes them once it is back', async () => {
  const apps = kube.kc.makeApiClient(AppsV1Api);
  const core = kube.kc.makeApiClient(CoreV1Api);
  const temporal = servers.pop()!;
  await temporal.stop();
  await apps.createNamespacedDeployment({
    namespace: 'default',
    body: deploymentManifest('no-temporal', 2, 'crashloop'),
  });
  await until(
    'both pods of Deployment/no-temporal crash-looping',
    async () => {
      const pods = (await core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=no-temporal' })).items;
      return (
        pods.length === 2 &&
        pods.every((p) => p.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'CrashLoopBackOff')
      );
    },
    180_000,
  );
  // Ingestion needs MongoDB only (issue 14): the incident is recorded with Temporal down, and
  // its workflow is started (and told of the other pod's signal) when Temporal is back.
  await until(
    'the incident of Deployment/no-temporal recorded while Temporal is down',
    async () => (await incidentsOf('Deployment/no-temporal').catch(() => [])).length === 1,
    120_000,
    worker.output,
  );
  expect(worker.output()).not.toContain('cluster watch cannot deliver a signal');
  servers.push(await startEmbeddedTemporal({ port: temporalPort, dbFile: path.join(dir, 'temporal.db') }));

  let incidents: Json[] = [];
  await until(
    'the incident of Deployment/no-temporal with both pods',
    async () => {
      incidents = await incidentsOf('Deployment/no-temporal').catch(() => []);
      if (incidents.length !== 1) return false;
      const pods = (await core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=no-temporal' })).items;
      // Each pod is on the timeline: the opening one in Detection, the other as SignalCorrelated.
      const events: Json[] = (await get(`/incidents/${incidents[0].name}/timeline`)).events;
      return pods.every((p) => events.some((e: Json) => String(e.message).includes(p.metadata!.name!)));
    },
    300_000,
    worker.output,
  );
  expect(await incidentsOf('Deployment/no-temporal')).toHaveLength(1);
  expect((await get(`/incidents/${incidents[0].name}`)).spec.detectionSource).toBe('kubernetes-watcher');
});

// --- The change record across kill -9 mid-rollout (issue 60) --------------------------------

const ROLLOUTS = [0, 1, 2, 3, 4].map((i) => `rollout-${i}`);
/** Mounted by rollout-0, changed while the rollouts before the kill are made. */
const CONFIG_BEFORE = 'rollout-config-a';
/** Mounted by rollout-1, changed while no worker runs. */
const CONFIG_DURING = 'rollout-config-b';
const MOUNTS: Record<string, string> = { 'rollout-0': CONFIG_BEFORE, 'rollout-1': CONFIG_DURING };

const imageOf = (name: string, n: number) => `example.com/${name}:${n}`;
const byNumber = (a: number, b: number) => a - b;

/** A Deployment's revisions as the API server has them (its ReplicaSets' annotations): the truth. */
async function revisionsOnServer(apps: AppsV1Api, name: string): Promise<{ revision: number; image: string }[]> {
  const { items } = await apps.listNamespacedReplicaSet({ namespace: 'default', labelSelector: `app=${name}` });
  return items
    .filter((rs) => rs.metadata?.ownerReferences?.some((o) => o.controller && o.name === name))
    .map((rs) => ({
      revision: Number(rs.metadata!.annotations!['deployment.kubernetes.io/revision']),
      image: rs.spec!.template!.spec!.containers[0].image!,
    }))
    .sort((a, b) => a.revision - b.revision);
}

/** The changes GET /changes lists of exactly this object (not those that only concern it). */
const changesOf = async (resource: string): Promise<Json[]> =>
  (await get(`/changes?cluster=local&resource=${encodeURIComponent(resource)}&pageSize=100`)).items.filter(
    (c: Json) => c.resource === resource,
  );

/** The change record's documents (the store, not the API) about the objects of this test. */
async function storedChanges(): Promise<ChangeRecord[]> {
  const ours = new Set([
    ...ROLLOUTS.map((n) => `Deployment/${n}`),
    `ConfigMap/${CONFIG_BEFORE}`,
    `ConfigMap/${CONFIG_DURING}`,
  ]);
  const { items } = await listChanges({ cluster: 'local', namespace: 'default' }, 1, 10_000);
  return items.filter((c) => ours.has(c.resource));
}

/**
 * The revisions recorded of each Deployment, from the store: waits poll it rather than the API,
 * whose per-token rate limit a 250 ms poll of five resources would exceed.
 */
async function storedRevisions(): Promise<Map<string, number[]>> {
  const stored = await storedChanges();
  return new Map(
    ROLLOUTS.map((n) => [
      n,
      stored
        .filter((c) => c.resource === `Deployment/${n}` && c.revision !== undefined && c.revision !== null)
        .map((c) => c.revision!)
        .sort(byNumber),
    ]),
  );
}

const recordedAtById = async (): Promise<Map<string, number>> =>
  new Map((await storedChanges()).map((c) => [c.id, new Date(c.recordedAt).getTime()]));

/** The checkpoint the server holds from the watch activity's last heartbeat: what a new worker resumes from. */
async function heartbeatCheckpoint(): Promise<WatchCheckpoint | undefined> {
  const { raw } = await client.workflow.getHandle(clusterWatchWorkflowId('local')).describe();
  for (const a of raw.pendingActivities ?? []) {
    const data = a.heartbeatDetails?.payloads?.[0]?.data;
    if (data) return JSON.parse(Buffer.from(data).toString('utf8')) as WatchCheckpoint;
  }
  return undefined;
}

it('records every rollout once across a kill -9 of its worker mid-rollout: none lost, none twice', async () => {
  const apps = kube.kc.makeApiClient(AppsV1Api);
  const core = kube.kc.makeApiClient(CoreV1Api);
  if (!mongoReady()) await connectMongo(env.MONGODB_URI!);
  // The tests before leave a worker watching; run alone, this one starts them.
  if (!worker || worker.child.exitCode !== null || worker.child.signalCode !== null) worker = await startWorker();
  await startWatch();

  const setImage = (name: string, n: number) =>
    apps.patchNamespacedDeployment(
      {
        name,
        namespace: 'default',
        body: { spec: { template: { spec: { containers: [{ name: 'app', image: imageOf(name, n) }] } } } },
        fieldManager: 'ci',
      },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
  const setConfig = (name: string, data: Record<string, string>) =>
    core.patchNamespacedConfigMap(
      { name, namespace: 'default', body: { data } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );

  // Five Deployments at revision 1, two of them mounting a ConfigMap each.
  for (const name of [CONFIG_BEFORE, CONFIG_DURING])
    await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name }, data: { 'app.yaml': 'timeout: 5s' } },
    });
  for (const name of ROLLOUTS) {
    const manifest = deploymentManifest(name, 2);
    const spec = manifest.spec!.template.spec!;
    spec.containers[0].image = imageOf(name, 1);
    if (MOUNTS[name]) {
      spec.containers[0].volumeMounts = [{ name: 'config', mountPath: '/etc/app' }];
      spec.volumes = [{ name: 'config', configMap: { name: MOUNTS[name] } }];
    }
    await apps.createNamespacedDeployment({ namespace: 'default', body: manifest });
  }
  await until(
    'revision 1 of every Deployment recorded',
    async () => [...(await storedRevisions()).values()].every((r) => r.includes(1)),
    240_000,
    worker.output,
  );
  // A ConfigMap's first sight is the base its changes are diffed against: the checkpoint the
  // server holds (what the next worker resumes from) has both before anything changes.
  await until(
    'the heartbeated checkpoint holds both ConfigMaps',
    async () => {
      const configs = (await heartbeatCheckpoint().catch(() => undefined))?.changes?.configs ?? {};
      return [CONFIG_BEFORE, CONFIG_DURING].every((n) => configs[`default/ConfigMap/${n}`]);
    },
    120_000,
    worker.output,
  );

  // Watched: every Deployment to a new image twice in quick succession, and ConfigMap A changed.
  for (const name of ROLLOUTS) {
    await setImage(name, 2);
    await setImage(name, 3);
  }
  const configBefore = await setConfig(CONFIG_BEFORE, { 'app.yaml': 'timeout: 1ms' });
  await until(
    'a rollout of the burst recorded',
    async () => [...(await storedRevisions()).values()].some((r) => r.some((n) => n > 1)),
    120_000,
    worker.output,
  );
  // More rollouts, and kill -9 of the worker while the last of them are being made.
  for (const name of ROLLOUTS.slice(0, 3)) await setImage(name, 4);
  const beforeKill = await recordedAtById();
  await Promise.all([
    worker.crash(),
    (async () => {
      for (const name of ROLLOUTS.slice(3)) {
        await setImage(name, 4);
        await setImage(name, 5);
      }
    })(),
  ]);
  const atKill = await recordedAtById();

  // While no worker runs: every Deployment rolled out again (two of them twice), ConfigMap B changed.
  for (const name of ROLLOUTS) await setImage(name, 6);
  for (const name of ROLLOUTS.slice(0, 2)) await setImage(name, 7);
  const configDuring = await setConfig(CONFIG_DURING, { 'app.yaml': 'timeout: 2s', 'extra.yaml': 'retries: 3' });
  const lastImage = (name: string) => imageOf(name, ROLLOUTS.indexOf(name) < 2 ? 7 : 6);
  await until(
    'the ReplicaSet of every last template made (no worker running)',
    async () =>
      (
        await Promise.all(
          ROLLOUTS.map(async (name) => {
            const d = await apps.readNamespacedDeployment({ name, namespace: 'default' });
            const revisions = await revisionsOnServer(apps, name);
            return (
              (d.status?.observedGeneration ?? 0) >= (d.metadata?.generation ?? 1) &&
              revisions.at(-1)?.image === lastImage(name) &&
              d.metadata?.annotations?.['deployment.kubernetes.io/revision'] === String(revisions.at(-1)?.revision)
            );
          }),
        )
      ).every(Boolean),
    180_000,
  );
  // Nothing records them meanwhile: the kill left no watcher behind.
  const made = new Map(await Promise.all(ROLLOUTS.map(async (n) => [n, await revisionsOnServer(apps, n)] as const)));
  const stored = await storedChanges();
  for (const [name, revisions] of made) {
    const unwatched = revisions.filter((r) => /:[67]$/.test(r.image)).map((r) => r.revision);
    expect(unwatched.length).toBeGreaterThan(0);
    expect(stored.filter((c) => c.resource === `Deployment/${name}` && unwatched.includes(c.revision!))).toEqual([]);
  }
  expect(stored.filter((c) => c.resource === `ConfigMap/${CONFIG_DURING}`)).toEqual([]);

  // A new worker takes the watch over (after the heartbeat timeout) and records what is missing.
  worker = await startWorker();
  await until(
    'every revision and both ConfigMap changes recorded',
    async () => {
      const recorded = await storedRevisions();
      const configs = new Set((await storedChanges()).map((c) => c.resource));
      return (
        [...made].every(
          ([n, revisions]) => JSON.stringify(recorded.get(n)) === JSON.stringify(revisions.map((r) => r.revision)),
        ) &&
        configs.has(`ConfigMap/${CONFIG_BEFORE}`) &&
        configs.has(`ConfigMap/${CONFIG_DURING}`)
      );
    },
    300_000,
    worker.output,
  );
  // Its checkpoint moves past them only once they are stored: then it has nothing more to record.
  await until(
    "the new watcher's heartbeated checkpoint holds every revision",
    async () => {
      const revisions = (await heartbeatCheckpoint().catch(() => undefined))?.changes?.revisions ?? {};
      return ROLLOUTS.every((n) => revisions[`default/Deployment/${n}`] === made.get(n)!.at(-1)!.revision);
    },
    120_000,
    worker.output,
  );

  // Every revision the API server made has exactly one Rollout change, against the revision
  // before it, with the image it changed.
  let total = 0;
  for (const name of ROLLOUTS) {
    const truth = await revisionsOnServer(apps, name);
    expect(new Set(truth.map((r) => r.image)).size).toBe(truth.length); // no ReplicaSet reused
    const changes = await changesOf(`Deployment/${name}`);
    expect(changes).toHaveLength(truth.length);
    expect(changes.map((c) => c.revision).sort(byNumber)).toEqual(truth.map((r) => r.revision));
    truth.forEach((r, i) => {
      const change = changes.find((c) => c.revision === r.revision);
      expect(change).toMatchObject({ id: `local|default/Deployment/${name}|revision|${r.revision}`, type: 'Rollout' });
      const previous = truth[i - 1];
      if (!previous) return expect(change.previousRevision).toBeUndefined();
      expect(change.previousRevision).toBe(previous.revision);
      expect(change.diff).toEqual([{ field: 'image app', from: previous.image, to: r.image }]);
    });
    total += truth.length;
  }
  // Each ConfigMap change once: the one made before the kill, the one made while no worker ran.
  const [before, during] = await Promise.all([
    changesOf(`ConfigMap/${CONFIG_BEFORE}`),
    changesOf(`ConfigMap/${CONFIG_DURING}`),
  ]);
  expect(before).toHaveLength(1);
  expect(before[0]).toMatchObject({
    id: `local|default/ConfigMap/${CONFIG_BEFORE}|content|${configBefore.metadata!.resourceVersion}`,
    type: 'Config',
    workloads: ['Deployment/rollout-0'],
  });
  expect(before[0].diff).toContainEqual({ field: 'keys', from: '', to: 'changed app.yaml' });
  expect(during).toHaveLength(1);
  expect(during[0]).toMatchObject({
    id: `local|default/ConfigMap/${CONFIG_DURING}|content|${configDuring.metadata!.resourceVersion}`,
    type: 'Config',
    workloads: ['Deployment/rollout-1'],
  });
  expect(during[0].diff).toEqual(
    expect.arrayContaining([
      { field: 'keys', from: '', to: 'added extra.yaml' },
      { field: 'keys', from: '', to: 'changed app.yaml' },
    ]),
  );
  total += 2;

  // Nothing written twice: the store holds exactly the truth, and what was recorded before the
  // kill was not written again (its recordedAt is the first write's).
  const after = await recordedAtById();
  expect(after.size).toBe(total);
  expect((await storedChanges()).length).toBe(total);
  expect(beforeKill.size).toBeGreaterThan(ROLLOUTS.length);
  for (const [id, at] of [...beforeKill, ...atKill])
    expect({ id, recordedAt: after.get(id) }).toEqual({ id, recordedAt: at });
});
