import { activityRunner } from '../harness/activity';
import { AppsV1Api, CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { ApplicationFailure } from '@temporalio/common';
import { createKubeReadActivities } from '../../activities/kube-reads';
import type { PodList, PodResourceSummary, WorkloadSummary } from '../../domain/kube-actions';
import { useRegisteredKube } from '../clusters/fixtures';
import { deploymentManifest, waitFor } from '../harness/kube';

// The read tools against a real API server whose pods run (or fail) on KWOK's fake nodes.

const reads = createKubeReadActivities();
const run = activityRunner(reads);

let env: Awaited<ReturnType<typeof useRegisteredKube>>;
let apps: AppsV1Api;
let core: CoreV1Api;
const ns = 'default';
const cluster = 'prod';

beforeAll(async () => {
  env = await useRegisteredKube(cluster);
  ({ apps, core } = env);
  await apps.createNamespacedDeployment({ namespace: ns, body: deploymentManifest('api', 2, undefined, ns) });
  await apps.createNamespacedDeployment({ namespace: ns, body: deploymentManifest('crashy', 2, 'crashloop', ns) });
  await apps.createNamespacedDeployment({ namespace: ns, body: deploymentManifest('oom', 1, 'oomkilled', ns) });
}, 300_000);

afterAll(() => env?.stop(), 60_000);

/** Polls a read until `ok` holds for its result; returns that result. */
async function readUntil<T>(what: string, read: () => Promise<T>, ok: (value: T) => boolean): Promise<T> {
  let last: T | undefined;
  await waitFor(what, async () => ok((last = await read())));
  return last as T;
}

test('kubeGetResource summarises a Deployment, one of its pods and the node', async () => {
  const d = await readUntil(
    'api available',
    () => run('kubeGetResource', { cluster, kind: 'Deployment', namespace: ns, name: 'api' }),
    (r) => (r as WorkloadSummary).available === 2,
  );
  expect(d).toMatchObject({
    kind: 'Deployment',
    name: 'api',
    namespace: ns,
    cluster,
    desired: 2,
    ready: 2,
    revision: 1,
    paused: false,
    images: ['example.com/api:1'],
  });
  expect((d as WorkloadSummary).conditions.map((c) => c.type)).toEqual(expect.arrayContaining(['Available']));

  const pods = await core.listNamespacedPod({ namespace: ns, labelSelector: 'app=api' });
  const pod = (await run('kubeGetResource', {
    cluster,
    kind: 'Pod',
    namespace: ns,
    name: pods.items[0].metadata!.name!,
  })) as PodResourceSummary;
  expect(pod).toMatchObject({ kind: 'Pod', phase: 'Running', ready: true, restarts: 0, node: 'kwok-node-1' });
  expect(pod.containers).toEqual([
    expect.objectContaining({ name: 'app', image: 'example.com/api:1', ready: true, state: 'running' }),
  ]);

  const node = await run('kubeGetResource', { cluster, kind: 'Node', name: 'kwok-node-1' });
  expect(node).toMatchObject({ kind: 'Node', name: 'kwok-node-1', ready: true, unschedulable: false });
}, 120_000);

test('kubeListPods shows restart counts and why containers fail, unhealthy first and bounded', async () => {
  const crashy = await readUntil(
    'crash-looping pods',
    () => run('kubeListPods', { cluster, namespace: ns, kind: 'Deployment', name: 'crashy' }),
    (l) => l.total === 2 && l.pods.every((p) => p.restarts >= 1 && p.containers[0].reason === 'CrashLoopBackOff'),
  );
  expect(crashy).toMatchObject({ cluster, namespace: ns, workload: 'Deployment/crashy', truncated: false });
  for (const p of crashy.pods) {
    expect(p).toMatchObject({ ready: false, node: 'kwok-node-1' });
    expect(p.containers[0]).toMatchObject({ state: 'waiting', lastTermination: { reason: 'Error' } });
  }

  const oom = await readUntil(
    'an OOMKilled pod',
    () => run('kubeListPods', { cluster, namespace: ns, kind: 'Deployment', name: 'oom' }),
    (l: PodList) => l.pods[0]?.containers[0]?.lastTermination?.reason === 'OOMKilled',
  );
  expect(oom.pods[0].containers[0].lastTermination).toEqual({ reason: 'OOMKilled', exitCode: 137 });

  // One of api's pods starts failing: a list of one keeps that pod.
  const pods = await core.listNamespacedPod({ namespace: ns, labelSelector: 'app=api' });
  const failing = pods.items[1].metadata!.name!;
  await core.patchNamespacedPod(
    { name: failing, namespace: ns, body: { metadata: { labels: { sim: 'crashloop' } } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
  const one = await readUntil(
    'the failing pod listed first',
    () => run('kubeListPods', { cluster, namespace: ns, kind: 'Deployment', name: 'api', limit: 1 }),
    (l) => l.pods[0]?.name === failing && !l.pods[0].ready,
  );
  expect(one).toMatchObject({ total: 2, truncated: true });
  expect(one.pods).toHaveLength(1);
}, 180_000);

test("kubeRecentEvents lists an object's events, newest first", async () => {
  const deploymentEvents = await readUntil(
    'ScalingReplicaSet',
    () => run('kubeRecentEvents', { cluster, kind: 'Deployment', namespace: ns, name: 'api' }),
    (l) => l.events.some((e) => e.reason === 'ScalingReplicaSet'),
  );
  expect(deploymentEvents.object).toBe('Deployment/default/api');
  expect(deploymentEvents.events[0]).toMatchObject({ type: 'Normal', source: expect.any(String) });

  const pod = (await core.listNamespacedPod({ namespace: ns, labelSelector: 'app=crashy' })).items[0].metadata!.name!;
  const podEvents = await readUntil(
    'the pod scheduled',
    () => run('kubeRecentEvents', { cluster, kind: 'Pod', namespace: ns, name: pod }),
    (l) => l.events.some((e) => e.reason === 'Scheduled'),
  );
  const times = podEvents.events.map((e) => e.lastSeen ?? '');
  expect([...times].sort().reverse()).toEqual(times);

  const bounded = await run('kubeRecentEvents', { cluster, kind: 'Pod', namespace: ns, name: pod, limit: 1 });
  expect(bounded.events.length).toBeLessThanOrEqual(1);
  expect(bounded.truncated).toBe(podEvents.events.length > 1);

  const none = await run('kubeRecentEvents', { cluster, kind: 'Deployment', namespace: ns, name: 'no-such-thing' });
  expect(none.events).toEqual([]);
}, 120_000);

test('kubeLogTail reports absent logs as such, never throws', async () => {
  const pod = (await core.listNamespacedPod({ namespace: ns, labelSelector: 'app=api' })).items[0].metadata!.name!;
  // KWOK's kubelet serves an empty log for a container nobody gave lines to, and no previous one.
  const tail = await run('kubeLogTail', { cluster, namespace: ns, pod, tailLines: 20 });
  expect(tail).toEqual({ available: true, pod, container: 'app', text: '', truncated: false });
  const previous = await run('kubeLogTail', { cluster, namespace: ns, pod, tailLines: 20, previous: true });
  expect(previous).toMatchObject({ available: false, pod, container: 'app' });
  expect(previous.available === false && previous.reason).toContain('cluster prod');

  const gone = await run('kubeLogTail', { cluster, namespace: ns, pod: 'no-such-pod' });
  expect(gone).toEqual({
    available: false,
    pod: 'no-such-pod',
    container: null,
    reason: 'pod default/no-such-pod not found in cluster prod',
  });

  const wrong = await run('kubeLogTail', { cluster, namespace: ns, pod, container: 'sidecar' });
  expect(wrong).toMatchObject({ available: false, container: 'sidecar' });
  expect(wrong.available === false && wrong.reason).toContain('container sidecar not found');
}, 60_000);

test('a missing object is a non-retryable KubeNotFound', async () => {
  const err = await run('kubeGetResource', { cluster, kind: 'StatefulSet', namespace: ns, name: 'db' }).catch(
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApplicationFailure);
  expect(err).toMatchObject({
    nonRetryable: true,
    type: 'KubeNotFound',
    message: 'statefulset default/db not found in cluster prod',
  });
}, 60_000);
