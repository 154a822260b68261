import { AppsV1Api, CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { mkdtempSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import path from 'path';
import { Writable } from 'stream';
import { ClusterWatcher, type KnownIncident } from '../../activities/kube-watch/engine';
import { createLogger } from '../../api/observability';
import { clusterWatchWorkflowId } from '../../domain/cluster';
import { getIncident } from '../../store/incidents';
import { installRuntime } from '../../worker/worker';
import { deploymentManifest, useKube, type KubeCluster } from '../harness/kube';
import { useLlmServer } from '../harness/llm-server';
import { useStack } from '../harness/stack';
import { clusterWatchWorkflow } from '../../workflows/cluster-watch';

/**
 * The cluster watcher against a real kube-apiserver with KWOK's fake kubelets (issue 9 §3): the
 * cluster's own failures become incidents through the same ingestion as alerts. The LLM is held
 * so incidents stay in Analyzing (an Escalated incident is not resolved at source).
 */

jest.setTimeout(300_000);

// The worker's log lines (SDK, workflows, activities), as the product writes them.
const logged: string[] = [];
installRuntime(
  createLogger('info', {
    stream: new Writable({
      write(chunk: Buffer, _enc, done) {
        logged.push(chunk.toString('utf8'));
        done();
      },
    }),
    pretty: false,
  }),
);

let kube: KubeCluster;
let stack: Awaited<ReturnType<typeof useStack>>;
let llm: Awaited<ReturnType<typeof useLlmServer>>;
let apps: AppsV1Api;
let core: CoreV1Api;
let watch: WorkflowHandle;
let dir: string;
const savedKubeconfig = process.env.KUBECONFIG;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- API JSON
type Json = any;

beforeAll(async () => {
  kube = await useKube();
  await kube.addNode('node-a');
  await kube.addNode('node-b');
  apps = kube.kc.makeApiClient(AppsV1Api);
  core = kube.kc.makeApiClient(CoreV1Api);
  // The `local` cluster comes from KUBECONFIG (activities/kube/client.ts).
  dir = mkdtempSync(path.join(tmpdir(), 'foghorn-watch-'));
  writeFileSync(path.join(dir, 'kubeconfig'), kube.kubeconfig, { mode: 0o600 });
  process.env.KUBECONFIG = path.join(dir, 'kubeconfig');
  llm = await useLlmServer(() => ({ content: '{}' }));
  llm.hold();
  stack = await useStack({
    // Real time, as the cluster's: its plans' approvals are cancelled as the alerts clear, which
    // can leave a workflow stuck on the time-skipping server (see realTime).
    realTime: true,
    env: {
      FOGHORN_LLM_BASE_URL: llm.baseUrl,
      FOGHORN_LLM_MODEL: 'test-model',
      FOGHORN_WATCH_NOT_READY_AFTER: '30s',
    },
  });
  watch = await stack.client.workflow.start(clusterWatchWorkflow, {
    taskQueue: stack.wf.taskQueue,
    workflowId: clusterWatchWorkflowId('local'),
    args: [{ cluster: 'local' }],
  });
});

afterAll(async () => {
  // Whatever the watcher logged (errors from the API server included) never carries a credential.
  if (kube) expect(logged.join('')).not.toContain(kube.token);
  await watch?.cancel().catch(() => undefined);
  await stack?.stop();
  await llm?.stop();
  await kube?.stop();
  if (savedKubeconfig === undefined) delete process.env.KUBECONFIG;
  else process.env.KUBECONFIG = savedKubeconfig;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function incidentsOf(resource: string): Promise<Json[]> {
  const res = await stack.call('GET', `/api/v1/incidents?resource=${encodeURIComponent(resource)}&pageSize=100`);
  expect(res.status).toBe(200);
  return res.body.items;
}

const nameOf = (i: Json): string => i.name;

async function timeline(incident: string): Promise<Json[]> {
  const res = await stack.call('GET', `/api/v1/incidents/${incident}/timeline`);
  expect(res.status).toBe(200);
  return res.body.events;
}

async function detail(incident: string): Promise<Json> {
  const res = await stack.call('GET', `/api/v1/incidents/${incident}`);
  expect(res.status).toBe(200);
  return res.body;
}

it('a crash-looping Deployment is one incident with its other pods correlated, resolved at source on recovery', async () => {
  await apps.createNamespacedDeployment({ namespace: 'default', body: deploymentManifest('crashy', 3, 'crashloop') });

  const [incident] = await stack.eventually(
    () => incidentsOf('Deployment/crashy'),
    (items) => items.length > 0,
    120_000,
  );
  const name = nameOf(incident);
  const first = await detail(name);
  expect(first.spec).toMatchObject({
    resource: 'Deployment/crashy',
    signalType: 'CrashLoopBackOff',
    detectionSource: 'kubernetes-watcher',
    severity: 'high',
  });
  expect(first.metadata.namespace).toBe('default');
  expect(first.metadata.labels).toMatchObject({ deployment: 'crashy', reason: 'CrashLoopBackOff', container: 'app' });

  // The two other pods join as correlated signals, once each (restarts are not news).
  const pods = (await core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=crashy' })).items.map(
    (p) => p.metadata!.name!,
  );
  expect(pods).toHaveLength(3);
  const events = await stack.eventually(
    () => timeline(name),
    (items) => items.filter((e: Json) => e.type === 'SignalCorrelated').length >= 2,
    120_000,
  );
  const firstPod = first.metadata.labels.pod as string;
  for (const pod of pods.filter((p) => p !== firstPod))
    expect(events.filter((e: Json) => e.type === 'SignalCorrelated' && String(e.message).includes(pod))).toHaveLength(
      1,
    );
  expect(
    events.filter((e: Json) => String(e.message).includes(firstPod) && e.type === 'SignalCorrelated'),
  ).toHaveLength(0);
  expect(await incidentsOf('Deployment/crashy')).toHaveLength(1);

  // Recovery: the pod template loses its failure; the new pods run, the crashing ones go.
  await apps.patchNamespacedDeployment(
    {
      name: 'crashy',
      namespace: 'default',
      body: [{ op: 'remove', path: '/spec/template/metadata/labels/sim' }],
    },
    setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
  );
  const resolved = await stack
    .eventually(
      () => detail(name),
      (d) => d.status.state === 'Resolved',
      120_000,
    )
    .catch(async (err: Error) => {
      // What the incident and its plans went through, should this ever fail again.
      const events = (await timeline(name)).map((e: Json) => `${e.timestamp} ${e.type}: ${e.message}`);
      const plans = (await stack.call('GET', `/api/v1/remediations?incident=${name}`)).body.items;
      throw new Error(`${err.message}\ntimeline:\n${events.join('\n')}\nplans: ${JSON.stringify(plans)}`);
    });
  expect(resolved.status.resolution).toBe('Resolved at source');
  expect(await incidentsOf('Deployment/crashy')).toHaveLength(1);
});

it('an OOMKilled container is an OOMKilled incident', async () => {
  await apps.createNamespacedDeployment({ namespace: 'default', body: deploymentManifest('hungry', 1, 'oomkilled') });
  const [incident] = await stack.eventually(
    () => incidentsOf('Deployment/hungry'),
    (items) => items.length > 0,
    120_000,
  );
  const d = await detail(nameOf(incident));
  expect(d.spec).toMatchObject({ signalType: 'OOMKilled', detectionSource: 'kubernetes-watcher', severity: 'high' });
  expect(d.metadata.labels).toMatchObject({ reason: 'OOMKilled', exitCode: '137', container: 'app' });
});

it('a NotReady node is a Node/<name> incident, resolved at source when it is Ready again', async () => {
  await core.patchNode(
    { name: 'node-b', body: { metadata: { labels: { 'node-not-ready.stage.kwok.x-k8s.io': 'true' } } } },
    setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
  );
  const [incident] = await stack.eventually(
    () => incidentsOf('Node/node-b'),
    (items) => items.length > 0,
    120_000,
  );
  const name = nameOf(incident);
  const d = await detail(name);
  expect(d.spec).toMatchObject({
    resource: 'Node/node-b',
    signalType: 'Custom',
    severity: 'critical',
    detectionSource: 'kubernetes-watcher',
  });
  expect(d.metadata.labels).toMatchObject({ node: 'node-b', reason: 'NodeNotReady' });

  await core.patchNode(
    { name: 'node-b', body: { metadata: { labels: { 'node-not-ready.stage.kwok.x-k8s.io': null } } } },
    setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
  );
  const resolved = await stack.eventually(
    () => detail(name),
    (x) => x.status.state === 'Resolved',
    120_000,
  );
  expect(resolved.status.resolution).toBe('Resolved at source');
});

it('a bare pod that cannot pull its image is a Pod/<name> ImagePullBackOff incident', async () => {
  await core.createNamespacedPod({
    namespace: 'default',
    body: {
      metadata: { name: 'lonely', labels: { sim: 'imagepull' } },
      spec: { containers: [{ name: 'app', image: 'registry.example/missing:1' }] },
    },
  });
  const [incident] = await stack.eventually(
    () => incidentsOf('Pod/lonely'),
    (items) => items.length > 0,
    120_000,
  );
  const d = await detail(nameOf(incident));
  expect(d.spec).toMatchObject({
    signalType: 'ImagePullBackOff',
    severity: 'medium',
    detectionSource: 'kubernetes-watcher',
  });
  expect(d.metadata.labels).toMatchObject({ pod: 'lonely', reason: 'ImagePullBackOff' });
  // Deleting the pod ends its failure.
  await core.deleteNamespacedPod({ name: 'lonely', namespace: 'default', gracePeriodSeconds: 0 });
  await stack.eventually(
    () => detail(nameOf(incident)),
    (x) => x.status.state === 'Resolved',
    120_000,
  );
});

it('resumes after the API server was down: a failure after it came back is detected', async () => {
  const from = logged.length;
  const since = () => logged.slice(from).join('');
  await kube.stopApiServer();
  await kube.startApiServer();
  // The watcher saw the outage (its watches broke) and its informers started again.
  await stack.eventually(
    async () => since(),
    (lines) => lines.includes('cluster watch interrupted; resuming') && lines.includes('cluster watch resumed'),
    180_000,
  );
  await apps.createNamespacedDeployment({
    namespace: 'default',
    body: deploymentManifest('after-outage', 2, 'crashloop'),
  });
  const [incident] = await stack.eventually(
    () => incidentsOf('Deployment/after-outage'),
    (items) => items.length > 0,
    180_000,
  );
  expect((await detail(nameOf(incident))).spec.signalType).toBe('CrashLoopBackOff');
  // Nothing known before the outage was sent again: still one incident per resource.
  expect(await incidentsOf('Deployment/crashy')).toHaveLength(1);
  expect(await incidentsOf('Deployment/hungry')).toHaveLength(1);
});

/** Every member (`object` label) signalled on the incident: the opening signal and each correlated one. */
async function membersSignalled(resource: string): Promise<string[]> {
  const [open] = await incidentsOf(resource);
  const record = await getIncident(nameOf(open));
  return [record!.labels.object, ...record!.correlatedSignals.map((s) => s.labels.object)].sort();
}

/**
 * Each member signalled once, give or take one repeat. Delivery is at least once
 * (docs/decisions.md): a signal in flight when a watcher stops (a cancel, the end of a round) or
 * whose confirmation was lost is sent again. A workload delivers one signal at a time, so at most
 * one of its members can have been in flight; any other repeat is a bug.
 */
function expectOnceGiveOrTakeOneRepeat(members: string[]): void {
  const counts = new Map<string, number>();
  for (const m of members) counts.set(m, (counts.get(m) ?? 0) + 1);
  const repeated = [...counts].filter(([, n]) => n > 1);
  expect(repeated.length).toBeLessThanOrEqual(1);
  for (const [, n] of repeated) expect(n).toBe(2);
}

it('ends Cancelled when cancelled; a new watch starting from nothing sends nothing known again, across rounds', async () => {
  // Quiescent first: every member due (the pods, and each rollout once it has been short of
  // replicas for the 30 s threshold) is on its incident. A signal delivered in the moment before
  // a stop and not yet recorded may be sent once more (at least once, docs/decisions.md).
  const settled = (resource: string, pods: number) =>
    stack.eventually(
      () => membersSignalled(resource),
      (m) => m.includes(resource) && m.filter((x) => x.startsWith('Pod/')).length === pods,
      120_000,
    );
  const hungry = await settled('Deployment/hungry', 1);
  const outage = await settled('Deployment/after-outage', 2);
  expectOnceGiveOrTakeOneRepeat(hungry);
  expectOnceGiveOrTakeOneRepeat(outage);

  await watch.cancel();
  await expect(watch.result()).rejects.toThrow(WorkflowFailedError);
  expect((await watch.describe()).status.name).toBe('CANCELLED');

  // No checkpoint: it knows the open incidents from ingestion's record. Short rounds, and a new
  // run (continue-as-new) after two of them, each carrying the checkpoint on.
  const restarted = await stack.client.workflow.start(clusterWatchWorkflow, {
    taskQueue: stack.wf.taskQueue,
    workflowId: clusterWatchWorkflowId('local'),
    args: [{ cluster: 'local', roundMs: 2_000, roundsPerRun: 2 }],
  });
  watch = restarted;
  const firstRun = restarted.firstExecutionRunId;
  await stack.eventually(
    async () => (await stack.client.workflow.getHandle(clusterWatchWorkflowId('local')).describe()).runId,
    (runId) => runId !== firstRun,
    120_000,
  );
  await apps.createNamespacedDeployment({ namespace: 'default', body: deploymentManifest('later', 2, 'crashloop') });
  await stack.eventually(
    () => membersSignalled('Deployment/later').catch(() => []),
    // Distinct pods: under load a pod was seen signalled twice here (cause not pinned down: a
    // PodNotReady before its crash loop showed, or at-least-once delivery across the 2 s rounds).
    (members) => new Set(members.filter((m) => m.startsWith('Pod/'))).size === 2,
    120_000,
  );
  // Still failing, not sent again by the new watch, which knew them from ingestion's record:
  // nothing beyond what the incident had before the cancel, save the one repeat a delivery in
  // flight at the cancel may add (members that joined meanwhile, e.g. the rollout, once each).
  for (const resource of ['Deployment/hungry', 'Deployment/after-outage']) {
    const before = resource.endsWith('hungry') ? hungry : outage;
    const now = await membersSignalled(resource);
    expect(now).toEqual(expect.arrayContaining(before));
    expectOnceGiveOrTakeOneRepeat(now);
    expect(await incidentsOf(resource)).toHaveLength(1);
  }
});

it("a watcher stopped while it reads ingestion's record starts nothing afterwards (a cancel during start)", async () => {
  let release: (known: KnownIncident[]) => void = () => undefined;
  const watcher = new ClusterWatcher({
    cluster: 'local',
    kc: kube.kc,
    thresholds: { notReadyAfterMs: 30_000 },
    deliver: async () => {
      throw new Error('a stopped watcher delivers nothing');
    },
    knownIncidents: () => new Promise((r) => (release = r)),
  });
  const started = watcher.start();
  await watcher.stop();
  release([]);
  await started;
  // No informer was started (each one's first step is its list), no clock is ticking (a live
  // timer would keep the watcher and its credentials in memory), and it never got ready.
  expect(watcher.stats.relists).toBe(0);
  expect(watcher.hasTimers).toBe(false);
  expect(watcher.isReady).toBe(false);
  await watcher.stop(); // idempotent
});

it('a watch of a cluster nobody registered ends', async () => {
  const handle = await stack.client.workflow.start(clusterWatchWorkflow, {
    taskQueue: stack.wf.taskQueue,
    workflowId: clusterWatchWorkflowId('nowhere'),
    args: [{ cluster: 'nowhere' }],
  });
  await expect(handle.result()).resolves.toBeUndefined();
});
