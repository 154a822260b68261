/**
 * Memory as users feel it under an alert storm: `foghorn dev` on a fresh data directory sits idle,
 * then takes a steady storm of Alertmanager alerts, mostly duplicates, with incidents opening and
 * resolving all the time (each resource's alerts resolve it every `churn` seconds, so new
 * incidents keep coming), then is left calm. An incident that escalated stays open when its
 * source resolves (it waits for a human), so the soak is that human: it resolves it through the
 * API, as an operator would, and the resource's next alert opens a new one. The RSS of every
 * process of the stack is sampled every 10 s throughout.
 *
 * The measure, decided before the first run with it (docs/decisions.md, "Performance and capacity"):
 * - idle: each process's peak RSS in the last minute of the idle stretch before the storm;
 * - under the storm: each process's peak RSS over the whole storm stays under its ceiling
 *   (CEILING_MIB below: round numbers comfortably above the storm plateau of the last recorded
 *   soak, API 233–246, store 644–651, Temporal 383–398 MiB; the worker's 463–492 MiB was with a
 *   forced heap compaction every 30 s, 554–603 without it, so 700);
 * - after: each process's peak RSS in the last minute of the calm returns near its idle level,
 *   at most NEAR_IDLE above it (25%).
 * The stack's `/readyz` is polled every second all along (bench/stall-watch.ts): a stall is
 * reported with what failed, and the store's threads are dumped while it lasts. Prints one line
 * per sample (with the open incidents, the working set, and those not triaged yet, the backlog,
 * and the host's load average) and a summary: the measure, errors by kind, stalls, and the
 * stack's own warnings and errors by message. Asserts nothing.
 *
 * Usage: npx ts-node --transpile-only bench/storm-soak.ts [stormMinutes=20] [calmMinutes=5]
 *        [alertsPerSecond=30] [resources=200] [churnSeconds=120] [idleMinutes=2]
 */
import './compiled';
import { rmSync, mkdtempSync } from 'fs';
import { loadavg, tmpdir } from 'os';
import path from 'path';
import { devEnv, startDev, stopDev, waitReady } from '../test/harness/dev-process';
import { rssMiB, stackProcesses } from './processes';
import { firingAlert } from './fixtures';
import { watchReadiness } from './stall-watch';

const STORM_MINUTES = Number(process.argv[2] ?? 20);
const CALM_MINUTES = Number(process.argv[3] ?? 5);
const RATE = Number(process.argv[4] ?? 30);
const RESOURCES = Number(process.argv[5] ?? 200);
const CHURN_S = Number(process.argv[6] ?? 120);
const IDLE_MINUTES = Number(process.argv[7] ?? 2);
const SAMPLE_MS = 10_000;
/** Rounds (one alert per resource each) between two resolves of a resource. */
const CHURN_ROUNDS = Math.max(2, Math.round((CHURN_S * RATE) / RESOURCES));
/** The most RSS each process may take under the storm, in MiB (stackProcesses' names). */
const CEILING_MIB: Record<string, number> = { api: 320, 'mongo-java': 768, temporal: 512, worker: 700 };
/** How far above its idle level a process may stay at the end of the calm: 25%. */
const NEAR_IDLE = 0.25;

interface AlertIngestResult {
  items: { outcome: string; incident?: string }[];
}

async function main() {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'foghorn-soak-'));
  const dev = await startDev({ ...(await devEnv(dataDir)), FOGHORN_RATE_LIMIT: '1000000' });
  const headers = { authorization: `Bearer ${dev.token}`, 'content-type': 'application/json' };
  let sent = 0;
  let errors = 0;
  /** What each error was: the storm's overflow, an answer's status (by request), a failed fetch. */
  const errorKinds = new Map<string, number>();
  const fail = (kind: string, body?: string) => {
    errors++;
    if (!errorKinds.has(kind)) console.log(`  first error of its kind: ${kind}${body ? ` ${body.slice(0, 300)}` : ''}`);
    errorKinds.set(kind, (errorKinds.get(kind) ?? 0) + 1);
  };
  let operatorResolves = 0;
  let stop = false;
  // Interrupted: the stack goes with it (its processes would outlive this one).
  for (const sig of ['SIGINT', 'SIGTERM'] as const)
    process.once(sig, () => {
      stop = true;
      void stopDev(dev).finally(() => process.exit(130));
    });
  try {
    await waitReady(dev.api);
    const processes = () => stackProcesses(dev.child.pid!);
    const dumpDir = path.join(tmpdir(), `foghorn-soak-stalls-${Date.now()}`); // made at the first dump
    const readiness = watchReadiness(dev.api, () => processes().find((p) => p.name === 'mongo-java')?.pid, dumpDir);
    console.log(
      `${IDLE_MINUTES} min idle, then a storm of ${STORM_MINUTES} min: ${RATE} alerts/s over ${RESOURCES} resources, ` +
        `each resolved every ${CHURN_S} s; then ${CALM_MINUTES} min calm; processes ${processes()
          .map((p) => `${p.name}=${p.pid}`)
          .join(' ')}`,
    );
    console.log(
      `the measure: peak RSS under the storm below ${Object.entries(CEILING_MIB)
        .map(([n, v]) => `${n} ${v} MiB`)
        .join(', ')}; after the calm, at most ${NEAR_IDLE * 100}% above idle`,
    );

    const incidentCount = (query: string) =>
      fetch(`${dev.api}/incidents?pageSize=1${query}`, { headers })
        .then((r) => r.json() as Promise<{ metadata: { totalCount: number } }>)
        .then((list) => list.metadata.totalCount);
    type Phase = 'idle' | 'storm' | 'calm';
    /** Minutes since the phase began; every sample of every phase, in order. */
    const samples: { phase: Phase; minute: number; rss: Map<string, number>; load: number }[] = [];
    /** Samples every 10 s for `minutes` from `from` (epoch ms), each printed. */
    const sampleFor = async (phase: Phase, from: number, minutes: number) => {
      for (let t = SAMPLE_MS; t <= minutes * 60_000; t += SAMPLE_MS) {
        await new Promise((r) => setTimeout(r, Math.max(0, from + t - Date.now())));
        const rss = new Map<string, number>();
        for (const p of processes()) rss.set(p.name, (rss.get(p.name) ?? 0) + rssMiB(p.pid));
        const minute = t / 60_000;
        const load = loadavg()[0];
        samples.push({ phase, minute, rss, load });
        // The working set: incidents whose workflows run (and sit in the worker's cache). Those not
        // triaged yet are the stack's backlog.
        const [incidents, resolved, untriaged] = [
          await incidentCount(''),
          await incidentCount('&state=Resolved'),
          await incidentCount('&state=Detected'),
        ];
        console.log(
          `  ${phase.padEnd(5)} ${minute.toFixed(1).padStart(5)} min  ${[...rss].map(([n, v]) => `${n} ${v} MiB`).join('  ')}  ` +
            `sent ${sent}, errors ${errors}, incidents ${incidents} (${incidents - resolved} open, ` +
            `${untriaged} not triaged yet, ${operatorResolves} resolved by the soak), load ${load.toFixed(2)}`,
        );
      }
    };

    await sampleFor('idle', Date.now(), IDLE_MINUTES);

    // The storm: a steady rate, one POST per tick, in flight at most 64 at once.
    const started = Date.now();
    let inFlight = 0;
    const storm = (async () => {
      for (let i = 0; !stop; i++) {
        const due = started + (i * 1000) / RATE;
        if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
        if (stop) break;
        if (inFlight >= 64) {
          fail('64 in flight'); // the stack could not keep up: counted, not queued without bound
          continue;
        }
        // Round k sends one alert to each resource; every churn-th alert of a resource resolves it
        // instead, staggered by resource, so each round resolves a share of them, not all at once.
        const r = i % RESOURCES;
        const resolving = (Math.floor(i / RESOURCES) + r) % CHURN_ROUNDS === CHURN_ROUNDS - 1;
        const body = firingAlert('soak', `svc-${r}`, `f-${r}`);
        if (resolving) {
          body.status = 'resolved';
          body.alerts[0].status = 'resolved';
          body.alerts[0].endsAt = new Date().toISOString();
        }
        inFlight++;
        void fetch(`${dev.api}/alerts/alertmanager`, { method: 'POST', headers, body: JSON.stringify(body) })
          .then(async (res) => {
            if (res.status !== 202) {
              fail(`alert ${res.status}`, await res.text());
              return;
            }
            const [item] = ((await res.json()) as AlertIngestResult).items;
            if (item.outcome !== 'kept-escalated' || !item.incident) return;
            // The operator's resolve: a 409 means someone (an earlier resolve) got there first.
            const resolved = await fetch(`${dev.api}/incidents/${item.incident}/resolve?namespace=soak`, {
              method: 'POST',
              headers,
              body: JSON.stringify({ resolution: 'storm soak: the source resolved' }),
            });
            const answer = await resolved.text();
            if (resolved.status === 200) operatorResolves++;
            else if (resolved.status !== 409) fail(`resolve ${resolved.status}`, answer);
          })
          .catch((err: Error) => fail(`fetch ${err.message}`))
          .finally(() => {
            inFlight--;
            sent++;
          });
      }
    })();
    await sampleFor('storm', started, STORM_MINUTES);
    stop = true;
    await storm;
    // What is still in flight is answered before the calm is measured.
    for (const drainUntil = Date.now() + 60_000; inFlight > 0 && Date.now() < drainUntil;)
      await new Promise((r) => setTimeout(r, 100));
    const calmFrom = Date.now();
    await sampleFor('calm', calmFrom, CALM_MINUTES);
    await readiness.stop();

    const kinds = [...errorKinds].map(([kind, n]) => `${kind}: ${n}`).join(', ');
    const loads = samples.map((s) => s.load);
    console.log(
      `\n${sent} alerts sent, ${errors} errors${kinds && ` (${kinds})`}; load average ` +
        `${Math.min(...loads).toFixed(2)}–${Math.max(...loads).toFixed(2)} (mean ` +
        `${(loads.reduce((a, b) => a + b, 0) / loads.length).toFixed(2)})`,
    );
    /** A phase's samples of one process, optionally only its last minute's. */
    const rssOf = (name: string, phase: Phase, lastMinuteOf?: number) =>
      samples
        .filter((s) => s.phase === phase && (lastMinuteOf === undefined || s.minute > lastMinuteOf - 1))
        .map((s) => ({ minute: s.minute, mib: s.rss.get(name) ?? 0 }));
    const peak = (xs: { minute: number; mib: number }[]) => xs.reduce((a, x) => (x.mib > a.mib ? x : a), xs[0]);
    console.log('the measure (peak RSS of each stretch, MiB):');
    let met = true;
    for (const name of Object.keys(CEILING_MIB)) {
      const idle = peak(rssOf(name, 'idle', IDLE_MINUTES)).mib;
      const storm = peak(rssOf(name, 'storm'));
      const after = peak(rssOf(name, 'calm', CALM_MINUTES)).mib;
      const under = storm.mib < CEILING_MIB[name];
      const near = after <= idle * (1 + NEAR_IDLE);
      met &&= under && near;
      console.log(
        `  ${name.padEnd(10)} idle ${idle}; storm peak ${storm.mib} at minute ${storm.minute.toFixed(1)} ` +
          `against ${CEILING_MIB[name]} (${under ? 'under' : 'OVER'}); after ${CALM_MINUTES} min calm ${after} ` +
          `(${(((after - idle) / idle) * 100).toFixed(1)}% above idle, at most ${NEAR_IDLE * 100}%: ` +
          `${near ? 'near idle' : 'NOT near idle'})`,
      );
    }
    console.log(`  ${met ? 'met' : 'NOT met'} for every process`);
    const { stalls } = readiness;
    console.log(
      `\n/readyz failed in ${stalls.length} stretch(es) of the soak${stalls.length ? ` (dumps in ${dumpDir})` : ''}`,
    );
    for (const stall of stalls)
      console.log(
        `  minute ${(stall.from / 60).toFixed(1)}, ${stall.to - stall.from + 1} s: ${[...stall.reasons].join('; ')}` +
          (stall.dump ? `; the store's threads: ${stall.dump}` : ''),
      );
    // The stack's own complaints (pino levels: 40 warn, 50 error, 60 fatal), counted by message.
    const complaints = dev
      .output()
      .split('\n')
      .filter((line) => /"level":(4|5|6)0/.test(line));
    // By message and kind (the reconciler's repairs say what they repaired), with the minutes of
    // the soak they fell in: an opening burst and a late stall read differently.
    const byMessage = new Map<string, { count: number; first: string; minutes: Map<number, number> }>();
    for (const line of complaints) {
      const msg = /"msg":"([^"]*)"/.exec(line)?.[1] ?? '?';
      const kind = /"kind":"([^"]*)"/.exec(line)?.[1];
      const key = kind ? `${msg} (${kind})` : msg;
      const minute = Math.floor((Number(/"time":(\d+)/.exec(line)?.[1] ?? started) - started) / 60_000);
      const seen = byMessage.get(key) ?? { count: 0, first: line, minutes: new Map<number, number>() };
      seen.count++;
      seen.minutes.set(minute, (seen.minutes.get(minute) ?? 0) + 1);
      byMessage.set(key, seen);
    }
    console.log(`\nthe stack logged ${complaints.length} warnings or errors`);
    for (const [key, { count, first, minutes }] of byMessage) {
      const when = [...minutes].map(([m, n]) => `${m}:${n}`).join(' ');
      console.log(`  ${count} × ${key}; by minute ${when}; the first: ${first.slice(0, 600)}`);
    }
  } finally {
    stop = true;
    await stopDev(dev);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
