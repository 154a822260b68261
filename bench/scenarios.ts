/**
 * Remediation scenarios, timed: the ten scenarios of test/kube/remediation-scenarios.ts (the same
 * code the suite test/kube/scenarios.test.ts runs) on `foghorn dev`, the compiled product, watching
 * a real kube-apiserver with KWOK nodes through KUBECONFIG, all at once, each in its own namespace.
 * Level 1 of the escalation policy is a signed webhook to a local receiver; a person approves each
 * approval through the API with the token of the role it needs (scenario 10: nobody does).
 * Per scenario: time to detection (the change → the incident's creation), to the first correct
 * action (the first ActionExecuted of the right step, or the Escalation where a person is the right
 * answer), to resolution (Resolved or Escalated), whether the Deployment's final template is the
 * right one, and every way the outcome differs from the scenario's; then a markdown table.
 * Usage: npx ts-node --transpile-only bench/scenarios.ts [ids=all, e.g. 1,4,8] [--stories]
 */
import './compiled';
import { mkdtempSync, rmSync, writeFileSync } from 'fs';
import { cpus, loadavg, tmpdir } from 'os';
import path from 'path';
import { devEnv, startDev, waitReady, type DevProcess } from '../test/harness/dev-process';
import { useKube } from '../test/harness/kube';
import { useNotificationReceiver } from '../test/harness/notification-receiver';
import {
  prepareWorld,
  resultTable,
  runScenario,
  SCENARIO_ENV,
  scenarioHookSecret,
  SCENARIOS,
  seconds,
  shutDown,
  type ScenarioWorld,
} from '../test/kube/remediation-scenarios';
import { positional } from './args';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- API JSON
type Json = any;

const IDS = positional[0] && positional[0] !== 'all' ? positional[0].split(',') : undefined;
const STORIES = process.argv.includes('--stories');
const chosen = SCENARIOS.filter((s) => !IDS || IDS.includes(String(s.id)));

/** SIGINT, as Ctrl-C does; resolves once `foghorn dev` has exited. */
async function endDev(dev: DevProcess): Promise<void> {
  if (dev.child.exitCode !== null || dev.child.signalCode !== null) return;
  const exited = new Promise((resolve) => dev.child.once('exit', resolve));
  dev.child.kill('SIGINT');
  await exited;
}

async function main() {
  const receiver = await useNotificationReceiver();
  const kube = await useKube();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'foghorn-bench-scenarios-'));
  let dev: DevProcess | undefined;
  try {
    const kubeconfig = path.join(dataDir, 'kubeconfig');
    writeFileSync(kubeconfig, kube.kubeconfig, { mode: 0o600 });
    dev = await startDev({
      ...(await devEnv(dataDir)),
      ...SCENARIO_ENV,
      KUBECONFIG: kubeconfig,
      FOGHORN_RATE_LIMIT: '1000000',
      FOGHORN_LLM_BASE_URL: '', // the rules analyzer; no agentic strategy
      FOGHORN_WEBHOOK_ADDR: '',
    });
    await waitReady(dev.api);
    const api = dev.api;
    const call: ScenarioWorld['call'] = async (method, p, init = {}) => {
      const res = await fetch(api + p, {
        method,
        headers: { authorization: `Bearer ${init.token ?? dev!.token}`, 'content-type': 'application/json' },
        ...(init.body !== undefined && { body: JSON.stringify(init.body) }),
      });
      const text = await res.text();
      let body: Json = text;
      try {
        body = JSON.parse(text);
      } catch {
        // not JSON
      }
      return { status: res.status, body };
    };
    const tokens = {} as ScenarioWorld['tokens'];
    for (const role of ['viewer', 'operator', 'admin'] as const) {
      const res = await call('POST', '/tokens', { body: { user: `${role}-user`, role } });
      if (res.status !== 201) throw new Error(`POST /tokens: ${res.status} ${JSON.stringify(res.body)}`);
      tokens[role] = res.body.token;
    }
    const world: ScenarioWorld = {
      kube,
      call,
      tokens,
      received: receiver.requests,
      hook: { url: receiver.url('/hooks/level-1'), secret: scenarioHookSecret },
    };
    await prepareWorld(world);
    console.log(
      `${chosen.length} scenario(s) at once on foghorn dev (${Object.entries(SCENARIO_ENV)
        .map(([k, v]) => `${k}=${v}`)
        .join(', ')}); load average ${loadavg()[0].toFixed(2)} (${cpus().length} cores)`,
    );
    const started = performance.now();
    const results = await Promise.all(chosen.map((s) => runScenario(world, s)));
    const wall = (performance.now() - started) / 1000;
    for (const r of results) {
      console.log(
        `\n${r.scenario.id}. ${r.scenario.title} (${r.scenario.name}): ${r.incident ?? 'no incident'} ${r.state ?? ''}; ` +
          `detection ${seconds(r.metrics.detectionMs)} s, first correct action ${seconds(r.metrics.firstActionMs)} s, ` +
          `resolution ${seconds(r.metrics.endMs)} s, right template: ${r.metrics.rightTemplate ? 'yes' : 'no'}`,
      );
      for (const p of r.problems) console.log(`  problem: ${p}`);
      if (STORIES || r.problems.length > 0) for (const line of r.story) console.log(`  | ${line}`);
    }
    console.log(`\nall scenarios in ${wall.toFixed(0)} s; load average ${loadavg()[0].toFixed(2)}\n`);
    console.log(resultTable(results));
  } finally {
    if (dev) await endDev(dev);
    await shutDown(kube);
    await shutDown(receiver);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
