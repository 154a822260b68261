import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { Client, Connection, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { mkdtempSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import path from 'path';
import { startEmbeddedMongo } from '../../cli/embedded/mongo';
import type { ServerProcess } from '../../cli/embedded/process';
import { startEmbeddedTemporal } from '../../cli/embedded/temporal';
import { clusterWatchWorkflowId } from '../../domain/cluster';
import { clusterWatchWorkflow } from '../../workflows/cluster-watch';
import { deploymentManifest, useKube, type KubeCluster } from '../harness/kube';
import { freePort } from '../harness/ports';
import { killAll, spawnCli, survivors, until, waitPolling, type CliProcess } from '../harness/processes';

/**
 * kill -9 of the worker that runs a cluster's watch (issue 9 §3): the watch activity is retried
 * on a new worker, which resumes from the heartbeated checkpoint and ingestion's record — the
 * failure that began while no worker ran is detected, nothing known before is sent again.
 * Separate processes (`foghorn worker`, `foghorn api`) on a Temporal dev server, as in production.
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

it('resumes after kill -9 of its worker: no failure missed, none duplicated', async () => {
  const apps = kube.kc.makeApiClient(AppsV1Api);
  const core = kube.kc.makeApiClient(CoreV1Api);
  worker = await startWorker();
  // The local cluster's watch is started at process start (operations/clusters.ts) or here.
  await client.workflow
    .start(clusterWatchWorkflow, {
      taskQueue: TASK_QUEUE,
      workflowId: clusterWatchWorkflowId('local'),
      args: [{ cluster: 'local' }],
    })
    .catch((err) => {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    });
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
  /** Every payload in `value` (history events, pending activities), decoded. */
  const decoded = (value: unknown): string => {
    const out: string[] = [];
    JSON.stringify(value, (key, v: unknown) => {
      if (key === 'data' && typeof v === 'string') out.push(Buffer.from(v, 'base64').toString('utf8'));
      return v;
    });
    return out.join('\n');
  };
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
