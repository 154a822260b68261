/**
 * What new incidents cost the stack (issue 14). Rounds shaped like the Foghorn side of
 * `bench/peer-alerta`: `alerts` Alertmanager alerts over `resources` resources of a fresh
 * namespace, one alert per request from `senders` senders, so each round opens `resources`
 * incidents and folds the rest into them. After each round the bench waits until the stack is
 * idle again (the incidents triaged and escalated, their ladders waiting on their clocks) and
 * prints the round's alerts/s and the CPU seconds of each process: during the round, and in all
 * (the round and the work it left behind), with the total per incident opened (its duplicates
 * included), and how long its incidents took from opening (`Detection`) to `Escalation` on their
 * timelines: how long the people waiting for a page wait while the API is busy. The first round
 * runs on a fresh stack. Asserts nothing.
 *
 * Usage: npx ts-node --transpile-only bench/incident-cost.ts [rounds=3] [alerts=1000] [resources=50] [senders=32]
 */
import './compiled';
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import path from 'path';
import { devEnv, startDev, stopDev, waitReady } from '../test/harness/dev-process';
import { firingAlert } from './fixtures';
import { cpuBetween, cpuTotal, showCpu, stackCpu } from './processes';
import { percentile, runConcurrently } from './stats';

const [ROUNDS, ALERTS, RESOURCES, SENDERS] = [3, 1000, 50, 32].map((d, i) => Number(process.argv[2 + i] ?? d));
/** The stack counts as idle below this share of a core, this many seconds in a row. */
const IDLE_CORES = 0.15;
const IDLE_SECONDS = 3;
const SETTLE_LIMIT_S = 120;

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'foghorn-incident-cost-'));
  const dev = await startDev({ ...(await devEnv(dataDir)), FOGHORN_RATE_LIMIT: '1000000' });
  try {
    await waitReady(dev.api);
    const cpu = stackCpu(dev.child.pid!);
    const since = (before: Map<string, number>) => cpuBetween(before, cpu());
    const headers = { authorization: `Bearer ${dev.token}`, 'content-type': 'application/json' };
    console.log(`incident-cost: ${ROUNDS} rounds of ${ALERTS} alerts over ${RESOURCES} resources, ${SENDERS} senders`);

    for (let round = 1; round <= ROUNDS; round++) {
      const namespace = `cost-${round}`;
      const before = cpu();
      const started = performance.now();
      await runConcurrently(ALERTS, SENDERS, async (i) => {
        const res = await fetch(`${dev.api}/alerts/alertmanager`, {
          method: 'POST',
          headers,
          body: JSON.stringify(firingAlert(namespace, `svc-${i % RESOURCES}`, `${namespace}-${i}`)),
        });
        await res.text();
        if (res.status !== 202) throw new Error(`HTTP ${res.status}`);
      });
      const seconds = (performance.now() - started) / 1000;
      const during = since(before);
      let idleFor = 0;
      let waited = 0;
      for (let last = cpuTotal(cpu()); idleFor < IDLE_SECONDS && waited < SETTLE_LIMIT_S; waited++) {
        await new Promise((r) => setTimeout(r, 1000));
        const now = cpuTotal(cpu());
        idleFor = now - last < IDLE_CORES ? idleFor + 1 : 0;
        last = now;
      }
      const all = since(before);
      const waits = (await msToEscalation(dev.api, headers, namespace)).sort((a, b) => a - b);
      console.log(
        `round ${round}: ${(ALERTS / seconds).toFixed(1)} alerts/s in ${seconds.toFixed(1)} s, busy ${waited - idleFor} s more\n` +
          `  CPU s during the round: ${showCpu(during)}\n` +
          `  CPU s in all: ${showCpu(all)}; ${((cpuTotal(all) / RESOURCES) * 1000).toFixed(0)} ms per incident opened, its duplicates included\n` +
          `  opened → escalated: p50 ${(percentile(waits, 50) / 1000).toFixed(1)} s, max ${(percentile(waits, 100) / 1000).toFixed(1)} s (${waits.length} of ${RESOURCES} incidents)`,
      );
    }
  } finally {
    await stopDev(dev);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Per incident of the namespace (its first 100): milliseconds from `Detection` to `Escalation`. */
async function msToEscalation(api: string, headers: Record<string, string>, namespace: string): Promise<number[]> {
  const get = async <T>(route: string): Promise<T> => {
    const res = await fetch(`${api}${route}`, { headers });
    if (!res.ok) throw new Error(`GET ${route}: HTTP ${res.status}`);
    return (await res.json()) as T;
  };
  const list = await get<{ items: { name: string }[] }>(`/incidents?namespace=${namespace}&pageSize=100`);
  const waits: number[] = [];
  for (const { name } of list.items) {
    const { events } = await get<{ events: { type: string; timestamp: string }[] }>(
      `/incidents/${name}/timeline?namespace=${namespace}`,
    );
    const at = (type: string) => events.find((e) => e.type === type)?.timestamp;
    const [opened, escalated] = [at('Detection'), at('Escalation')];
    if (opened && escalated) waits.push(Date.parse(escalated) - Date.parse(opened));
  }
  return waits;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
