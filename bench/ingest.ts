/**
 * Alertmanager ingestion throughput on the embedded stack (`foghorn dev`): alerts per second
 * into incidents with workflows started, at 1, 8 and 32 concurrent senders, and whether every
 * duplicate was folded into its resource's incident.
 * Usage: npx ts-node --transpile-only bench/ingest.ts [alertsPerRound=200] [resourcesPerRound=50] [--replicas=APIS,WORKERS]
 * With --replicas, separate `foghorn api` and `foghorn worker` processes instead of `foghorn dev`
 * (bench/stack.ts), alerts sent to each API alike (round robin).
 */
import './compiled';
import { mkdtempSync, rmSync } from 'fs';
import path from 'path';
import { loadavg, tmpdir } from 'os';
import { positional } from './args';
import { cpuBetween, showCpu } from './processes';
import { firingAlert } from './fixtures';
import { startBenchStack } from './stack';
import { runConcurrently, summary } from './stats';

const ALERTS = Number(positional[0] ?? 200);
const RESOURCES = Number(positional[1] ?? 50);

async function main() {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'foghorn-bench-'));
  const stack = await startBenchStack(dataDir, { FOGHORN_RATE_LIMIT: '1000000' });
  try {
    const headers = { authorization: `Bearer ${stack.token}`, 'content-type': 'application/json' };
    const get = (p: string) =>
      fetch(stack.apis[0] + p, { headers }).then(
        (r) => r.json() as Promise<{ metadata: { totalCount: number }; items: { name: string }[] }>,
      );
    console.log(
      `${stack.label}: ${ALERTS} alerts over ${RESOURCES} resources per round (${ALERTS - RESOURCES} duplicates to fold), load1 ${loadavg()[0].toFixed(1)}`,
    );
    for (const senders of [1, 8, 32]) {
      const namespace = `bench-c${senders}`;
      const cpu = stack.cpu();
      const before = cpu();
      const started = performance.now();
      const latencies = await runConcurrently(ALERTS, senders, async (i) => {
        const body = firingAlert(namespace, `svc-${i % RESOURCES}`, `f${i}`);
        const res = await fetch(`${stack.api(i)}/alerts/alertmanager`, {
          method: 'POST',
          headers,
          body: JSON.stringify(body),
        });
        if (res.status !== 202) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
        await res.arrayBuffer();
      });
      const seconds = (performance.now() - started) / 1000;
      const used = cpuBetween(before, cpu());
      const list = await get(`/incidents?namespace=${namespace}&pageSize=100`);
      // Correlations are recorded by each incident's workflow shortly after the 202.
      let folded = 0;
      for (let tries = 0; tries < 120; tries++) {
        folded = 0;
        for (const item of list.items) {
          const d = (await fetch(`${stack.apis[0]}/incidents/${item.name}`, { headers }).then((r) => r.json())) as {
            status: { correlatedSignals: number };
          };
          folded += d.status.correlatedSignals;
        }
        if (folded >= ALERTS - RESOURCES) break;
        await new Promise((r) => setTimeout(r, 500));
      }
      const l = summary(latencies);
      console.log(
        `senders=${String(senders).padStart(2)}  ${(ALERTS / seconds).toFixed(1).padStart(6)} alerts/s  request p50=${l.p50.toFixed(1)}ms p99=${l.p99.toFixed(1)}ms  ` +
          `incidents=${list.metadata.totalCount}/${RESOURCES}  folded=${folded}/${ALERTS - RESOURCES}  ` +
          `CPU s while posting: ${showCpu(used)}`,
      );
    }
  } finally {
    await stack.shutdown();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
