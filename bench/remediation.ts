/**
 * Remediation engine throughput (issue 10 §5) on the embedded stack (`foghorn dev`): one
 * automated runbook whose steps need no cluster — an HttpRequest to a local listener, a Wait of
 * 1s, a verification window of 5s — so every plan has a known 6 s floor and the rest is the
 * engine (analysis, runbook match, plan, child workflows, step activities, bookkeeping).
 *  latency: N incidents (default 50) opened at a steady rate; alert → plan Completed p50/p95,
 *           plans in flight at once at peak, throughput.
 *  burst:   N incidents opened at once (default 100 and 200): plans in flight at once (peak and
 *           time-weighted mean while any ran), throughput, and any incident not remediated.
 * Each mode runs on a fresh stack. Usage:
 *   npx ts-node --transpile-only bench/remediation.ts [latency|burst|all=all] [count=50] [perSecond=2] [bursts=100,200]
 *       [--warm=N]  (burst: a settled, unmeasured burst of N incidents first, as a long-running stack has had)
 *       [--phases]  (also: where an incident's time goes, from its timeline's events)
 *       [--commands]  (burst: the store commands each process sent per incident, by command and collection;
 *                     the API's include the benchmark's own polling of the lists)
 *       [--events]  (burst: Temporal's work per incident: workflows by type, history events and their
 *                     encoded bytes by type)
 *       [--js-profile=DIR]  (burst: V8 CPU profiles of the API and the worker, every thread, into DIR,
 *                     with the measured burst's window; read them with bench/js-profile.ts DIR)
 *       [--replicas=APIS,WORKERS]  (separate `foghorn api` and `foghorn worker` processes instead of
 *                     `foghorn dev`, bench/stack.ts; the incidents are posted to each API alike)
 * A burst also prints each process's CPU seconds from its first post until it settled.
 */
import './compiled';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'fs';
import http from 'http';
import type { AddressInfo } from 'net';
import { loadavg, tmpdir } from 'os';
import path from 'path';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { CommandCounts } from '../store/command-counts';
import {
  cpuBetween,
  cpuTotal,
  jsProfileFlags,
  monotonicMicros,
  showCpu,
  stackProcesses,
  writeProfileWindow,
} from './processes';
import { percentile, runConcurrently } from './stats';
import { flag, positional } from './args';
import { replicasFlag, startBenchStack, type BenchStack } from './stack';

const MODE = positional[0] ?? 'all';
const COUNT = Number(positional[1] ?? 50);
const PER_SECOND = Number(positional[2] ?? 2);
const BURSTS = (positional[3] ?? '100,200').split(',').map(Number);
const BURST_SENDERS = 32;
/** `--warm=N`: a burst of N incidents, settled and not measured, before each measured burst. */
const WARM = Number(flag('warm') ?? 0);
const PHASES = process.argv.includes('--phases');
const COMMANDS = process.argv.includes('--commands');
const EVENTS = process.argv.includes('--events');
const JS_PROFILE = flag('js-profile');
// One stack's profiles and one window per directory: bench/js-profile.ts reads them as one burst.
if (JS_PROFILE && (MODE !== 'burst' || BURSTS.length !== 1))
  throw new Error('--js-profile profiles one burst: one burst size, e.g. `burst 50 2 50`');
if (replicasFlag() && (JS_PROFILE || COMMANDS))
  throw new Error('--js-profile and --commands read the processes of foghorn dev: not with --replicas');
/** The runbook's own time: Wait 1s + verification window 5s. */
const FLOOR_MS = 6_000;
const SETTLE_TIMEOUT_MS = 15 * 60_000;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- API JSON
type Json = any;

interface Stack {
  bench: BenchStack;
  dataDir: string;
  /** Where each process writes its store command counts (`--commands`). */
  countsDir: string;
  listener: http.Server;
  /** Idempotency-Key of every request the runbook's step sent. */
  hits: string[];
  /** The embedded Temporal's address (`--events`). */
  temporal: string;
  /** A call to the first API; with `to`, to the API for the to-th request. */
  call: (method: string, p: string, body?: unknown, to?: number) => Promise<{ status: number; body: Json }>;
}

async function startStack(): Promise<Stack> {
  const hits: string[] = [];
  const listener = http.createServer((req, res) => {
    hits.push(String(req.headers['idempotency-key'] ?? ''));
    req.resume();
    req.on('end', () => res.end('ok'));
  });
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
  const dataDir = mkdtempSync(path.join(tmpdir(), 'foghorn-bench-remediation-'));
  const countsDir = path.join(dataDir, 'store-commands');
  if (COMMANDS) mkdirSync(countsDir);
  const bench = await startBenchStack(
    dataDir,
    {
      ...(COMMANDS && { FOGHORN_STORE_COMMAND_COUNTS: countsDir }),
      FOGHORN_RATE_LIMIT: '1000000',
      FOGHORN_LLM_BASE_URL: '', // the rules analyzer; no agentic strategy
      FOGHORN_WEBHOOK_ADDR: '',
      KUBECONFIG: '', // no cluster: verification checks signals only
    },
    jsProfileFlags(JS_PROFILE),
  );
  const call = async (method: string, p: string, body?: unknown, to = 0) => {
    const res = await fetch(bench.api(to) + p, {
      method,
      headers: { authorization: `Bearer ${bench.token}`, 'content-type': 'application/json' },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const stack: Stack = (current = { bench, dataDir, countsDir, listener, hits, temporal: bench.temporal, call });
  const port = (listener.address() as AddressInfo).port;
  const created = await call('POST', '/runbooks', {
    name: 'bench-http-fix',
    category: 'custom',
    description: 'Benchmark: tell a local listener, wait 1s, verify for 5s',
    version: '1.0.0',
    automated: true,
    severity: ['low'],
    targets: { signalTypes: ['Custom'], resourceKinds: ['Deployment'] },
    steps: [
      {
        type: 'HttpRequest',
        params: { method: 'POST', url: `http://127.0.0.1:${port}/fix/{{deployment}}`, expectStatus: 200 },
      },
      { type: 'Wait', params: { duration: '1s' } },
    ],
    verificationWindow: '5s',
  });
  if (created.status !== 201) throw new Error(`runbook: HTTP ${created.status} ${JSON.stringify(created.body)}`);
  return stack;
}

async function stopStack(s: Stack) {
  current = undefined;
  await s.bench.shutdown();
  await new Promise((r) => s.listener.close(r));
  rmSync(s.dataDir, { recursive: true, force: true });
}

/** Opens one incident (Custom, low: plan risk 10 + 10 for the HttpRequest, no approval). */
async function open(s: Stack, namespace: string, i: number): Promise<void> {
  const res = await s.call(
    'POST',
    '/incidents',
    {
      resource: `Deployment/svc-${i}`,
      namespace,
      signalType: 'Custom',
      severity: 'low',
      description: 'benchmark incident',
    },
    i,
  );
  if (res.status !== 201) throw new Error(`POST /incidents: HTTP ${res.status} ${JSON.stringify(res.body)}`);
}

async function listAll(s: Stack, p: string): Promise<Json[]> {
  const items: Json[] = [];
  for (let page = 1; ; page++) {
    const res = await s.call('GET', `${p}&pageSize=100&page=${page}`);
    items.push(...res.body.items);
    if (items.length >= res.body.metadata.totalCount || res.body.items.length === 0) return items;
  }
}

const SETTLED = ['Resolved', 'Escalated', 'Failed'];

/** Waits until every incident of `namespace` has left automation; its incidents and plans. */
async function settle(s: Stack, namespace: string, expected: number) {
  const deadline = Date.now() + SETTLE_TIMEOUT_MS;
  let incidents: Json[] = [];
  for (;;) {
    incidents = await listAll(s, `/incidents?namespace=${namespace}`);
    if (incidents.length >= expected && incidents.every((i) => SETTLED.includes(i.state))) break;
    if (Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 2_000));
  }
  const plans = await listAll(s, `/remediations?namespace=${namespace}`);
  return { incidents, plans };
}

const ms = (iso: string) => new Date(iso).getTime();
const sec = (x: number) => `${(x / 1000).toFixed(2)} s`;

/** Plans in flight at once, from their [startedAt, completedAt] intervals: peak and time-weighted mean. */
function overlap(plans: Json[]) {
  const edges: [number, number][] = [];
  for (const p of plans) if (p.completedAt) edges.push([ms(p.startedAt), 1], [ms(p.completedAt), -1]);
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  let peak = 0;
  let area = 0;
  for (let i = 0; i < edges.length; i++) {
    now += edges[i][1];
    peak = Math.max(peak, now);
    if (i + 1 < edges.length) area += now * (edges[i + 1][0] - edges[i][0]);
  }
  const span = edges.length ? edges[edges.length - 1][0] - edges[0][0] : 0;
  return { peak, mean: span > 0 ? area / span : 0 };
}

/** Everything one run says: latencies, overlap, throughput, and what did not complete. */
function report(label: string, s: Stack, incidents: Json[], plans: Json[], expected: number) {
  const detected = new Map(incidents.map((i) => [i.name, ms(i.detectedAt)]));
  const completed = plans.filter((p) => p.state === 'Completed');
  const total = completed.map((p) => ms(p.completedAt) - detected.get(p.issueRef)!).sort((a, b) => a - b);
  const queue = completed.map((p) => ms(p.startedAt) - detected.get(p.issueRef)!).sort((a, b) => a - b);
  const run = completed.map((p) => ms(p.completedAt) - ms(p.startedAt)).sort((a, b) => a - b);
  const first = Math.min(...detected.values());
  const last = Math.max(...completed.map((p) => ms(p.completedAt)));
  const { peak, mean } = overlap(plans);
  const notResolved = incidents.filter((i) => i.state !== 'Resolved');
  const byState = (xs: Json[], key: string) =>
    Object.entries(xs.reduce((m: Record<string, number>, x) => ({ ...m, [x[key]]: (m[x[key]] ?? 0) + 1 }), {}))
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
  console.log(`\n${s.bench.label}: ${label} (load1 ${loadavg()[0].toFixed(1)})`);
  console.log(
    `| incidents | completed | alert → Completed p50 / p95 / max | alert → plan started p50 / p95 | plan run p50 / p95 (floor 6 s) | in flight at once: peak / mean | throughput |`,
  );
  console.log('|---|---|---|---|---|---|---|');
  console.log(
    `| ${incidents.length}/${expected} | ${completed.length} | ${sec(percentile(total, 50))} / ${sec(percentile(total, 95))} / ${sec(total[total.length - 1])} | ` +
      `${sec(percentile(queue, 50))} / ${sec(percentile(queue, 95))} | ${sec(percentile(run, 50))} / ${sec(percentile(run, 95))} | ` +
      `${peak} / ${mean.toFixed(1)} | ${((completed.length / (last - first)) * 1000).toFixed(2)} plans/s |`,
  );
  console.log(
    `engine time above the floor (alert → Completed − 6 s): p50 ${sec(percentile(total, 50) - FLOOR_MS)}, p95 ${sec(percentile(total, 95) - FLOOR_MS)}; ` +
      `HTTP steps received ${s.hits.length} (distinct keys ${new Set(s.hits).size}) for ${plans.length} plans; ` +
      `plans: ${byState(plans, 'state')}; incidents not resolved: ${notResolved.length ? byState(notResolved, 'state') : 0}`,
  );
}

/** Each process's store command counts, by process name. */
type StackCommandCounts = Map<string, CommandCounts>;

/** Each process's store commands so far, by process name (the files are a second old at most: that is waited out). */
async function commandCounts(s: Stack): Promise<StackCommandCounts> {
  await new Promise((r) => setTimeout(r, 1_500));
  const names = new Map(stackProcesses(s.bench.dev!.child.pid!).map((p) => [p.pid, p.name]));
  return new Map(
    readdirSync(s.countsDir).map((f) => [
      names.get(Number(path.basename(f, '.json'))) ?? f,
      JSON.parse(readFileSync(path.join(s.countsDir, f), 'utf8')) as CommandCounts,
    ]),
  );
}

/** Per process: store commands per incident between two readings, by command and collection, most sent first. */
function showCommands(before: StackCommandCounts, after: StackCommandCounts, size: number) {
  console.log('| process | store commands per incident | by command and collection, per incident |\n|---|---|---|');
  for (const [name, counts] of after) {
    const was = before.get(name) ?? {};
    const sent = Object.entries(counts)
      .map(([command, n]) => [command, n - (was[command] ?? 0)] as const)
      .filter(([, n]) => n > 0)
      .sort((a, b) => b[1] - a[1]);
    const total = sent.reduce((sum, [, n]) => sum + n, 0);
    const each = sent.map(([command, n]) => `${command} ${(n / size).toFixed(2)}`);
    console.log(`| ${name} | ${(total / size).toFixed(1)} | ${each.join(', ')} |`);
  }
}

/**
 * What Temporal kept for the workflows started since `since`, per incident: how many of each
 * type, and their history events by type (`--events`). Every event is a write to Temporal's
 * store, and every workflow task a round trip to the worker.
 */
async function events(s: Stack, since: Date, size: number) {
  const connection = await Connection.connect({ address: s.temporal });
  try {
    const client = new Client({ connection });
    const workflows = new Map<string, number>();
    const byType = new Map<string, number>();
    /** Encoded bytes by event type: what Temporal writes to its store and sends the worker. */
    const bytesByType = new Map<string, number>();
    /** One history of each workflow type, in order, abbreviated. */
    const sample = new Map<string, string[]>();
    let total = 0;
    for await (const wf of client.workflow.list()) {
      if (wf.startTime < since) continue;
      workflows.set(wf.type, (workflows.get(wf.type) ?? 0) + 1);
      const history = await client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory();
      const names = (history.events ?? []).map((e) =>
        (Object.keys(e).find((k) => k.endsWith('EventAttributes')) ?? 'unknown').replace(/EventAttributes$/, ''),
      );
      names.forEach((name, i) => {
        byType.set(name, (byType.get(name) ?? 0) + 1);
        const bytes = temporal.api.history.v1.HistoryEvent.encode(history.events![i]).finish().length;
        bytesByType.set(name, (bytesByType.get(name) ?? 0) + bytes);
      });
      total += names.length;
      // The sample is a finished run's, each upsert with what it said (a visibility write each).
      if (!sample.has(wf.type) && wf.status.name !== 'RUNNING')
        sample.set(
          wf.type,
          names.map((name, i) => {
            const fields =
              history.events?.[i].upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields;
            return fields
              ? `${name}(${Object.entries(fields)
                  .map(([k, v]) => `${k}=${said(v.data)}`)
                  .join(',')})`
              : name;
          }),
        );
    }
    const each = (m: Map<string, number>) =>
      [...m]
        .sort((a, b) => b[1] - a[1])
        .map(([k, n]) => `${k} ${(n / size).toFixed(2)}`)
        .join(', ');
    console.log(`Temporal per incident: workflows ${each(workflows)}`);
    console.log(`history events per incident: ${(total / size).toFixed(1)}: ${each(byType)}`);
    const bytes = [...bytesByType.values()].reduce((sum, n) => sum + n, 0);
    console.log(`history bytes per incident: ${(bytes / size).toFixed(0)}: ${each(bytesByType)}`);
    for (const [type, names] of sample) console.log(`one ${type}: ${names.join(' ')}`);
  } finally {
    await connection.close();
  }
}

/** A search attribute's value as upserted (JSON in the payload). */
const said = (data?: Uint8Array | null) => (data ? Buffer.from(data).toString() : '');

/**
 * The median time from each timeline milestone to the next, over the incidents that reached
 * both: where an incident's time goes (`--phases`). The events are the product's own records.
 */
async function phases(s: Stack, incidents: Json[]) {
  const milestones: [string, (e: Json) => boolean][] = [
    ['detected', (e) => e.type === 'Detection'],
    ['analysis started', (e) => e.type === 'Analysis' && /started/.test(e.message)],
    ['analysed', (e) => e.type === 'Analysis' && !/started/.test(e.message)],
    ['runbook matched', (e) => e.type === 'RunbookMatch'],
    ['plan started', (e) => e.type === 'RemediationStarted'],
    ['step 1 done', (e) => e.type === 'ActionExecuted' && e.details?.step === 1],
    ['step 2 done', (e) => e.type === 'ActionExecuted' && e.details?.step === 2],
    ['completed', (e) => e.type === 'RemediationCompleted'],
    ['resolved', (e) => e.type === 'Resolved'],
    ['postmortem', (e) => e.type === 'PostMortemGenerated'],
  ];
  const gaps: number[][] = milestones.map(() => []);
  const since: number[][] = milestones.map(() => []);
  for (const incident of incidents) {
    const { body } = await s.call('GET', `/incidents/${incident.name}/timeline`);
    const at = milestones.map(([, is]) => body.events.find(is)?.timestamp as string | undefined);
    for (let i = 1; i < milestones.length; i++) {
      if (at[i] && at[0]) since[i].push(ms(at[i]!) - ms(at[0]!));
      if (at[i] && at[i - 1]) gaps[i].push(ms(at[i]!) - ms(at[i - 1]!));
    }
  }
  console.log('| milestone | from the previous, p50 | from detection, p50 / p95 |\n|---|---|---|');
  for (let i = 1; i < milestones.length; i++) {
    const [g, t] = [gaps[i].sort((a, b) => a - b), since[i].sort((a, b) => a - b)];
    if (g.length === 0) continue;
    console.log(
      `| ${milestones[i][0]} | ${sec(percentile(g, 50))} | ${sec(percentile(t, 50))} / ${sec(percentile(t, 95))} |`,
    );
  }
}

async function latencyMode() {
  const s = await startStack();
  try {
    const namespace = 'bench-latency';
    const gapMs = 1000 / PER_SECOND;
    const started = performance.now();
    const sends: Promise<void>[] = [];
    for (let i = 0; i < COUNT; i++) {
      const due = started + i * gapMs;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      sends.push(open(s, namespace, i));
    }
    await Promise.all(sends);
    const { incidents, plans } = await settle(s, namespace, COUNT);
    report(`latency: ${COUNT} incidents, ${PER_SECOND} per second`, s, incidents, plans, COUNT);
    if (PHASES) await phases(s, incidents);
  } finally {
    await stopStack(s);
  }
}

async function burstMode(size: number) {
  const s = await startStack();
  try {
    if (WARM > 0) {
      // A long-running stack has compiled its hot paths (JIT in the JVM and both Node processes).
      await runConcurrently(WARM, BURST_SENDERS, (i) => open(s, 'bench-warm-up', i));
      await settle(s, 'bench-warm-up', WARM);
    }
    const namespace = `bench-burst-${size}`;
    const cpu = s.bench.cpu();
    const commandsBefore = COMMANDS ? await commandCounts(s) : undefined;
    const before = cpu();
    const startedAt = new Date();
    const burstFrom = monotonicMicros();
    const t0 = performance.now();
    await runConcurrently(size, BURST_SENDERS, (i) => open(s, namespace, i));
    const posted = performance.now() - t0;
    const { incidents, plans } = await settle(s, namespace, size);
    const used = cpuBetween(before, cpu());
    if (JS_PROFILE) writeProfileWindow(JS_PROFILE, s.bench.dev!.child.pid!, burstFrom, monotonicMicros());
    report(
      `burst: ${size} incidents at once (${BURST_SENDERS} senders, all posted in ${sec(posted)}), ` +
        (WARM > 0 ? `after a warm-up burst of ${WARM}` : 'on a fresh stack'),
      s,
      incidents,
      plans,
      size,
    );
    console.log(
      `CPU s until settled: ${showCpu(used)}, ${((cpuTotal(used) / size) * 1000).toFixed(0)} ms per incident`,
    );
    if (commandsBefore) showCommands(commandsBefore, await commandCounts(s), size);
    if (EVENTS) await events(s, startedAt, size);
    if (PHASES) await phases(s, incidents);
  } finally {
    await stopStack(s);
  }
}

/** Ctrl-C or a timeout stops the stack of the mode in flight too (no orphaned `foghorn dev`). */
let current: Stack | undefined;
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => {
    void (current ? stopStack(current) : Promise.resolve()).finally(() => process.exit(130));
  });

async function main() {
  if (MODE === 'latency' || MODE === 'all') await latencyMode();
  if (MODE === 'burst' || MODE === 'all') for (const size of BURSTS) await burstMode(size);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
