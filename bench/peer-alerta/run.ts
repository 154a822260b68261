/**
 * Peer benchmark: Foghorn's Alertmanager endpoint against Alerta's Prometheus webhook
 * (alerta-server under gunicorn, 2 sync workers, on PostgreSQL), driven by one load generator
 * with the same Alertmanager v4 payloads, the two sides interleaved in one run (A,F,F,A).
 *
 * Install Alerta first (idempotent; PostgreSQL from Debian, a venv, all under .tools/peer-alerta/):
 *   bash bench/peer-alerta/install.sh
 * Then:
 *   npx ts-node --transpile-only bench/peer-alerta/run.ts [alerts=1000] [resources=50] [senders=1,8,32]
 *       [--distinct=300] [--distinct-senders=8] [--rounds=4] [--alerta-workers=2] [--settle=5]
 *       [--round-timeout=900]
 *   e.g. a smoke run:  … run.ts 20 5 1,8 --distinct=10 --rounds=2 --settle=1
 *   --distinct=0 skips the every-alert-a-new-resource case; senders= (empty) runs only that case.
 *
 * Each request carries one firing alert (severity warning; labels alertname, namespace,
 * deployment, and instance = "<namespace>/<deployment>", which Alerta takes as its resource).
 * Every round uses a fresh namespace, so no state carries over. After each round:
 *   Foghorn: GET /incidents?namespace=…&resource=Deployment/… must list exactly 1 incident per
 *            resource (and the 202 bodies must say "opened" once per resource, "correlated" else);
 *   Alerta:  GET /alerts?resource=…&environment=Production must hold exactly 1 alert per resource
 *            with duplicateCount = sends − 1.
 * Printed per round: alerts/s, request p50/p99, errors, dedup, load. Per case and side:
 * alerts/s (all requests ÷ wall time), request p50/p99, errors (non-2xx, network, timeout),
 * dedup ok/resources, CPU ms per alert of each side's process tree
 * (/proc; Foghorn: node API+worker, Temporal dev server, MongoDB-wire JVM; Alerta: gunicorn,
 * PostgreSQL) while its rounds ran, its CPU ms/s while idle (the settle pause before each round:
 * Foghorn's includes workflows still finishing the previous round), the 1-minute load average at
 * the end of its rounds; then Foghorn/Alerta ratios.
 * Only 127.0.0.1; every process started here is stopped at the end, on error and on Ctrl-C.
 */
import { spawn, spawnSync, type ChildProcess } from 'child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'fs';
import { loadavg, tmpdir } from 'os';
import path from 'path';
import { freePort } from '../../test/harness/ports';
import { devEnv, descendants, startDev, stopDev, waitReady, type DevProcess } from '../../test/harness/dev-process';
import { procStat } from '../processes';
import { summary } from '../stats';
import { positional } from '../args';

// ------------------------------------------------------------------------------------------------
// Arguments
// ------------------------------------------------------------------------------------------------
const flags = new Map(
  process.argv
    .slice(2)
    .filter((a) => a.startsWith('--'))
    .map((a) => {
      const [k, v] = a.slice(2).split('=');
      return [k, v ?? ''] as const;
    }),
);
const int = (v: string | undefined, dflt: number) => (v === undefined || v === '' ? dflt : Number.parseInt(v, 10));
const ALERTS = int(positional[0], 1000);
const RESOURCES = int(positional[1], 50);
const SENDERS = (positional[2] ?? '1,8,32')
  .split(',')
  .filter((s) => s !== '')
  .map(Number);
const DISTINCT = int(flags.get('distinct'), 300);
const DISTINCT_SENDERS = int(flags.get('distinct-senders'), 8);
const ROUNDS = int(flags.get('rounds'), 4);
const ALERTA_WORKERS = int(flags.get('alerta-workers'), 2);
const SETTLE_S = int(flags.get('settle'), 5);
const ROUND_TIMEOUT_S = int(flags.get('round-timeout'), 900);
const REQUEST_TIMEOUT_MS = 60_000;
for (const [name, v] of Object.entries({ ALERTS, RESOURCES, DISTINCT, DISTINCT_SENDERS, ROUNDS, ALERTA_WORKERS })) {
  if (!Number.isInteger(v) || v < 0 || v > 100_000) throw new Error(`bad ${name}: ${v}`);
}
if (SENDERS.some((s) => !Number.isInteger(s) || s < 1 || s > 256)) throw new Error(`bad senders: ${SENDERS}`);
if (RESOURCES < 1 || RESOURCES > ALERTS) throw new Error('need 1 <= resources <= alerts');

const ROOT = path.join(__dirname, '../..');
const TOOLS = path.join(ROOT, '.tools/peer-alerta');

// ------------------------------------------------------------------------------------------------
// Process bookkeeping: everything started here is stopped by cleanup()
// ------------------------------------------------------------------------------------------------
const cleanups: (() => Promise<void>)[] = [];
let cleaning: Promise<void> | undefined;
function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    for (const c of cleanups.reverse()) await c().catch((e) => console.error('cleanup:', e));
  })();
  return cleaning;
}
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    console.error(`\n${sig}: stopping everything this benchmark started…`);
    void cleanup().then(() => process.exit(130));
  });
}

function exited(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(false), ms);
    child.once('exit', () => (clearTimeout(t), resolve(true)));
  });
}

/** CPU time (ms) of `pids`, by command name. */
function cpuByName(pids: number[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const pid of pids) {
    const stat = procStat(pid); // undefined: exited meanwhile
    if (stat) out.set(stat.name, (out.get(stat.name) ?? 0) + stat.cpuSeconds * 1000);
  }
  return out;
}

// ------------------------------------------------------------------------------------------------
// Alerta: private PostgreSQL + gunicorn
// ------------------------------------------------------------------------------------------------
interface Alerta {
  base: string;
  pids: () => number[];
}

async function startAlerta(): Promise<Alerta> {
  const need = ['pgbin', 'pguser', 'alertad.conf', 'venv/bin/gunicorn', 'pgdata/PG_VERSION'];
  const missing = need.filter((f) => !existsSync(path.join(TOOLS, f)));
  if (missing.length) {
    throw new Error(
      `Alerta is not installed (missing ${missing.join(', ')} in ${TOOLS}): run bash bench/peer-alerta/install.sh`,
    );
  }
  const pgbin = readFileSync(path.join(TOOLS, 'pgbin'), 'utf8').trim();
  const pguser = readFileSync(path.join(TOOLS, 'pguser'), 'utf8').trim();
  const asPg = (cmd: string, args: string[]) =>
    process.getuid?.() === 0
      ? spawnSync('runuser', ['-u', pguser, '--', cmd, ...args], { encoding: 'utf8' })
      : spawnSync(cmd, args, { encoding: 'utf8' });
  const pgdata = path.join(TOOLS, 'pgdata');
  const pgrun = path.join(TOOLS, 'pgrun');
  const pgCtl = path.join(pgbin, 'pg_ctl');

  // A cluster left running by an interrupted run is ours (our data dir): stop it first.
  if (asPg(pgCtl, ['-D', pgdata, 'status']).status === 0) asPg(pgCtl, ['-D', pgdata, '-m', 'fast', '-w', 'stop']);
  const pgPort = await freePort();
  const started = asPg(pgCtl, [
    '-D',
    pgdata,
    '-o',
    `-p ${pgPort} -c listen_addresses=127.0.0.1 -k ${pgrun}`,
    '-l',
    path.join(pgrun, 'pg.log'),
    '-w',
    '-t',
    '60',
    'start',
  ]);
  if (started.status !== 0)
    throw new Error(`PostgreSQL did not start: ${started.stdout}${started.stderr}\n(see ${pgrun}/pg.log)`);
  cleanups.push(async () => {
    const r = asPg(pgCtl, ['-D', pgdata, '-m', 'fast', '-w', '-t', '60', 'stop']);
    if (r.status !== 0) console.error(`pg_ctl stop: ${r.stdout}${r.stderr}`);
  });
  const pgArgs = ['-h', '127.0.0.1', '-p', String(pgPort), '-U', 'alerta'];
  for (const [cmd, args] of [
    ['dropdb', ['--if-exists', ...pgArgs, 'alerta']],
    ['createdb', [...pgArgs, 'alerta']],
  ] as const) {
    const r = spawnSync(path.join(pgbin, cmd), [...args], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${cmd} failed: ${r.stderr}`);
  }
  const env = {
    ...process.env,
    DATABASE_URL: `postgres://alerta@127.0.0.1:${pgPort}/alerta`,
    ALERTA_SVR_CONF_FILE: path.join(TOOLS, 'alertad.conf'),
    DEBUG: 'False',
  };
  const venv = path.join(TOOLS, 'venv/bin');
  // The schema once, before the workers (each worker's create_app() then finds it in place).
  const init = spawnSync(path.join(venv, 'python'), ['-c', 'from alerta.app import create_app; create_app()'], {
    env,
    encoding: 'utf8',
  });
  if (init.status !== 0) throw new Error(`Alerta schema init failed:\n${init.stderr}`);

  const port = await freePort();
  const gunicorn = spawn(
    path.join(venv, 'gunicorn'),
    ['-w', String(ALERTA_WORKERS), '-b', `127.0.0.1:${port}`, '--log-level', 'warning', 'alerta.app:create_app()'],
    { env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  gunicorn.stdout!.on('data', (d) => (output += d));
  gunicorn.stderr!.on('data', (d) => (output += d));
  cleanups.push(async () => {
    gunicorn.kill('SIGTERM');
    if (!(await exited(gunicorn, 30_000))) gunicorn.kill('SIGKILL');
  });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (gunicorn.exitCode !== null) throw new Error(`gunicorn exited:\n${output}`);
    const ok = await fetch(`${base}/alerts?page-size=1`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (i > 240) throw new Error(`Alerta did not answer within 60 s:\n${output}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  const postmaster = Number(readFileSync(path.join(pgdata, 'postmaster.pid'), 'utf8').split('\n')[0]);
  return { base, pids: () => [gunicorn.pid!, ...descendants(gunicorn.pid!), postmaster, ...descendants(postmaster)] };
}

// ------------------------------------------------------------------------------------------------
// Load
// ------------------------------------------------------------------------------------------------
interface Case {
  label: string;
  alerts: number;
  resources: number;
  senders: number;
}
type Side = 'Alerta' | 'Foghorn';

interface RoundResult {
  side: Side;
  seconds: number;
  latencies: number[];
  sent: number;
  errors: number;
  errorSamples: string[];
  dedupOk: number;
  resources: number;
  folded: number; // duplicates folded (Alerta: Σ duplicateCount; Foghorn: "correlated" outcomes)
  cpuMs: Map<string, number>;
  load1: number;
  /** CPU ms/s of this side's processes during the settle pause before the round (no requests). */
  idleCpu: number;
}

const STARTS_AT = new Date().toISOString();

/** The Alertmanager v4 body of alert i of a round: one firing alert for resource i mod resources. */
function payload(namespace: string, deployment: string, i: number) {
  return {
    version: '4',
    groupKey: `{}:{alertname="KubePodCrashLooping"}`,
    status: 'firing',
    receiver: 'bench',
    groupLabels: { alertname: 'KubePodCrashLooping' },
    commonLabels: {},
    commonAnnotations: {},
    externalURL: 'http://alertmanager.bench:9093',
    alerts: [
      {
        status: 'firing',
        labels: {
          alertname: 'KubePodCrashLooping',
          severity: 'warning',
          namespace,
          deployment,
          instance: `${namespace}/${deployment}`,
        },
        annotations: { summary: `${deployment} is crash looping` },
        startsAt: STARTS_AT,
        endsAt: '0001-01-01T00:00:00Z',
        generatorURL: '',
        fingerprint: `${namespace}-${deployment}-${i}`.slice(0, 60),
      },
    ],
  };
}

async function pool<T>(n: number, concurrency: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(n);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, n) }, async () => {
      while (next < n) {
        const i = next++;
        out[i] = await task(i);
      }
    }),
  );
  return out;
}

const sideCpu = (side: Side, dev: DevProcess, alerta: Alerta) => {
  const pids = side === 'Foghorn' ? [dev.child.pid!, ...descendants(dev.child.pid!)] : alerta.pids();
  return [...cpuByName(pids).values()].reduce((a, b) => a + b, 0);
};

async function runRound(
  side: Side,
  c: Case,
  namespace: string,
  dev: DevProcess,
  alerta: Alerta,
  settleS = 0,
): Promise<RoundResult> {
  let idleCpu = NaN;
  if (settleS > 0) {
    const before = sideCpu(side, dev, alerta);
    await new Promise((r) => setTimeout(r, settleS * 1000));
    idleCpu = (sideCpu(side, dev, alerta) - before) / settleS;
  }
  const fHeaders = { authorization: `Bearer ${dev.token}`, 'content-type': 'application/json' };
  const url = side === 'Foghorn' ? `${dev.api}/alerts/alertmanager` : `${alerta.base}/webhooks/prometheus`;
  const headers = side === 'Foghorn' ? fHeaders : { 'content-type': 'application/json' };
  const deployment = (r: number) => `svc-${r}`;
  const bodies = Array.from({ length: c.alerts }, (_, i) =>
    JSON.stringify(payload(namespace, deployment(i % c.resources), i)),
  );
  const pids = side === 'Foghorn' ? () => [dev.child.pid!, ...descendants(dev.child.pid!)] : alerta.pids;
  const cpuBefore = cpuByName(pids());

  const latencies: number[] = [];
  const errorSamples: string[] = [];
  let errors = 0;
  let sent = 0;
  let correlated = 0;
  const opened = new Map<string, number>();
  const deadline = Date.now() + ROUND_TIMEOUT_S * 1000;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: c.senders }, async () => {
      while (next < c.alerts && Date.now() < deadline) {
        const i = next++;
        sent++;
        const t0 = performance.now();
        try {
          const res = await fetch(url, {
            method: 'POST',
            headers,
            body: bodies[i],
            signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
          });
          const text = await res.text();
          latencies.push(performance.now() - t0);
          if (res.status < 200 || res.status > 299) {
            errors++;
            if (errorSamples.length < 3) errorSamples.push(`HTTP ${res.status}: ${text.slice(0, 200)}`);
          } else if (side === 'Foghorn') {
            const outcome = (JSON.parse(text) as { items: { outcome: string }[] }).items[0]?.outcome;
            if (outcome === 'correlated') correlated++;
            if (outcome === 'opened')
              opened.set(deployment(i % c.resources), (opened.get(deployment(i % c.resources)) ?? 0) + 1);
          }
        } catch (e) {
          latencies.push(performance.now() - t0);
          errors++;
          if (errorSamples.length < 3) errorSamples.push(String((e as Error).cause ?? e));
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpuAfter = cpuByName(pids());
  const cpuMs = new Map([...cpuAfter].map(([k, v]) => [k, v - (cpuBefore.get(k) ?? 0)]));
  const load1 = loadavg()[0];

  // Dedup exactness, resource by resource.
  const sends = (r: number) => Math.floor(c.alerts / c.resources) + (r < c.alerts % c.resources ? 1 : 0);
  let folded = side === 'Foghorn' ? correlated : 0;
  const checks = await pool(c.resources, 8, async (r) => {
    if (side === 'Foghorn') {
      const q = new URLSearchParams({ namespace, resource: `Deployment/${deployment(r)}`, pageSize: '100' });
      const res = await fetch(`${dev.api}/incidents?${q}`, { headers: fHeaders });
      if (!res.ok) return false;
      const list = (await res.json()) as { metadata: { totalCount: number }; items: { state: string }[] };
      return list.metadata.totalCount === 1 && list.items[0].state !== 'Resolved' && opened.get(deployment(r)) === 1;
    }
    const q = new URLSearchParams({
      resource: `${namespace}/${deployment(r)}`,
      environment: 'Production',
      'page-size': '100',
    });
    const res = await fetch(`${alerta.base}/alerts?${q}`);
    if (!res.ok) return false;
    const body = (await res.json()) as { total: number; alerts: { duplicateCount: number }[] };
    if (body.alerts.length === 1) folded += body.alerts[0].duplicateCount;
    return body.total === 1 && body.alerts[0].duplicateCount === sends(r) - 1;
  });
  return {
    side,
    seconds,
    latencies,
    sent,
    errors,
    errorSamples,
    dedupOk: checks.filter(Boolean).length,
    resources: c.resources,
    folded,
    cpuMs,
    load1,
    idleCpu,
  };
}

// ------------------------------------------------------------------------------------------------
// Report
// ------------------------------------------------------------------------------------------------
interface Agg {
  rate: number;
  p50: number;
  p99: number;
  errors: number;
  sent: number;
  dedup: string;
  folded: string;
  cpuPerAlert: number;
  cpuTop: string;
  load: string;
  perRound: string;
  idle: number;
}

function aggregate(rs: RoundResult[], c: Case): Agg {
  const sent = rs.reduce((a, r) => a + r.sent, 0);
  const seconds = rs.reduce((a, r) => a + r.seconds, 0);
  const l = summary(rs.flatMap((r) => r.latencies));
  const cpu = new Map<string, number>();
  for (const r of rs) for (const [k, v] of r.cpuMs) cpu.set(k, (cpu.get(k) ?? 0) + v);
  const cpuTotal = [...cpu.values()].reduce((a, b) => a + b, 0);
  const loads = rs.map((r) => r.load1);
  return {
    rate: sent / seconds,
    p50: l.p50,
    p99: l.p99,
    errors: rs.reduce((a, r) => a + r.errors, 0),
    sent,
    dedup: `${rs.reduce((a, r) => a + r.dedupOk, 0)}/${rs.reduce((a, r) => a + r.resources, 0)}`,
    folded: `${rs.reduce((a, r) => a + r.folded, 0)}/${rs.length * (c.alerts - c.resources)}`,
    cpuPerAlert: cpuTotal / sent,
    cpuTop: [...cpu]
      .filter(([, v]) => v > 0)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 4)
      .map(([k, v]) => `${k} ${(v / sent).toFixed(1)}`)
      .join(', '),
    load: `${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}`,
    perRound: rs.map((r) => (r.sent / r.seconds).toFixed(1)).join(', '),
    idle: rs.reduce((a, r) => a + r.idleCpu, 0) / rs.length,
  };
}

const pad = (s: string | number, n: number) => String(s).padStart(n);

async function main() {
  const cases: Case[] = [
    ...(ALERTS > 0 ? SENDERS : []).map((s) => ({
      label: `${ALERTS} alerts / ${RESOURCES} resources, ${s} sender${s > 1 ? 's' : ''}`,
      alerts: ALERTS,
      resources: RESOURCES,
      senders: s,
    })),
    ...(DISTINCT > 0
      ? [
          {
            label: `${DISTINCT} distinct resources, ${DISTINCT_SENDERS} senders`,
            alerts: DISTINCT,
            resources: DISTINCT,
            senders: DISTINCT_SENDERS,
          },
        ]
      : []),
  ];
  const commit = spawnSync('git', ['-C', ROOT, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).stdout.trim();
  const alertaVersion = spawnSync(
    path.join(TOOLS, 'venv/bin/python'),
    ['-c', 'import alerta.version as v; print(v.__version__)'],
    { encoding: 'utf8' },
  ).stdout?.trim();
  console.log(
    `peer-alerta: commit ${commit}, Alerta ${alertaVersion || '?'} (gunicorn ${ALERTA_WORKERS} sync workers, PostgreSQL), ${ROUNDS} rounds per case (A,F,F,A…), load ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );

  const alerta = await startAlerta();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'foghorn-peer-'));
  cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
  const dev = await startDev({ ...(await devEnv(dataDir)), FOGHORN_RATE_LIMIT: '1000000' });
  cleanups.push(async () => {
    await Promise.race([stopDev(dev), new Promise((r) => setTimeout(r, 60_000))]);
    if (dev.child.exitCode === null) dev.child.kill('SIGKILL');
  });
  await waitReady(dev.api);
  console.log(`Alerta ${alerta.base}  Foghorn ${dev.api}\n`);

  // Warm both (JIT, connection pools, first-write paths), not measured: at the widest case's
  // concurrency, each sender opening a resource and then joining it, so that no measured round
  // is the first to do either with that many at once (a fresh stack's first burst answers in a
  // ladder of up to a second, which would decide the whole run's p99).
  const widest = Math.max(...cases.map((c) => c.senders));
  const warm: Case = { label: 'warm-up', alerts: 2 * widest, resources: widest, senders: widest };
  const runId = Date.now().toString(36).slice(-5);
  await runRound('Alerta', warm, `warm-a-${runId}`, dev, alerta);
  await runRound('Foghorn', warm, `warm-f-${runId}`, dev, alerta);

  const summaryRows: string[] = [];
  for (const [ci, c] of cases.entries()) {
    const results: RoundResult[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // A,F,F,A, A,F,F,A …: each side as often first as second.
      const side: Side = [0, 3].includes(round % 4) ? 'Alerta' : 'Foghorn';
      const namespace = `p${runId}-c${ci}-r${round}`;
      const r = await runRound(side, c, namespace, dev, alerta, SETTLE_S);
      results.push(r);
      const l = summary(r.latencies);
      console.log(
        `  ${c.label} round ${round + 1} ${side.padEnd(7)} ${(r.sent / r.seconds).toFixed(1)} alerts/s, p50 / p99 ${l.p50.toFixed(0)} / ${l.p99.toFixed(0)} ms, errors ${r.errors}, dedup ${r.dedupOk}/${r.resources}, load ${r.load1.toFixed(2)}, CPU before it ${r.idleCpu.toFixed(0)} ms/s` +
          (r.errorSamples.length ? `  e.g. ${r.errorSamples[0]}` : '') +
          (r.sent < c.alerts ? `  (round timeout: ${r.sent}/${c.alerts} sent)` : ''),
      );
    }
    const a = aggregate(
      results.filter((r) => r.side === 'Alerta'),
      c,
    );
    const f = aggregate(
      results.filter((r) => r.side === 'Foghorn'),
      c,
    );
    console.log(`\n${c.label}`);
    console.log(
      `  side     alerts/s   p50 ms   p99 ms  errors  dedup ok  folded      cpu ms/alert  idle ms/s  load1     per round alerts/s  cpu ms/alert by process`,
    );
    for (const [name, s] of [
      ['Alerta', a],
      ['Foghorn', f],
    ] as const) {
      console.log(
        `  ${name.padEnd(7)} ${pad(s.rate.toFixed(1), 9)} ${pad(s.p50.toFixed(1), 8)} ${pad(s.p99.toFixed(1), 8)} ${pad(`${s.errors}/${s.sent}`, 7)} ${pad(s.dedup, 9)} ${pad(s.folded, 11)} ${pad(s.cpuPerAlert.toFixed(1), 13)}  ${pad(s.idle.toFixed(0), 9)} ${s.load.padEnd(9)} ${s.perRound.padEnd(19)} ${s.cpuTop}`,
      );
    }
    const tr = f.rate / a.rate;
    const pr = f.p99 / a.p99;
    console.log(
      `  Foghorn/Alerta: throughput ${tr.toFixed(2)}, p99 ${pr.toFixed(2)}, CPU per alert ${(f.cpuPerAlert / a.cpuPerAlert).toFixed(2)}\n`,
    );
    summaryRows.push(
      `| ${c.label} | ${a.rate.toFixed(1)} | ${f.rate.toFixed(1)} | **${tr.toFixed(2)}** | ${a.p50.toFixed(0)} / ${a.p99.toFixed(0)} | ${f.p50.toFixed(0)} / ${f.p99.toFixed(0)} | ${pr.toFixed(2)} | ${a.errors} / ${f.errors} | ${a.dedup} / ${f.dedup} | ${a.cpuPerAlert.toFixed(1)} / ${f.cpuPerAlert.toFixed(1)} | ${a.load} / ${f.load} |`,
    );
  }
  console.log('Markdown (docs/benchmarks.md):\n');
  console.log(
    '| case | Alerta alerts/s | Foghorn alerts/s | F/A throughput | Alerta p50 / p99 ms | Foghorn p50 / p99 ms | F/A p99 | errors A / F | dedup ok A / F | CPU ms/alert A / F | load1 A / F |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|');
  for (const row of summaryRows) console.log(row);
}

main().then(
  async () => {
    await cleanup();
    process.exit(0);
  },
  async (err) => {
    console.error(err);
    await cleanup();
    process.exit(1);
  },
);
