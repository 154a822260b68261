/**
 * How responsive `foghorn dev`'s API stays while workflows run (issue 14, "use both cores"): a
 * probe asks `GET /readyz` and `GET /incidents` in turn, back to back, while idle and then while
 * a burst of Alertmanager alerts (distinct deployments, so each opens an incident and starts a
 * workflow) is ingested and worked off; the burst phase lasts until every incident was analysed.
 * Prints probe latencies per phase, the burst's duration and the RSS of each process of the stack.
 * Usage: npx ts-node --transpile-only bench/dev-responsiveness.ts [alerts=200] [concurrency=8]
 */
import './compiled';
import { mkdtempSync, rmSync } from 'fs';
import { loadavg, tmpdir } from 'os';
import path from 'path';
import { devEnv, startDev, stopDev, waitReady } from '../test/harness/dev-process';
import { rssMiB, stackProcesses } from './processes';
import { firingAlert } from './fixtures';
import { runConcurrently, summary } from './stats';

const ALERTS = Number(process.argv[2] ?? 200);
const CONCURRENCY = Number(process.argv[3] ?? 8);
const IDLE_MS = 10_000;

async function main() {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'foghorn-responsiveness-'));
  const env = {
    ...(await devEnv(dataDir)),
    FOGHORN_ADMIN_TOKEN: 'bench-admin-token-0123456789abcdef0123',
    FOGHORN_RATE_LIMIT: '100000000', // the probe asks back to back
  };
  const dev = await startDev(env);
  const headers = { authorization: `Bearer ${env.FOGHORN_ADMIN_TOKEN}`, 'content-type': 'application/json' };
  const readyz = new URL('/readyz', dev.api).toString();
  const rss = new Map<string, number>();
  const sampleRss = () => {
    for (const { pid, name } of stackProcesses(dev.child.pid!))
      rss.set(name, Math.max(rss.get(name) ?? 0, rssMiB(pid)));
  };
  try {
    await waitReady(dev.api);
    const probe = async (until: () => boolean) => {
      const times: Record<'readyz' | 'incidents', number[]> = { readyz: [], incidents: [] };
      while (!until()) {
        for (const [key, url] of [
          ['readyz', readyz],
          ['incidents', `${dev.api}/incidents?pageSize=20`],
        ] as const) {
          const t = performance.now();
          const res = await fetch(url, { headers });
          await res.arrayBuffer();
          if (res.status !== 200) throw new Error(`${url}: HTTP ${res.status}`);
          times[key].push(performance.now() - t);
        }
        sampleRss();
      }
      return times;
    };
    const line = (phase: string, times: Record<string, number[]>) => {
      for (const [key, xs] of Object.entries(times)) {
        const s = summary(xs);
        console.log(
          `  ${phase.padEnd(6)} ${key.padEnd(9)} n=${String(xs.length).padStart(5)} p50=${s.p50.toFixed(1).padStart(7)}ms  p99=${s.p99.toFixed(1).padStart(7)}ms  max=${Math.max(...xs).toFixed(1)}ms`,
        );
      }
    };

    const idleUntil = Date.now() + IDLE_MS;
    line('idle', await probe(() => Date.now() > idleUntil));

    let done = false;
    const started = performance.now();
    const workOff = async () => {
      let i = 0;
      await runConcurrently(ALERTS, CONCURRENCY, async () => {
        const n = i++;
        const res = await fetch(`${dev.api}/alerts/alertmanager`, {
          method: 'POST',
          headers,
          body: JSON.stringify(firingAlert('burst', `svc-${n}`, `fp-${n}`)),
        });
        if (res.status !== 202) throw new Error(`HTTP ${res.status}`);
      });
      const accepted = performance.now() - started;
      // Worked off: every incident has left Detected (its workflow analysed it).
      for (;;) {
        const list = (await fetch(`${dev.api}/incidents?namespace=burst&state=Detected&pageSize=1`, {
          headers,
        }).then((r) => r.json())) as { metadata: { totalCount: number } };
        const all = (await fetch(`${dev.api}/incidents?namespace=burst&pageSize=1`, { headers }).then((r) =>
          r.json(),
        )) as { metadata: { totalCount: number } };
        if (all.metadata.totalCount >= ALERTS && list.metadata.totalCount === 0) break;
        await new Promise((r) => setTimeout(r, 500));
      }
      return { accepted, settled: performance.now() - started };
    };
    const burst = (async () => {
      try {
        return await workOff();
      } finally {
        done = true; // the probe stops, also when the burst failed
      }
    })();
    const during = await probe(() => done);
    const { accepted, settled } = await burst;
    line('burst', during);
    console.log(
      `  ${ALERTS} alerts (${CONCURRENCY} senders) accepted in ${(accepted / 1000).toFixed(1)} s, all analysed after ${(settled / 1000).toFixed(1)} s; load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    console.log(`  peak RSS: ${[...rss].map(([k, v]) => `${k} ${v} MiB`).join(', ')}`);
  } finally {
    await stopDev(dev);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
