import { Client, Connection } from '@temporalio/client';
import { REPORTED_PROBLEMS } from '../../api/temporal-metrics';
import { stopHandOvers } from '../../operations/incident-handover';
import { execFileSync } from 'child_process';
import { appendFileSync } from 'fs';
import path from 'path';
import { firingAlert } from '../../bench/fixtures';
import { startEmbeddedMongo } from '../../cli/embedded/mongo';
import type { ServerProcess } from '../../cli/embedded/process';
import { startEmbeddedTemporal } from '../../cli/embedded/temporal';
import { liveStateQuery } from '../../workflows/incident-messages';
import { FINAL_PLAN_STATES, PLAN_ABANDONED_RESULT } from '../../domain/remediation';
import { INCIDENT_STATE, REMEDIATION_STATE, RESOURCE } from '../../workflows/search-attributes';
import { useCallbackReceiver } from './callback-receiver';
import { devEnv } from './dev-process';
import { freePort } from './ports';
import { alive, spawnCli, until, waitListening, waitPolling, type CliProcess } from './processes';
import { useStepReceiver } from './step-receiver';

/**
 * Crash testing of the whole product (issue 8): alerts and chat messages stream in while one
 * part of the stack is killed with -9 at random moments and comes back; afterwards every
 * acknowledged alert and every accepted chat message is accounted for. The incidents remediate
 * first: an automated runbook's HttpRequest step calls a real listener, and an alert that joins
 * during its verification window fails it, so plans run, fail and run again (each attempt inside
 * the incident's workflow) until one holds or the incident escalates, and kills land
 * among them; once the runbook's circuit breaker asks a person first, an operator approves.
 * Shared by test/e2e/crash-dev.test.ts and crash-split.test.ts (a few kills) and bench/chaos.ts
 * (many, with figures).
 *
 * What gets killed:
 * - `dev`: the whole `foghorn dev` (its embedded servers die with it), restarted on the same data;
 * - `mongo` / `temporal`: only that embedded server of a running `foghorn dev`, which restarts it;
 * - `worker`: `foghorn api`, `foghorn worker` and `foghorn gateway start` as separate processes
 *   over embedded servers of their own; only the worker is killed and started again.
 */
export type ChaosTarget = 'dev' | 'mongo' | 'temporal' | 'worker';

export interface ChaosOptions {
  target: ChaosTarget;
  dataDir: string;
  kills: number;
  /** Concurrent alert senders and chats. */
  senders?: number;
  chats?: number;
  resources?: number;
  /** Random pause between kills (after the stack is back). */
  minGapMs?: number;
  maxGapMs?: number;
  /** How long the stack may take to settle after the last kill. */
  settleMs?: number;
  /** Where the output of every Foghorn process of the stack is appended as it exits (none: not kept). */
  logFile?: string;
  log?: (line: string) => void;
}

export interface ChaosReport {
  /** `replicas`: test/e2e/replicas.test.ts's stack of several APIs and workers. */
  target: ChaosTarget | 'replicas';
  kills: number;
  alertsSent: number;
  alertsAcknowledged: number;
  incidents: number;
  /** Acknowledged alerts not on their incident's timeline exactly once. */
  alertsLost: number;
  alertsDuplicated: number;
  /** Names acknowledged for two resources, or whose workflow carries another resource. */
  namesReused: number;
  /** Incidents whose API state, Temporal search attribute and workflow state disagree. */
  inconsistent: number;
  /** Incidents without Detection, Analysis, RunbookMatch or Escalation on the timeline. */
  incompleteTimelines: number;
  /** Remediation plans of the incidents acknowledged. */
  plans: number;
  /** Plans not in a final state once their incident settled. */
  plansUnsettled: number;
  /** Incidents whose step calls came under more idempotency keys than they have plans. */
  stepsRepeated: number;
  /** Incidents whose workflow's FoghornRemediationState is not the state of their newest plan that ran. */
  remediationInconsistent: number;
  unknownToTemporal: number;
  /** Incidents whose workflow task keeps failing (a nondeterminism error, say): Temporal reports it. */
  workflowTasksFailing: number;
  chatMessagesAccepted: number;
  chatMessagesAnswered: number;
  /** Accepted messages with no final reply, or more than one. */
  chatMessagesUnanswered: number;
  chatMessagesAnsweredTwice: number;
  settleSeconds: number;
  problems: string[];
}

export const SECRET = 'chaos-webhook-secret-0123456789abcdef';
export const NAMESPACE = 'chaos';
const TASK_QUEUE = 'foghorn';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const random = (min: number, max: number) => min + Math.floor(Math.random() * (max - min + 1));

interface Stack {
  api: string;
  webhook: string;
  temporalAddress: string;
  token: string;
  /** kill -9 of the target, then back to serving (the API answers /readyz). */
  crash(): Promise<void>;
  stop(): Promise<void>;
}

/** Children of `pid` whose command line matches. */
function childrenMatching(pid: number, pattern: RegExp): number[] {
  const out = execFileSync('ps', ['-e', '-o', 'pid=,ppid=,args='], { encoding: 'utf8' });
  return out
    .trim()
    .split('\n')
    .map((line) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line)!)
    .filter((m) => Number(m[2]) === pid && pattern.test(m[3]))
    .map((m) => Number(m[1]));
}

async function waitReady(api: string, proc: CliProcess, timeoutMs = 180_000): Promise<void> {
  await until(
    `${api} ready`,
    () =>
      fetch(new URL('/readyz', api)).then(
        (r) => r.status === 200,
        () => false,
      ),
    timeoutMs,
    proc.output,
  );
}

/** Appends the process's output (its worker's log included) to `logFile` once it exits. */
function keepOutput(proc: CliProcess, logFile?: string): CliProcess {
  if (logFile) void proc.exited.then(() => appendFileSync(logFile, proc.output()));
  return proc;
}

/** `foghorn dev` with the gateway on; restarted on the same data directory and ports. */
async function devStack(dataDir: string, extraEnv: NodeJS.ProcessEnv, target: ChaosTarget, logFile?: string) {
  const env: NodeJS.ProcessEnv = {
    ...(await devEnv(dataDir)),
    ...extraEnv,
    FOGHORN_ADMIN_TOKEN: 'fh_chaos-admin-token-0123456789abcdefghijklmnop',
    FOGHORN_WEBHOOK_ADDR: `127.0.0.1:${await freePort()}`,
  };
  const api = `http://${env.FOGHORN_API_ADDR}/api/v1`;
  const start = async () => {
    // A port of the previous run may still be closing: try again until it binds.
    for (let attempt = 1; ; attempt++) {
      const proc = keepOutput(spawnCli(['dev'], env), logFile);
      try {
        await waitReady(api, proc, 120_000);
        return proc;
      } catch (err) {
        await proc.crash();
        if (attempt >= 3) throw err;
      }
    }
  };
  let dev = await start();
  return {
    api,
    webhook: `http://${env.FOGHORN_WEBHOOK_ADDR}/inbound`,
    temporalAddress: `127.0.0.1:${env.FOGHORN_TEMPORAL_PORT}`,
    token: env.FOGHORN_ADMIN_TOKEN!,
    crash: async () => {
      if (target === 'dev') {
        const group = dev.pid;
        process.kill(dev.pid, 'SIGKILL'); // only foghorn dev itself: its servers must not outlive it
        await dev.exited;
        await until('the embedded servers to die with foghorn dev', () => !alive(-group), 30_000);
        dev = await start();
        return;
      }
      const pattern = target === 'mongo' ? /MongoLauncher/ : /temporal.*start-dev/;
      const [pid] = childrenMatching(dev.pid, pattern);
      if (!pid) throw new Error(`no ${target} process under foghorn dev ${dev.pid}:\n${dev.output().slice(-2000)}`);
      process.kill(pid, 'SIGKILL');
      await until(`${target} ${pid} gone`, () => !alive(pid), 10_000);
      await until(
        `${target} restarted by foghorn dev`,
        () => childrenMatching(dev.pid, pattern).length > 0,
        60_000,
        dev.output,
      );
      await waitReady(api, dev);
    },
    stop: () => dev.stop(),
  } satisfies Stack;
}

/** `foghorn api`, `worker` and `gateway start` as separate processes; only the worker is killed. */
async function splitStack(dataDir: string, extraEnv: NodeJS.ProcessEnv, logFile?: string) {
  const servers: ServerProcess[] = [];
  const mongo = await startEmbeddedMongo({ port: await freePort(), h2File: path.join(dataDir, 'mongo.h2') });
  servers.push(mongo);
  const temporal = await startEmbeddedTemporal({ port: await freePort(), dbFile: path.join(dataDir, 'temporal.db') });
  servers.push(temporal);
  const env: NodeJS.ProcessEnv = {
    ...extraEnv,
    FOGHORN_DATA_DIR: dataDir,
    MONGODB_URI: mongo.uri,
    TEMPORAL_ADDRESS: temporal.address,
    FOGHORN_API_ADDR: `127.0.0.1:${await freePort()}`,
    FOGHORN_WEBHOOK_ADDR: `127.0.0.1:${await freePort()}`,
    FOGHORN_ADMIN_TOKEN: 'fh_chaos-admin-token-0123456789abcdefghijklmnop',
    FOGHORN_LOG_LEVEL: 'warn',
  };
  const api = `http://${env.FOGHORN_API_ADDR}/api/v1`;
  const webhook = `http://${env.FOGHORN_WEBHOOK_ADDR}/inbound`;
  let worker = keepOutput(spawnCli(['worker'], env), logFile);
  await waitPolling(temporal.address, TASK_QUEUE, worker);
  const apiProc = keepOutput(spawnCli(['api'], env), logFile);
  await waitReady(api, apiProc);
  const gateway = keepOutput(spawnCli(['gateway', 'start'], env), logFile);
  await waitListening(webhook, gateway);
  return {
    api,
    webhook,
    temporalAddress: temporal.address,
    token: env.FOGHORN_ADMIN_TOKEN!,
    crash: async () => {
      await worker.crash();
      worker = keepOutput(spawnCli(['worker'], env), logFile);
      await waitPolling(temporal.address, TASK_QUEUE, worker);
    },
    stop: async () => {
      await Promise.all([gateway.stop(), apiProc.stop(), worker.stop()]);
      for (const s of servers.reverse()) await s.stop();
    },
  } satisfies Stack;
}

/**
 * The runbook every chaos incident matches (crash loops on a Deployment; the built-in ones need a
 * cluster, and none is registered): one HttpRequest step to `url` and a verification window.
 */
export function chaosRunbook(url: string) {
  return {
    name: 'chaos-http-fix',
    category: 'crashloop',
    description: 'Chaos: tell a listener, then verify for 2s',
    version: '1.0.0',
    automated: true,
    severity: ['high'],
    targets: { signalTypes: ['CrashLoopBackOff'], resourceKinds: ['Deployment'] },
    steps: [{ type: 'HttpRequest', params: { method: 'POST', url: `${url}/fix/{{incident}}`, expectStatus: 200 } }],
    verificationWindow: '2s',
  };
}

/** Approves every plan waiting for a person; an API that is down is asked again next time. */
export async function approvePending(api: string, headers: Record<string, string>): Promise<void> {
  try {
    const res = await fetch(`${api}/approvals?status=pending&namespace=${NAMESPACE}&pageSize=100`, {
      headers,
      signal: AbortSignal.timeout(20_000),
    });
    if (res.status !== 200) return;
    for (const { name } of ((await res.json()) as { items: { name: string }[] }).items)
      await fetch(`${api}/approvals/${name}/approve`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ comment: 'chaos' }),
        signal: AbortSignal.timeout(20_000),
      });
  } catch {
    // down or killed meanwhile
  }
}

/** A firing alert whose summary carries `id`, so its timeline event can be found. */
export function alert(resource: string, id: string) {
  const body = firingAlert(NAMESPACE, resource, id);
  body.alerts[0].annotations.summary = `crash looping [${id}]`;
  return body;
}

/**
 * The environment of a chaos stack's Foghorn processes: callbacks to `callbackUrl`, the rules
 * analyzer, no rate limit, and a reconciler quick enough to repair within the settle time.
 */
export function chaosEnv(callbackUrl: string): NodeJS.ProcessEnv {
  return {
    FOGHORN_WEBHOOK_SECRET: SECRET,
    FOGHORN_WEBHOOK_CALLBACK_URL: callbackUrl,
    FOGHORN_WEBHOOK_HOME_CHANNEL: '',
    FOGHORN_LLM_BASE_URL: '',
    FOGHORN_STT: '',
    FOGHORN_RATE_LIMIT: '1000000',
    FOGHORN_RECONCILE_INTERVAL: '5s',
    FOGHORN_RECONCILE_GRACE: '5s',
  };
}

/** What a chaos report counts when nothing was lost, doubled or left unsettled. */
export const NOTHING_LOST = {
  alertsLost: 0,
  alertsDuplicated: 0,
  namesReused: 0,
  inconsistent: 0,
  incompleteTimelines: 0,
  plansUnsettled: 0,
  stepsRepeated: 0,
  remediationInconsistent: 0,
  unknownToTemporal: 0,
  workflowTasksFailing: 0,
  chatMessagesUnanswered: 0,
  chatMessagesAnsweredTwice: 0,
} satisfies Partial<ChaosReport>;

/** Runs the load and the kills, waits for the stack to settle, and accounts for everything. */
export async function runChaos(opts: ChaosOptions): Promise<ChaosReport> {
  const log = opts.log ?? (() => undefined);
  const receiver = await useCallbackReceiver(SECRET);
  const env = chaosEnv(receiver.url);
  const stack: Stack =
    opts.target === 'worker'
      ? await splitStack(opts.dataDir, env, opts.logFile)
      : await devStack(opts.dataDir, env, opts.target, opts.logFile);
  const headers = { authorization: `Bearer ${stack.token}`, 'content-type': 'application/json' };
  const steps = await useStepReceiver();
  const runbook = await fetch(`${stack.api}/runbooks`, {
    method: 'POST',
    headers,
    body: JSON.stringify(chaosRunbook(steps.baseUrl)),
  });
  if (runbook.status !== 201) throw new Error(`chaos runbook: HTTP ${runbook.status} ${await runbook.text()}`);
  const acked: AckedAlert[] = [];
  /** Incidents an operator resolved with a 200 (others may or may not have been resolved). */
  const resolved = new Set<string>();
  const accepted: string[] = [];
  let sent = 0;
  let running = true;
  let seq = 0;
  const started = Date.now();

  const alertLoop = async () => {
    while (running) {
      const id = `a${++seq}`;
      const resource = `svc-${random(1, opts.resources ?? 12)}`;
      sent++;
      try {
        const res = await fetch(`${stack.api}/alerts/alertmanager`, {
          method: 'POST',
          headers,
          body: JSON.stringify(alert(resource, id)),
          signal: AbortSignal.timeout(20_000),
        });
        const body = (await res.json()) as { items?: { outcome: string; incident?: string }[] };
        const item = body.items?.[0];
        if (res.status === 202 && item?.incident && (item.outcome === 'opened' || item.outcome === 'correlated'))
          acked.push({ id, resource, incident: item.incident, outcome: item.outcome });
        // Now and then an operator resolves it: the next alert for the resource opens a new
        // incident, so names keep being allocated (and resolves are crashed into too).
        if (item?.incident && Math.random() < 0.04) {
          const r = await fetch(`${stack.api}/incidents/${item.incident}/resolve?namespace=${NAMESPACE}`, {
            method: 'POST',
            headers,
            body: JSON.stringify({ resolution: 'chaos' }),
            signal: AbortSignal.timeout(20_000),
          });
          if (r.status === 200) resolved.add(item.incident);
        }
      } catch {
        // not acknowledged: the sender moves on (a retry would be a new alert here)
      }
      await sleep(random(50, 250));
    }
  };
  const chatLoop = async (chat: number) => {
    while (running) {
      try {
        const res = await fetch(stack.webhook, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-foghorn-secret': SECRET },
          body: JSON.stringify({ chat_id: `chaos-${chat}`, user_id: 'sre', text: '/help' }),
          signal: AbortSignal.timeout(20_000),
        });
        if (res.status === 202) accepted.push(((await res.json()) as { message_id: string }).message_id);
      } catch {
        // not accepted
      }
      await sleep(random(300, 1200));
    }
  };

  // Past three failed plans of the runbook its circuit breaker asks a person before each plan:
  // an operator says yes (decisions are crashed into too), so plans keep running steps.
  const approvalLoop = async () => {
    while (running) {
      await approvePending(stack.api, headers);
      await sleep(random(500, 1500));
    }
  };

  const load = [
    approvalLoop(),
    ...Array.from({ length: opts.senders ?? 4 }, alertLoop),
    ...Array.from({ length: opts.chats ?? 2 }, (_, i) => chatLoop(i)),
  ];
  try {
    for (let k = 1; k <= opts.kills; k++) {
      await sleep(random(opts.minGapMs ?? 2_000, opts.maxGapMs ?? 6_000));
      const t = Date.now();
      await stack.crash();
      log(`kill ${k}/${opts.kills} of ${opts.target}: back in ${((Date.now() - t) / 1000).toFixed(1)} s`);
    }
    await sleep(2_000);
  } finally {
    running = false;
    await Promise.all(load);
  }

  const settleStart = Date.now();
  let report: ChaosReport;
  try {
    for (;;) {
      await approvePending(stack.api, headers);
      report = await account(stack, headers, acked, resolved, accepted, receiver, steps, opts.target, opts.kills, sent);
      report.settleSeconds = Math.round((Date.now() - settleStart) / 1000);
      const bad =
        report.alertsLost +
        report.alertsDuplicated +
        report.namesReused +
        report.inconsistent +
        report.incompleteTimelines +
        report.plansUnsettled +
        report.stepsRepeated +
        report.remediationInconsistent +
        report.unknownToTemporal +
        report.workflowTasksFailing +
        report.chatMessagesUnanswered +
        report.chatMessagesAnsweredTwice;
      if (bad === 0 || Date.now() - settleStart > (opts.settleMs ?? 180_000)) break;
      await sleep(3_000);
    }
  } finally {
    await stack.stop();
    await receiver.stop();
    await steps.stop();
  }
  log(`ran ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return report!;
}

/** One acknowledged alert: the incident its 2xx named, and whether it opened or joined it. */
export interface AckedAlert {
  id: string;
  resource: string;
  incident: string;
  outcome: string;
}

/**
 * Accounts for everything acknowledged (the report's counts, and a line per problem), asking the
 * API at `stack.api` and the Temporal at `stack.temporalAddress`.
 */
export async function account(
  stack: Pick<Stack, 'api' | 'temporalAddress'>,
  headers: Record<string, string>,
  acked: AckedAlert[],
  resolved: Set<string>,
  accepted: string[],
  receiver: Awaited<ReturnType<typeof useCallbackReceiver>>,
  steps: Awaited<ReturnType<typeof useStepReceiver>>,
  target: ChaosTarget | 'replicas',
  kills: number,
  sent: number,
): Promise<ChaosReport> {
  const problems: string[] = [];
  const get = async (p: string) => {
    const res = await fetch(stack.api + p, { headers });
    return { status: res.status, body: (await res.json()) as any }; // eslint-disable-line @typescript-eslint/no-explicit-any
  };
  const byIncident = new Map<string, typeof acked>();
  for (const a of acked) byIncident.set(a.incident, [...(byIncident.get(a.incident) ?? []), a]);

  let namesReused = 0;
  let alertsLost = 0;
  let alertsDuplicated = 0;
  let inconsistent = 0;
  let incompleteTimelines = 0;
  let unknownToTemporal = 0;
  let workflowTasksFailing = 0;
  let plans = 0;
  let plansUnsettled = 0;
  let stepsRepeated = 0;
  let remediationInconsistent = 0;
  const lostIds: string[] = [];
  const temporal = new Client({ connection: await Connection.connect({ address: stack.temporalAddress }) });
  try {
    for (const [name, alerts] of byIncident) {
      const resources = new Set(alerts.map((a) => a.resource));
      if (resources.size > 1) {
        namesReused++;
        problems.push(`${name} acknowledged for ${[...resources].join(', ')}`);
      }
      const detail = await get(`/incidents/${name}`);
      if (detail.status !== 200) {
        alertsLost += alerts.length;
        problems.push(`${name}: GET answered ${detail.status}`);
        continue;
      }
      const timeline = await get(`/incidents/${name}/timeline`);
      const messages: { type: string; message: string }[] = timeline.body.events ?? [];
      for (const a of alerts) {
        const n = messages.filter(
          (e) => (e.type === 'Detection' || e.type === 'SignalCorrelated') && e.message.includes(`[${a.id}]`),
        ).length;
        if (n === 0) alertsLost++;
        if (n > 1) alertsDuplicated++;
        if (n !== 1) problems.push(`${name}: alert ${a.id} (${a.outcome}) on the timeline ${n} times`);
        if (n === 0) lostIds.push(a.id);
      }
      if (detail.body.spec.resource !== `Deployment/${alerts[0].resource}`) {
        namesReused++;
        problems.push(`${name} is ${detail.body.spec.resource}, acknowledged for ${alerts[0].resource}`);
      }
      const apiState = detail.body.status.state as string;
      const types = new Set(messages.map((e) => e.type));
      const expected =
        apiState === 'Resolved'
          ? ['Detection', 'Resolved', 'PostMortemGenerated']
          : ['Detection', 'Analysis', 'RunbookMatch', 'Escalation'];
      const missing = expected.filter((t) => !types.has(t));
      if (missing.length) {
        incompleteTimelines++;
        problems.push(`${name}: timeline lacks ${missing.join(', ')}`);
      }
      // Newest first. A step's retries (a crash between its call and its record) keep their key.
      const attempts: { name: string; state: string; result: string }[] =
        (await get(`/remediations?namespace=${NAMESPACE}&incident=${name}&pageSize=100`)).body.items ?? [];
      plans += attempts.length;
      for (const plan of attempts.filter((p) => !(FINAL_PLAN_STATES as readonly string[]).includes(p.state))) {
        plansUnsettled++;
        problems.push(`${name}: plan ${plan.name} is ${plan.state}`);
      }
      const keys = new Set(steps.received.filter((r) => r.url === `/fix/${name}`).map((r) => r.key));
      if (keys.size > attempts.length) {
        stepsRepeated++;
        problems.push(`${name}: its step called under ${keys.size} keys for ${attempts.length} plans`);
      }
      try {
        const handle = temporal.workflow.getHandle(name);
        const described = await handle.describe();
        const reported = described.typedSearchAttributes.get(REPORTED_PROBLEMS);
        if (reported?.length) {
          workflowTasksFailing++;
          problems.push(`${name}: its workflow task fails (${reported.join(', ')})`);
        }
        const attributeState = described.typedSearchAttributes.get(INCIDENT_STATE);
        const attributeResource = described.typedSearchAttributes.get(RESOURCE);
        // A plan the resolve overtook before it started never said a state.
        const newestRun = attempts.find((p) => p.result !== PLAN_ABANDONED_RESULT);
        const attributePlan = described.typedSearchAttributes.get(REMEDIATION_STATE);
        if (attributePlan !== newestRun?.state) {
          remediationInconsistent++;
          problems.push(`${name}: workflow's remediation ${attributePlan}, newest plan run ${newestRun?.state}`);
        }
        const live = await handle.query(liveStateQuery);
        if (attributeResource !== detail.body.spec.resource) {
          namesReused++;
          problems.push(`${name}: workflow carries ${attributeResource}, record ${detail.body.spec.resource}`);
        }
        // Resolved when an operator's resolve was acknowledged; a resolve whose answer a crash
        // cut off may have landed or not, so then either end state counts, as long as all agree.
        const settled = resolved.has(name)
          ? apiState === 'Resolved'
          : apiState === 'Escalated' || apiState === 'Resolved';
        if (!settled || attributeState !== apiState || live.state !== apiState) {
          inconsistent++;
          problems.push(`${name}: API ${apiState}, search attribute ${attributeState}, workflow ${live.state}`);
        }
      } catch (err) {
        unknownToTemporal++;
        // The gRPC status under a ServiceError says why (a deadline, a failing workflow task).
        const cause = (err as Error).cause as Error | undefined;
        problems.push(`${name}: Temporal: ${(err as Error).message}${cause ? ` (${cause.message})` : ''}`);
      }
    }
    if (lostIds.length > 0) problems.push(...(await whereabouts(get, lostIds.slice(0, 5))));
  } finally {
    await stopHandOvers(temporal);
    await temporal.connection.close();
  }

  // Callbacks are retried with the same webhook-id; a receiver counts each id once.
  let answered = 0;
  let unanswered = 0;
  let twice = 0;
  for (const id of accepted) {
    const finals = new Set(
      receiver
        .of(id)
        .filter((c) => c.body.kind === 'final' || c.body.kind === 'error')
        .map((c) => String(c.headers['webhook-id'])),
    );
    if (finals.size === 1) answered++;
    else if (finals.size === 0) unanswered++;
    else twice++;
    if (finals.size !== 1) problems.push(`chat message ${id}: ${finals.size} final replies`);
  }

  return {
    target,
    kills,
    alertsSent: sent,
    alertsAcknowledged: acked.length,
    incidents: byIncident.size,
    alertsLost,
    alertsDuplicated,
    namesReused,
    inconsistent,
    incompleteTimelines,
    plans,
    plansUnsettled,
    stepsRepeated,
    remediationInconsistent,
    unknownToTemporal,
    workflowTasksFailing,
    chatMessagesAccepted: accepted.length,
    chatMessagesAnswered: answered,
    chatMessagesUnanswered: unanswered,
    chatMessagesAnsweredTwice: twice,
    settleSeconds: 0,
    problems: problems.slice(0, 30),
  };
}

/** Where lost alerts did go, for the report: every incident whose timeline mentions them. */
async function whereabouts(
  get: (p: string) => Promise<{ status: number; body: any }>, // eslint-disable-line @typescript-eslint/no-explicit-any
  ids: string[],
): Promise<string[]> {
  const found = new Map(ids.map((id) => [id, [] as string[]]));
  const list = await get(`/incidents?namespace=${NAMESPACE}&pageSize=100`);
  for (const { name, state } of (list.body.items ?? []) as { name: string; state: string }[]) {
    const events: { type: string; message: string }[] = (await get(`/incidents/${name}/timeline`)).body.events ?? [];
    for (const id of ids)
      for (const e of events.filter((e) => e.message.includes(`[${id}]`)))
        found.get(id)!.push(`${name} (${state}): ${e.type} "${e.message}"`);
  }
  return ids.map((id) => `alert ${id} was found on: ${found.get(id)!.join('; ') || 'no timeline'}`);
}
