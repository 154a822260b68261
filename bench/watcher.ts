/**
 * Cluster watcher throughput (issue 9 §3): 500 pods on KWOK nodes of a real kube-apiserver, whose
 * statuses the benchmark rewrites as a kubelet would (crash-looping ⇄ healthy, plus restarts that
 * are not news), and what the watcher makes of it:
 *  A. the watcher alone (ClusterWatcher with a counting sink): pod status changes observed per
 *     second and signals decided per second, and the lag after the last change;
 *  B. end to end: `foghorn dev` with KUBECONFIG watches the same cluster through its own worker;
 *     one failure round of all 500 pods, timed until every signal is on its incident.
 * Usage: npx ts-node --transpile-only bench/watcher.ts [pods=500] [deployments=10] [rounds=2]
 */
import './compiled';
import { AppsV1Api, CoreV1Api, PatchStrategy, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import { mkdtempSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import path from 'path';
import { ClusterWatcher } from '../activities/kube-watch/engine';
import { devEnv, startDev, stopDev, waitReady } from '../test/harness/dev-process';
import { useKube, waitFor, type KubeCluster } from '../test/harness/kube';
import { runConcurrently } from './stats';

const PODS = Number(process.argv[2] ?? 500);
const DEPLOYMENTS = Number(process.argv[3] ?? 10);
const ROUNDS = Number(process.argv[4] ?? 2);
const PER_DEPLOYMENT = Math.ceil(PODS / DEPLOYMENTS);
const NAMESPACE = 'default';
const PATCHERS = 16;

const statusPatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** A kubelet's status for a crash-looping (restarts: n) or a healthy container. */
function status(state: 'crashing' | 'healthy', restarts: number) {
  const now = new Date().toISOString();
  const crashing = state === 'crashing';
  return {
    status: {
      phase: 'Running',
      conditions: [
        { type: 'Ready', status: crashing ? 'False' : 'True', lastTransitionTime: now },
        { type: 'PodScheduled', status: 'True', lastTransitionTime: now },
      ],
      containerStatuses: [
        {
          name: 'app',
          image: 'registry.example/app:1',
          imageID: '',
          ready: !crashing,
          started: !crashing,
          restartCount: restarts,
          state: crashing
            ? { waiting: { reason: 'CrashLoopBackOff', message: 'back-off restarting failed container' } }
            : { running: { startedAt: now } },
          ...(restarts > 0 && {
            lastState: { terminated: { exitCode: 1, reason: 'Error', startedAt: now, finishedAt: now } },
          }),
        },
      ],
    },
  };
}

async function setUp(kube: KubeCluster): Promise<V1Pod[]> {
  const apps = kube.kc.makeApiClient(AppsV1Api);
  const core = kube.kc.makeApiClient(CoreV1Api);
  const nodes = Math.ceil(PODS / 100);
  for (let i = 0; i < nodes; i++) await kube.addNode(`bench-node-${i}`);
  for (let d = 0; d < DEPLOYMENTS; d++) {
    const name = `churn-${d}`;
    await apps.createNamespacedDeployment({
      namespace: NAMESPACE,
      body: {
        metadata: { name },
        spec: {
          replicas: PER_DEPLOYMENT,
          selector: { matchLabels: { app: name } },
          template: {
            metadata: { labels: { app: name, bench: 'churn' } },
            spec: { containers: [{ name: 'app', image: 'registry.example/app:1' }] },
          },
        },
      },
    });
  }
  let pods: V1Pod[] = [];
  await waitFor(
    `${PER_DEPLOYMENT * DEPLOYMENTS} pods Ready`,
    async () => {
      pods = (await core.listNamespacedPod({ namespace: NAMESPACE, labelSelector: 'bench=churn' })).items;
      return (
        pods.length === PER_DEPLOYMENT * DEPLOYMENTS &&
        pods.every((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
      );
    },
    600_000,
  );
  return pods;
}

/** Rewrites every pod's status once; returns the seconds it took. */
async function churn(kube: KubeCluster, pods: V1Pod[], state: 'crashing' | 'healthy', restarts: number) {
  const core = kube.kc.makeApiClient(CoreV1Api);
  const started = performance.now();
  await runConcurrently(pods.length, PATCHERS, async (i) => {
    await core.patchNamespacedPodStatus(
      { name: pods[i].metadata!.name!, namespace: NAMESPACE, body: status(state, restarts) },
      statusPatch,
    );
  });
  return (performance.now() - started) / 1000;
}

async function until(check: () => boolean | Promise<boolean>, timeoutMs = 600_000): Promise<number> {
  const started = performance.now();
  while (!(await check())) {
    if (performance.now() - started > timeoutMs) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
  return performance.now();
}

/** A: the watcher alone, every signal counted instead of ingested. */
async function watcherAlone(kube: KubeCluster, pods: V1Pod[]) {
  const signals = { firing: 0, resolved: 0 };
  const watcher = new ClusterWatcher({
    cluster: 'local',
    kc: kube.kc,
    thresholds: { notReadyAfterMs: 3_600_000 },
    deliver: async (_signal, s) => {
      signals[s]++;
    },
    concurrency: 4,
  });
  await watcher.start();
  await until(() => watcher.isReady);
  console.log('\nA. watcher alone (signals counted, not ingested)');
  console.log('| step | status changes | patch time | observed/s | signals | signals/s | lag after last patch |');
  console.log('|---|---|---|---|---|---|---|');
  let restarts = 0;
  for (let round = 1; round <= ROUNDS; round++) {
    for (const step of ['fail', 'restart', 'recover'] as const) {
      const state = step === 'recover' ? 'healthy' : 'crashing';
      if (step !== 'recover') restarts++;
      const events0 = watcher.stats.podEvents;
      const sig0 = signals.firing + signals.resolved;
      const t0 = performance.now();
      const patchSeconds = await churn(kube, pods, state, restarts);
      const patchedAt = performance.now();
      const expectedSignals = step === 'fail' ? pods.length : step === 'recover' ? DEPLOYMENTS : 0;
      const done = await until(
        async () =>
          watcher.stats.podEvents - events0 >= pods.length &&
          signals.firing + signals.resolved - sig0 >= expectedSignals &&
          (await watcher.idle().then(() => true)),
      );
      const seconds = (done - t0) / 1000;
      const made = signals.firing + signals.resolved - sig0;
      console.log(
        `| ${round}.${step} | ${watcher.stats.podEvents - events0} | ${patchSeconds.toFixed(2)} s | ${((watcher.stats.podEvents - events0) / seconds).toFixed(0)} | ${made} | ${(made / seconds).toFixed(0)} | ${(done - patchedAt).toFixed(0)} ms |`,
      );
    }
  }
  await watcher.stop();
  console.log(`totals: ${JSON.stringify({ ...watcher.stats, ...signals })}`);
  return restarts;
}

/** B: `foghorn dev` watching the cluster; one failure round, timed until every signal is ingested. */
async function endToEnd(kube: KubeCluster, pods: V1Pod[], restarts: number) {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'foghorn-bench-watch-'));
  const kubeconfig = path.join(dataDir, 'kubeconfig');
  writeFileSync(kubeconfig, kube.kubeconfig, { mode: 0o600 });
  const dev = await startDev({
    ...(await devEnv(dataDir)),
    KUBECONFIG: kubeconfig,
    FOGHORN_WATCH_NOT_READY_AFTER: '1h',
    FOGHORN_RATE_LIMIT: '1000000',
  });
  try {
    await waitReady(dev.api);
    const headers = { authorization: `Bearer ${dev.token}` };
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- API JSON
    const get = async (p: string): Promise<any> => (await fetch(dev.api + p, { headers })).json();
    // Ingested signals = each incident's opening signal + its correlated ones.
    const ingested = async () => {
      let total = 0;
      for (let d = 0; d < DEPLOYMENTS; d++) {
        const list = await get(`/incidents?resource=Deployment/churn-${d}&pageSize=100`);
        for (const i of list.items) total += 1 + (await get(`/incidents/${i.name}`)).status.correlatedSignals;
      }
      return total;
    };
    // The watch has synced once a first failure shows; then the measured round.
    await churn(kube, pods.slice(0, 1), 'crashing', restarts + 1);
    await until(async () => (await ingested()) >= 1, 300_000);
    const base = await ingested();
    const t0 = performance.now();
    const patchSeconds = await churn(kube, pods.slice(1), 'crashing', restarts + 1);
    let last = base;
    const done = await until(async () => {
      last = await ingested();
      return last - base >= pods.length - 1;
    });
    const seconds = (done - t0) / 1000;
    console.log('\nB. end to end (`foghorn dev`: watcher → ingestion → incident workflows)');
    console.log('| pods failing | patch time | signals ingested | time to last signal | signals/s |');
    console.log('|---|---|---|---|---|');
    console.log(
      `| ${pods.length - 1} | ${patchSeconds.toFixed(2)} s | ${last - base} | ${seconds.toFixed(2)} s | ${((last - base) / seconds).toFixed(1)} |`,
    );
  } finally {
    await stopDev(dev);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main() {
  const kube = await useKube();
  try {
    const setupStart = performance.now();
    const pods = await setUp(kube);
    console.log(
      `${pods.length} pods in ${DEPLOYMENTS} Deployments on ${Math.ceil(PODS / 100)} KWOK nodes, ready in ${((performance.now() - setupStart) / 1000).toFixed(1)} s; ${PATCHERS} concurrent status writers`,
    );
    const restarts = await watcherAlone(kube, pods);
    await endToEnd(kube, pods, restarts);
  } finally {
    await kube.stop();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
