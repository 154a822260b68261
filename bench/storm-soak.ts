/**
 * Memory under an alert storm (issue 14): `foghorn dev` on a fresh data directory takes a steady
 * storm of Alertmanager alerts, mostly duplicates, with incidents opening and resolving all the
 * time (each resource's alerts resolve it every `churn` seconds, so new incidents keep coming,
 * as in the storm that grew the heap without bound). An incident that escalated stays open when
 * its source resolves (it waits for a human), so the soak is that human: it resolves it through
 * the API, as an operator would, and the resource's next alert opens a new one. RSS of every
 * process of the stack is sampled every 10 s (several times per cycle of the worker's heap
 * compaction, so the samples see its whole sawtooth). After the warm-up, each process's RSS is
 * read three ways:
 * - the goal's measure (docs/decisions.md, "What 'flat' means for memory"): each measured
 *   minute's peak (its highest sample: a minute holds two compaction cycles, so its peak is the
 *   plateau between them, whatever the phase) against the warm-up's last minute's;
 * - every sample against the one that ended the warm-up, and the band (highest against lowest);
 * - the trend: the mean of the first two measured minutes against that of the last two.
 * The stack's `/readyz` is polled every second all along (bench/stall-watch.ts): a stall is
 * reported with what failed, and the store's threads are dumped while it lasts. Prints one line
 * per sample (with the open incidents, the working set, and those not triaged yet, the backlog)
 * and a summary: errors by kind, stalls, and the stack's own warnings and errors by message.
 * Asserts nothing.
 *
 * Usage: npx ts-node --transpile-only bench/storm-soak.ts [minutes=10] [warmupMinutes=2]
 *        [alertsPerSecond=60] [resources=200] [churnSeconds=30]
 */
import './compiled';
import { rmSync, mkdtempSync } from 'fs';
import { loadavg, tmpdir } from 'os';
import path from 'path';
import { devEnv, startDev, stopDev, waitReady } from '../test/harness/dev-process';
import { rssMiB, stackProcesses } from './processes';
import { firingAlert } from './fixtures';
import { watchReadiness } from './stall-watch';

const MINUTES = Number(process.argv[2] ?? 10);
const WARMUP_MINUTES = Number(process.argv[3] ?? 2);
const RATE = Number(process.argv[4] ?? 60);
const RESOURCES = Number(process.argv[5] ?? 200);
const CHURN_S = Number(process.argv[6] ?? 30);
const SAMPLE_MS = 10_000;
/** Samples in each of the two windows the trend compares (two minutes). */
const TREND_SAMPLES = 120_000 / SAMPLE_MS;
/** Rounds (one alert per resource each) between two resolves of a resource. */
const CHURN_ROUNDS = Math.max(2, Math.round((CHURN_S * RATE) / RESOURCES));

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
      `storm: ${RATE} alerts/s over ${RESOURCES} resources, each resolved every ${CHURN_S} s; ` +
        `${WARMUP_MINUTES} min warm-up, then ${MINUTES} min measured; processes ${processes()
          .map((p) => `${p.name}=${p.pid}`)
          .join(' ')}`,
    );
    // The storm: a steady rate, one POST per tick, in flight at most 64 at once.
    const started = Date.now();
    let inFlight = 0;
    const storm = (async () => {
      for (let i = 0; !stop; i++) {
        const due = started + (i * 1000) / RATE;
        if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
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

    const incidentCount = (query: string) =>
      fetch(`${dev.api}/incidents?pageSize=1${query}`, { headers })
        .then((r) => r.json() as Promise<{ metadata: { totalCount: number } }>)
        .then((list) => list.metadata.totalCount);
    const samples: { minute: number; rss: Map<string, number> }[] = [];
    const total = (WARMUP_MINUTES + MINUTES) * 60_000;
    for (let t = SAMPLE_MS; t <= total; t += SAMPLE_MS) {
      await new Promise((r) => setTimeout(r, started + t - Date.now()));
      const rss = new Map<string, number>();
      for (const p of processes()) rss.set(p.name, (rss.get(p.name) ?? 0) + rssMiB(p.pid));
      const minute = t / 60_000;
      samples.push({ minute, rss });
      // The working set: incidents whose workflows run (and sit in the worker's cache). Those not
      // triaged yet are the stack's backlog: until it has caught up with the storm's opening burst,
      // the working set is still growing (docs/benchmarks.md, "Twenty-second pass").
      const [incidents, resolved, untriaged] = [
        await incidentCount(''),
        await incidentCount('&state=Resolved'),
        await incidentCount('&state=Detected'),
      ];
      console.log(
        `  ${minute.toFixed(1).padStart(5)} min  ${[...rss].map(([n, v]) => `${n} ${v} MiB`).join('  ')}  ` +
          `sent ${sent}, errors ${errors}, incidents ${incidents} (${incidents - resolved} open, ` +
          `${untriaged} not triaged yet, ${operatorResolves} resolved by the soak), load ${loadavg()[0].toFixed(2)}`,
      );
    }
    stop = true;
    await storm;
    await readiness.stop();
    // What is still in flight is answered before the stack stops (else it would fail as it stops).
    for (const drainUntil = Date.now() + 60_000; inFlight > 0 && Date.now() < drainUntil;)
      await new Promise((r) => setTimeout(r, 100));

    const base = samples.find((s) => s.minute >= WARMUP_MINUTES)!;
    const after = samples.filter((s) => s.minute > WARMUP_MINUTES);
    const kinds = [...errorKinds].map(([kind, n]) => `${kind}: ${n}`).join(', ');
    console.log(
      `\nafter the warm-up (baseline at ${base.minute} min), ${sent} alerts sent, ${errors} errors${kinds && ` (${kinds})`}:`,
    );
    const percent = (v: number, from: number) => `${(((v - from) / from) * 100).toFixed(1)}%`;
    const mean = (xs: number[]) => Math.round(xs.reduce((a, b) => a + b, 0) / xs.length);
    /** The largest departure of `values` from `from`, signed, as a percentage. */
    const furthest = (values: number[], from: number) =>
      percent(
        values.reduce((a, v) => (Math.abs(v - from) > Math.abs(a - from) ? v : a), from),
        from,
      );
    // Each minute's samples (the minute a sample ends in): the warm-up's last, then each measured.
    const minuteSamples = (m: number) => samples.filter((s) => s.minute > m - 1 && s.minute <= m);
    const measuredMinutes = Array.from({ length: MINUTES }, (_, k) => WARMUP_MINUTES + k + 1);
    console.log("  the goal's measure: each measured minute's peak against the warm-up's last minute's");
    for (const [name, v0] of base.rss) {
      const rssIn = (m: number) => minuteSamples(m).map((s) => s.rss.get(name) ?? 0);
      const peak0 = Math.max(...rssIn(WARMUP_MINUTES));
      const peaks = measuredMinutes.map((m) => Math.max(...rssIn(m)));
      const values = after.map((s) => s.rss.get(name) ?? 0);
      const max = Math.max(...values);
      const min = Math.min(...values);
      const last = values[values.length - 1];
      const [early, late] = [mean(values.slice(0, TREND_SAMPLES)), mean(values.slice(-TREND_SAMPLES))];
      console.log(
        `  ${name.padEnd(10)} peaks ${peak0} → ${Math.min(...peaks)}–${Math.max(...peaks)} MiB (within ${furthest(peaks, peak0)}); ` +
          `by sample: baseline ${v0} MiB, min ${min}, max ${max} (${percent(max, v0)}; band ${percent(max, min)}), ` +
          `end ${last} MiB (${percent(last, v0)}); trend ${early} → ${late} MiB (${percent(late, early)})`,
      );
    }
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
