/**
 * The change record under load (issue 60, "Bounded"): 500 rollouts across 200 Deployments on a
 * real kube-apiserver with KWOK nodes (the setup of bench/watcher.ts), recorded by a ClusterWatcher
 * with the change record on, writing through the store (store/changes.ts) into the embedded
 * MongoDB-wire server with its H2 file backend (what `npm start` runs).
 *
 * The watcher runs in a child process of its own (node --expose-gc, the sources through ts-node
 * as in bench/watcher.ts), with the product's sink (recordChanges, recordRevision,
 * recordAvailability) and defaults (stable after 30 s, a week's retention), so its heap and RSS
 * are the watcher's alone; the rollouts are driven, and everything is checked, from this process.
 *
 * Measures and limits, stated before the first run and not changed after it:
 *  1. Correctness under load. 200 Deployments (KWOK pods, 1 replica for even, 2 for odd indexes)
 *     exist and are available before the watcher starts; then 500 rollouts (image changes) in 5
 *     batches of 100, each batch patched as fast as the control plane accepts (8 patchers, a
 *     Deployment patched again only once its previous rollout completed, as at a real 500/h where
 *     each Deployment rolls out 2.5 times an hour). The achieved rate is printed.
 *     Limit: Rollout changes stored = 500 + 200 first revisions exactly; 0 duplicate writes by id
 *     (every id handed to the sink once); 0 dropped, 0 write errors; each of the 500 rollouts'
 *     diff names its image change ({field: 'image app', from: previous image, to: new image}).
 *  2. Watcher memory. Heap used after a forced full GC, and RSS, of the watcher's process: at the
 *     baseline (200 first revisions stored and Healthy) and after each batch of 100 rollouts is
 *     stored; "after" = all 500 stored and each Deployment's current revision Healthy (a revision
 *     superseded within the 30 s stability window stays Progressing: it never becomes Healthy).
 *     Limit: heap growth baseline → after ≤ 64 MiB; RSS growth ≤ 128 MiB (for the 500 rollouts).
 *  3. Change record size. BSON size of every stored change document (mongodb's BSON, with its
 *     `_id` and `recordedAt`), and of the revision and availability documents per rollout. The
 *     bound: a week at 500 rollouts/h = 84,000 records (FOGHORN_CHANGE_RETENTION 168h) against the
 *     cap FOGHORN_CHANGE_MAX_RECORDS (100,000 per cluster) → MB per cluster; the H2 file's growth
 *     per record (indexes included) measured by inserting 110,000 records of the real shapes into
 *     a second cluster. Limit: mean BSON size of a Rollout record ≤ 1 KiB (the cap ≤ ~98 MiB).
 *     pruneChanges on that cluster, 10% over the cap (110,000 → 100,000), is timed; it runs at the
 *     start of each watch round before the first heartbeat. Limit: < 30 s, the watch activity's
 *     heartbeat timeout (workflows/cluster-watch.ts).
 *  4. Delivery lag: from a rollout's patch (sent) to its change record stored (the store's write
 *     resolved in the watcher's process), which includes the deployment controller making the
 *     ReplicaSet. Limit: p95 ≤ 5 s under the compressed load.
 *     Diagnostic, added after the first run missed this limit (not a measure, no limit): the lag
 *     split at the moment a watch of the bench's own sees the Deployment name the new revision
 *     (the control plane's part before it, the watcher's and its store writes' after it).
 *
 * Usage: npx ts-node --transpile-only bench/change-record.ts [deployments=200] [rollouts=500] [batch=100]
 */
import {
  AppsV1Api,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  Watch,
  type V1Deployment,
} from '@kubernetes/client-node';
import { fork, type ChildProcess } from 'child_process';
import { randomBytes } from 'crypto';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'fs';
import { BSON } from 'mongodb';
import { loadavg, tmpdir } from 'os';
import path from 'path';
import type { Change } from '../domain/changes';
import { percentile, runConcurrently } from './stats';

const DEPLOYMENTS = Number(process.argv[2] ?? 200);
const ROLLOUTS = Number(process.argv[3] ?? 500);
const BATCH = Number(process.argv[4] ?? 100);
const NAMESPACE = 'default';
const CLUSTER = 'local';
const PATCHERS = 8;
const STABLE_AFTER_MS = 30_000; // FOGHORN_REVISION_STABLE_AFTER's default
const RETENTION_MS = 7 * 24 * 3600_000; // FOGHORN_CHANGE_RETENTION's default
const MAX_RECORDS = 100_000; // FOGHORN_CHANGE_MAX_RECORDS's default
const PRUNE_CLUSTER = 'prune-bench';
const PRUNE_RECORDS = 110_000;
const HEARTBEAT_TIMEOUT_MS = 30_000;
const LIMITS = { heapGrowthMiB: 64, rssGrowthMiB: 128, rolloutBsonBytes: 1024, pruneMs: 30_000, lagP95Ms: 5_000 };
const MiB = 1024 * 1024;

const name = (d: number) => `app-${String(d).padStart(3, '0')}`;
const image = (d: number, version: number) => `registry.example/${name(d)}:${version}`;
const revisionId = (d: number, revision: number) =>
  `${CLUSTER}|${NAMESPACE}/Deployment/${name(d)}|revision|${revision}`;

// ---------------------------------------------------------------------------------------------
// The watcher's process
// ---------------------------------------------------------------------------------------------

type ToChild = { cmd: 'start'; kubeconfig: string; mongoUri: string } | { cmd: 'memory' } | { cmd: 'stop' };
interface MemoryReport {
  heapUsed: number;
  heapTotal: number;
  rss: number;
  external: number;
  checkpointBytes: number;
  recorder: Record<string, number>;
  watcher: Record<string, number>;
}
type FromChild =
  | { ev: 'ready' }
  | { ev: 'changes'; ids: string[]; upserted: number; at: number }
  | { ev: 'revision'; resource: string; revision: number; state: string }
  | { ev: 'samples'; count: number }
  | { ev: 'memory'; report: MemoryReport }
  | { ev: 'warn'; message: string }
  | { ev: 'stopped' };

async function watcherProcess(): Promise<void> {
  const send = (m: FromChild) => process.send!(m);
  const start = await new Promise<Extract<ToChild, { cmd: 'start' }>>((r) =>
    process.once('message', (m: ToChild) => r(m as Extract<ToChild, { cmd: 'start' }>)),
  );
  const { connectMongo, disconnectMongo } = await import('../store/connection');
  const { recordAvailability, recordChanges, recordRevision } = await import('../store/changes');
  const { ClusterWatcher } = await import('../activities/kube-watch/engine');
  await connectMongo(start.mongoUri);
  const kc = new KubeConfig();
  kc.loadFromString(start.kubeconfig);
  const watcher = new ClusterWatcher({
    cluster: CLUSTER,
    kc,
    thresholds: { notReadyAfterMs: 5 * 60_000 },
    deliver: async () => undefined,
    log: {
      info: () => undefined,
      warn: (message, meta) => send({ ev: 'warn', message: `${message} ${JSON.stringify(meta ?? {})}` }),
    },
    changes: {
      sink: {
        changes: async (cs) => {
          const upserted = await recordChanges(cs);
          send({ ev: 'changes', ids: cs.map((c) => c.id), upserted, at: Date.now() });
        },
        revision: async (h) => {
          await recordRevision(h);
          send({ ev: 'revision', resource: h.resource, revision: h.revision, state: h.state });
        },
        availability: async (s) => {
          await recordAvailability(s);
          send({ ev: 'samples', count: s.length });
        },
      },
      hashKey: randomBytes(32),
      stableAfterMs: STABLE_AFTER_MS,
      retentionMs: RETENTION_MS,
    },
  });
  process.on('message', (m: ToChild) => {
    if (m.cmd === 'memory') {
      const gc = (globalThis as { gc?: () => void }).gc!;
      gc();
      setTimeout(() => {
        gc();
        const mem = process.memoryUsage();
        send({
          ev: 'memory',
          report: {
            heapUsed: mem.heapUsed,
            heapTotal: mem.heapTotal,
            rss: mem.rss,
            external: mem.external,
            checkpointBytes: Buffer.byteLength(JSON.stringify(watcher.checkpoint())),
            recorder: { ...watcher.changes!.stats },
            watcher: { ...watcher.stats },
          },
        });
      }, 100);
    } else if (m.cmd === 'stop') {
      void watcher
        .stop()
        .then(() => disconnectMongo())
        .then(() => {
          send({ ev: 'stopped' });
          process.exit(0);
        });
    }
  });
  await watcher.start();
  while (!watcher.isReady) await new Promise((r) => setTimeout(r, 50));
  send({ ev: 'ready' });
}

// ---------------------------------------------------------------------------------------------
// The driver
// ---------------------------------------------------------------------------------------------

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 600_000): Promise<void> {
  const started = Date.now();
  while (
    !(await Promise.resolve()
      .then(check)
      .catch(() => false))
  ) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const mib = (bytes: number) => (bytes / MiB).toFixed(1);
const dirBytes = (dir: string): number =>
  readdirSync(dir, { withFileTypes: true }).reduce(
    (sum, e) => sum + (e.isDirectory() ? dirBytes(path.join(dir, e.name)) : statSync(path.join(dir, e.name)).size),
    0,
  );
const verdict = (held: boolean) => (held ? 'held' : '**MISSED**');

/** A Deployment's current rollout is done (kubectl rollout status's rules). */
function complete(d: V1Deployment): boolean {
  const s = d.status ?? {};
  const desired = d.spec?.replicas ?? 1;
  return (
    (s.observedGeneration ?? 0) >= (d.metadata?.generation ?? 0) &&
    (s.updatedReplicas ?? 0) === desired &&
    (s.replicas ?? 0) === desired &&
    (s.availableReplicas ?? 0) === desired
  );
}

async function main() {
  if (process.argv.includes('--watcher-process')) return watcherProcess();
  const load0 = loadavg();
  console.log(
    `change record under load: ${DEPLOYMENTS} Deployments, ${ROLLOUTS} rollouts in batches of ${BATCH}; load average at start ${load0.map((l) => l.toFixed(2)).join(' ')} (2 cores shared with others' tests)`,
  );
  const { useKube } = await import('../test/harness/kube');
  const { startEmbeddedMongo } = await import('../cli/embedded/mongo');
  const { connectMongo, disconnectMongo } = await import('../store/connection');
  const { ChangeModel, RevisionModel, AvailabilityModel } = await import('../store/models');
  const { pruneChanges } = await import('../store/changes');

  const dataDir = mkdtempSync(path.join(tmpdir(), 'foghorn-bench-changes-'));
  const store = await startEmbeddedMongo({ h2File: path.join(dataDir, 'mongo.h2'), database: 'bench' });
  await connectMongo(store.uri);
  const kube = await useKube();
  let child: ChildProcess | undefined;
  try {
    // --- the cluster: nodes, 200 Deployments of 1–2 KWOK pods, all available --------------------
    const apps = kube.kc.makeApiClient(AppsV1Api);
    const replicas = (d: number) => 1 + (d % 2);
    const pods = Array.from({ length: DEPLOYMENTS }, (_, d) => replicas(d)).reduce((a, b) => a + b, 0);
    const nodes = Math.ceil((pods * 2) / 100); // room for the surge pods of concurrent rollouts
    const setupStart = Date.now();
    for (let i = 0; i < nodes; i++) await kube.addNode(`bench-node-${i}`);
    await runConcurrently(DEPLOYMENTS, PATCHERS, async (d) => {
      await apps.createNamespacedDeployment({
        namespace: NAMESPACE,
        body: {
          metadata: { name: name(d) },
          spec: {
            replicas: replicas(d),
            selector: { matchLabels: { app: name(d) } },
            template: {
              metadata: { labels: { app: name(d), bench: 'changes' } },
              spec: { containers: [{ name: 'app', image: image(d, 1) }] },
            },
          },
        },
      });
    });
    const allComplete = async () => {
      const list = (await apps.listNamespacedDeployment({ namespace: NAMESPACE })).items;
      return list.length === DEPLOYMENTS && list.every(complete);
    };
    await until(`${DEPLOYMENTS} Deployments available`, allComplete);
    console.log(
      `${DEPLOYMENTS} Deployments (${pods} pods) on ${nodes} KWOK nodes available in ${((Date.now() - setupStart) / 1000).toFixed(1)} s`,
    );

    // --- the watcher, in its own process ---------------------------------------------------------
    const writes: string[] = [];
    const writtenAt = new Map<string, number>();
    let upserted = 0;
    let samples = 0;
    const revisionState = new Map<string, string>();
    const warnings: string[] = [];
    let memoryWaiter: ((r: MemoryReport) => void) | undefined;
    let ready = false;
    child = fork(__filename, ['--watcher-process'], {
      execArgv: ['--expose-gc', '-r', 'ts-node/register/transpile-only'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    child.on('message', (m: FromChild) => {
      if (m.ev === 'ready') ready = true;
      else if (m.ev === 'changes') {
        upserted += m.upserted;
        for (const id of m.ids) {
          writes.push(id);
          if (!writtenAt.has(id)) writtenAt.set(id, m.at);
        }
      } else if (m.ev === 'revision') revisionState.set(`${m.resource}#${m.revision}`, m.state);
      else if (m.ev === 'samples') samples += m.count;
      else if (m.ev === 'memory') memoryWaiter?.(m.report);
      else if (m.ev === 'warn') warnings.push(m.message);
    });
    const memory = () =>
      new Promise<MemoryReport>((r) => {
        memoryWaiter = r;
        child!.send({ cmd: 'memory' } satisfies ToChild);
      });
    child.send({ cmd: 'start', kubeconfig: kube.kubeconfig, mongoUri: store.uri } satisfies ToChild);
    const watchStart = Date.now();
    await until('the watcher synced', () => ready, 300_000);
    const healthy = (revisions: [number, number][]) =>
      revisions.every(([d, r]) => revisionState.get(`Deployment/${name(d)}#${r}`) === 'Healthy');
    const current = Array.from({ length: DEPLOYMENTS }, () => 1); // each Deployment's revision
    await until(`${DEPLOYMENTS} first revisions stored`, () =>
      current.every((r, d) => writtenAt.has(revisionId(d, r))),
    );
    const firstStored = Date.now();
    await until(
      `${DEPLOYMENTS} first revisions Healthy`,
      () => healthy(current.map((r, d) => [d, r])),
      STABLE_AFTER_MS + 180_000,
    );
    console.log(
      `watcher synced and ${DEPLOYMENTS} first revisions stored ${((firstStored - watchStart) / 1000).toFixed(1)} s after its start; Healthy after ${((Date.now() - watchStart) / 1000).toFixed(1)} s`,
    );
    const baseline = await memory();
    const series: { rollouts: number; report: MemoryReport }[] = [{ rollouts: 0, report: baseline }];

    // --- the rollouts ----------------------------------------------------------------------------
    const patch = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);
    const patchedAt = new Map<string, number>();
    // The diagnostic: when the Deployment first names each revision, as a watch of the bench's own sees it.
    const annotatedAt = new Map<string, number>();
    const deploymentWatch = await new Watch(kube.kc).watch(
      `/apis/apps/v1/namespaces/${NAMESPACE}/deployments`,
      {},
      (_type: string, obj: V1Deployment) => {
        const revision = Number(obj.metadata?.annotations?.['deployment.kubernetes.io/revision'] ?? NaN);
        const id = `${CLUSTER}|${NAMESPACE}/Deployment/${obj.metadata?.name}|revision|${revision}`;
        if (Number.isInteger(revision) && !annotatedAt.has(id)) annotatedAt.set(id, Date.now());
      },
      () => undefined,
    );
    const expectedDiff = new Map<string, { from: string; to: string }>();
    let patchSeconds = 0;
    let batchSeconds = 0;
    let completeWaits = 0;
    const rolloutsStart = Date.now();
    for (let b = 0; b * BATCH < ROLLOUTS; b++) {
      const first = b * BATCH;
      const count = Math.min(BATCH, ROLLOUTS - first);
      const ids: string[] = [];
      const t0 = Date.now();
      await runConcurrently(count, PATCHERS, async (i) => {
        const d = (first + i) % DEPLOYMENTS;
        // Patched again only once its previous rollout completed (as at a real 500/h).
        const read = () => apps.readNamespacedDeployment({ name: name(d), namespace: NAMESPACE });
        if (!complete(await read())) {
          completeWaits++;
          await until(`${name(d)} complete`, async () => complete(await read()), 300_000);
        }
        const revision = current[d] + 1;
        const id = revisionId(d, revision);
        ids.push(id);
        expectedDiff.set(id, { from: image(d, current[d]), to: image(d, revision) });
        patchedAt.set(id, Date.now());
        await apps.patchNamespacedDeployment(
          {
            name: name(d),
            namespace: NAMESPACE,
            body: { spec: { template: { spec: { containers: [{ name: 'app', image: image(d, revision) }] } } } },
            fieldManager: 'bench-ci',
          },
          patch,
        );
        current[d] = revision;
      });
      const patched = Date.now();
      await until(`batch ${b + 1} stored`, () => ids.every((id) => writtenAt.has(id)), 600_000);
      const stored = Math.max(...ids.map((id) => writtenAt.get(id)!));
      patchSeconds += (patched - t0) / 1000;
      batchSeconds += (stored - t0) / 1000;
      console.log(
        `batch ${b + 1}: ${count} rollouts patched in ${((patched - t0) / 1000).toFixed(1)} s (${(count / ((patched - t0) / 1000)).toFixed(1)}/s), all stored ${((stored - t0) / 1000).toFixed(1)} s after the first patch`,
      );
      series.push({ rollouts: first + count, report: await memory() });
    }
    const rolloutsSeconds = (Date.now() - rolloutsStart) / 1000;
    await until(
      "every Deployment's current revision Healthy",
      () => healthy(current.map((r, d) => [d, r])),
      STABLE_AFTER_MS + 300_000,
    );
    const after = await memory();

    // --- 1. correctness --------------------------------------------------------------------------
    const stored = await ChangeModel.collection.find({ cluster: CLUSTER }).toArray();
    const byType = new Map<string, number>();
    for (const c of stored) byType.set(c.type as string, (byType.get(c.type as string) ?? 0) + 1);
    const rollouts = stored.filter((c) => c.type === 'Rollout');
    const duplicateWrites = writes.length - new Set(writes).size;
    let diffsNamed = 0;
    const badDiffs: string[] = [];
    for (const [id, want] of expectedDiff) {
      const c = stored.find((s) => s.id === id) as unknown as Change | undefined;
      if (
        c?.type === 'Rollout' &&
        c.diff.some((x) => x.field === 'image app' && x.from === want.from && x.to === want.to)
      )
        diffsNamed++;
      else if (badDiffs.length < 5) badDiffs.push(`${id}: ${JSON.stringify(c?.diff ?? 'not stored')}`);
    }
    const firstRevisions = rollouts.filter((c) => c.revision === 1 && c.previousRevision === undefined).length;
    const stats = after.recorder;
    const correct =
      rollouts.length === ROLLOUTS + DEPLOYMENTS &&
      firstRevisions === DEPLOYMENTS &&
      duplicateWrites === 0 &&
      diffsNamed === ROLLOUTS &&
      stats.dropped === 0 &&
      stats.writeErrors === 0;
    const revisionDocs = await RevisionModel.countDocuments({ cluster: CLUSTER });
    const healthyDocs = await RevisionModel.countDocuments({ cluster: CLUSTER, state: 'Healthy' });
    const sampleDocs = await AvailabilityModel.countDocuments({ cluster: CLUSTER });

    // --- 4. lag ----------------------------------------------------------------------------------
    deploymentWatch.abort();
    const lags = [...patchedAt].map(([id, at]) => (writtenAt.get(id) ?? NaN) - at).sort((a, b) => a - b);
    const sorted = (xs: number[]) => xs.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
    const controlPlane = sorted([...patchedAt].map(([id, at]) => (annotatedAt.get(id) ?? NaN) - at));
    const watcherPart = sorted([...patchedAt].map(([id]) => (writtenAt.get(id) ?? NaN) - (annotatedAt.get(id) ?? NaN)));
    const split = (xs: number[]) =>
      `p50 ${percentile(xs, 50).toFixed(0)}, p95 ${percentile(xs, 95).toFixed(0)}, max ${xs[xs.length - 1]?.toFixed(0)} ms (${xs.length})`;

    // --- 3. size ---------------------------------------------------------------------------------
    const bson = (docs: object[]) => docs.map((d) => BSON.calculateObjectSize(d as BSON.Document));
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const laterRollouts = rollouts.filter((c) => c.revision !== 1);
    const rolloutBytes = bson(laterRollouts);
    const firstBytes = bson(rollouts.filter((c) => c.revision === 1));
    const revisionBytes = bson(await RevisionModel.collection.find({ cluster: CLUSTER }).toArray());
    const sampleBytes = bson(await AvailabilityModel.collection.find({ cluster: CLUSTER }).toArray());
    const perRolloutRecord = mean(rolloutBytes);
    const weekRecords = 500 * 24 * 7;
    let collStats = '';
    try {
      const s = await ChangeModel.db.db!.command({ collStats: 'changes' });
      collStats = `collStats: size ${s.size}, count ${s.count}, totalIndexSize ${s.totalIndexSize}`;
    } catch (err) {
      collStats = `collStats not answered (${(err as Error).message.slice(0, 80)})`;
    }

    // Prune: a second cluster 10% over the cap, of the real records' shapes, over the last 6 days.
    const h2Before = dirBytes(dataDir);
    const now = Date.now();
    const span = 6 * 24 * 3600_000;
    const insertStart = Date.now();
    for (let i = 0; i < PRUNE_RECORDS; i += 1000) {
      const docs = [];
      for (let j = i; j < Math.min(PRUNE_RECORDS, i + 1000); j++) {
        const { _id: _drop, ...shape } = laterRollouts[j % laterRollouts.length];
        const at = new Date(now - span + Math.floor((j * span) / PRUNE_RECORDS));
        docs.push({
          ...shape,
          cluster: PRUNE_CLUSTER,
          id: `${PRUNE_CLUSTER}|${shape.namespace}/${shape.resource}|revision|${j}`,
          at,
          recordedAt: at,
        });
      }
      await ChangeModel.collection.insertMany(docs, { ordered: false });
    }
    const insertSeconds = (Date.now() - insertStart) / 1000;
    const h2After = dirBytes(dataDir);
    const p0 = performance.now();
    const pruned = await pruneChanges(PRUNE_CLUSTER, new Date(Date.now() - RETENTION_MS), MAX_RECORDS);
    const pruneMs = performance.now() - p0;
    const p1 = performance.now();
    const prunedAgain = await pruneChanges(PRUNE_CLUSTER, new Date(Date.now() - RETENTION_MS), MAX_RECORDS);
    const pruneAtCapMs = performance.now() - p1;
    const left = await ChangeModel.countDocuments({ cluster: PRUNE_CLUSTER });

    // --- report ----------------------------------------------------------------------------------
    const load1 = loadavg();
    const heapGrowth = (after.heapUsed - baseline.heapUsed) / MiB;
    const rssGrowth = (after.rss - baseline.rss) / MiB;
    console.log('\n1. correctness');
    console.log(
      `  ${ROLLOUTS} rollouts: patch phases ${patchSeconds.toFixed(1)} s (${(ROLLOUTS / patchSeconds).toFixed(1)} rollouts/s = ${Math.round((ROLLOUTS / patchSeconds) * 3600)}/h, ${(((ROLLOUTS / patchSeconds) * 3600) / 500).toFixed(0)}× 500/h); first patch → last stored per batch ${batchSeconds.toFixed(1)} s (${(ROLLOUTS / batchSeconds).toFixed(1)}/s); all batches with memory samples ${rolloutsSeconds.toFixed(1)} s; ${completeWaits} patches waited for a previous rollout to complete`,
    );
    console.log(
      `  stored changes by type ${JSON.stringify(Object.fromEntries(byType))}; Rollout ${rollouts.length} (want ${ROLLOUTS + DEPLOYMENTS}), first revisions ${firstRevisions}; writes ${writes.length}, distinct ids ${new Set(writes).size}, duplicate writes ${duplicateWrites}, upserted ${upserted}; diffs naming the image change ${diffsNamed}/${ROLLOUTS}; recorder ${JSON.stringify(stats)}`,
    );
    if (badDiffs.length) console.log(`  diffs not naming it: ${badDiffs.join('; ')}`);
    console.log(
      `  store: ${revisionDocs} revision documents (${healthyDocs} Healthy), ${sampleDocs} availability samples (${samples} written); ${warnings.length} watcher warnings${warnings.length ? `: ${warnings.slice(0, 3).join(' | ')}` : ''}`,
    );
    console.log(`  → ${verdict(correct)}`);
    console.log('\n2. watcher memory (heap used after a forced GC / RSS, MiB; checkpoint JSON bytes)');
    console.log('| rollouts stored | heap | RSS | checkpoint |');
    console.log('|---|---|---|---|');
    for (const s of [...series, { rollouts: -1, report: after }])
      console.log(
        `| ${s.rollouts < 0 ? `${ROLLOUTS}, current revisions Healthy` : s.rollouts} | ${mib(s.report.heapUsed)} | ${mib(s.report.rss)} | ${s.report.checkpointBytes} |`,
      );
    const steps = series.slice(1).map((s, i) => (s.report.heapUsed - series[i].report.heapUsed) / MiB);
    console.log(
      `  heap growth ${heapGrowth.toFixed(1)} MiB (${(heapGrowth / (ROLLOUTS / 100)).toFixed(1)} per 100 rollouts; per batch ${steps.map((s) => s.toFixed(1)).join(', ')}), RSS growth ${rssGrowth.toFixed(1)} MiB`,
    );
    console.log(
      `  → heap ≤ ${LIMITS.heapGrowthMiB} MiB ${verdict(heapGrowth <= LIMITS.heapGrowthMiB)}; RSS ≤ ${LIMITS.rssGrowthMiB} MiB ${verdict(rssGrowth <= LIMITS.rssGrowthMiB)}`,
    );
    console.log('\n3. change record size');
    console.log(
      `  BSON per Rollout record: mean ${perRolloutRecord.toFixed(0)} B (min ${Math.min(...rolloutBytes)}, max ${Math.max(...rolloutBytes)}); first revisions ${mean(firstBytes).toFixed(0)} B; per revision document ${mean(revisionBytes).toFixed(0)} B; per availability sample ${mean(sampleBytes).toFixed(0)} B (${(sampleDocs / (ROLLOUTS + DEPLOYMENTS)).toFixed(1)} per revision)`,
    );
    console.log(
      `  a week at 500 rollouts/h = ${weekRecords} records → ${mib(weekRecords * perRolloutRecord)} MiB of BSON; the cap ${MAX_RECORDS} → ${mib(MAX_RECORDS * perRolloutRecord)} MiB per cluster; ${collStats}`,
    );
    console.log(
      `  H2 file: ${PRUNE_RECORDS} records inserted in ${insertSeconds.toFixed(1)} s, file ${mib(h2Before)} → ${mib(h2After)} MiB (${((h2After - h2Before) / PRUNE_RECORDS).toFixed(0)} B per record, indexes included)`,
    );
    console.log(
      `  pruneChanges over the cap: ${pruned} removed in ${(pruneMs / 1000).toFixed(2)} s (${left} left); the next round's, at the cap: ${prunedAgain} removed in ${(pruneAtCapMs / 1000).toFixed(2)} s`,
    );
    console.log(
      `  → BSON ≤ ${LIMITS.rolloutBsonBytes} B ${verdict(perRolloutRecord <= LIMITS.rolloutBsonBytes)}; prune < ${HEARTBEAT_TIMEOUT_MS / 1000} s ${verdict(pruneMs < LIMITS.pruneMs && left === MAX_RECORDS)}`,
    );
    console.log('\n4. delivery lag, patch → change record stored');
    console.log(
      `  p50 ${percentile(lags, 50).toFixed(0)} ms, p95 ${percentile(lags, 95).toFixed(0)} ms, max ${lags[lags.length - 1].toFixed(0)} ms over ${lags.length} rollouts → p95 ≤ ${LIMITS.lagP95Ms} ms ${verdict(percentile(lags, 95) <= LIMITS.lagP95Ms)}`,
    );
    console.log(
      `  diagnostic split: patch → the Deployment names the revision ${split(controlPlane)}; → change record stored ${split(watcherPart)}`,
    );
    console.log(`\nload average at end ${load1.map((l) => l.toFixed(2)).join(' ')}`);
  } finally {
    if (child?.connected) {
      const exited = new Promise((r) => child!.once('exit', r));
      child.send({ cmd: 'stop' } satisfies ToChild);
      await Promise.race([exited, new Promise((r) => setTimeout(r, 20_000))]);
    }
    if (child && child.exitCode === null) child.kill('SIGKILL');
    await kube.stop();
    await disconnectMongo();
    await store.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().then(
  () => {
    if (!process.argv.includes('--watcher-process')) process.exit(0);
  },
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
