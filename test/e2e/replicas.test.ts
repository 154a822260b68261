import { AppsV1Api } from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import { mkdtempSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import path from 'path';
import { clusterWatchWorkflowId, LOCAL_CLUSTER } from '../../domain/cluster';
import { useCallbackReceiver } from '../harness/callback-receiver';
import {
  account,
  alert,
  approvePending,
  chaosEnv,
  chaosRunbook,
  NAMESPACE,
  NOTHING_LOST,
  SECRET,
  type AckedAlert,
  type ChaosReport,
} from '../harness/chaos';
import { deploymentManifest, useKube, type KubeCluster } from '../harness/kube';
import { killAll, survivors, until } from '../harness/processes';
import { useReplicaStack, type ReplicaStack } from '../harness/replica-stack';
import { useStepReceiver } from '../harness/step-receiver';

/**
 * Foghorn scaled out, as docs/design.md §3 promises it can be: two `foghorn api`, two `foghorn
 * worker` and `foghorn gateway start`, each a process, on one Temporal and one MongoDB-wire
 * server, watching a real kube-apiserver with KWOK nodes (the environment's `local` cluster).
 * Alerts from several senders are spread over both APIs (each request to a live one, as a load
 * balancer would), chat messages go through the gateway in a few chats, and the incidents run
 * plans with an HTTP step. Mid-stream the worker that runs the cluster's watch and one API are
 * killed with -9. Then:
 * - every alert answered 2xx is on its incident's timeline once, and every incident settled
 *   (test/harness/chaos.ts `account`: the same checks as the crash suites);
 * - one incident per resource at a time across both APIs: the first alerts of every resource
 *   reach both APIs at once, and no resource ever has two incidents open together (an operator
 *   resolves now and then, so resources get new incidents while both APIs take their alerts);
 * - every plan's HTTP step reached its receiver under one idempotency key;
 * - every accepted chat message has one final reply, each chat's in the order sent;
 * - the watch moved to the surviving worker: a Deployment that fails after the kill becomes an
 *   incident (docs/kubernetes.md §3, "Resume").
 * No timing is asserted; the waits are generous for a busy 2-core machine.
 */

jest.setTimeout(600_000);

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- API JSON
type Json = any;

const RESOURCES = 12;
const SENDERS = 4;
const CHATS = 3;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const random = (min: number, max: number) => min + Math.floor(Math.random() * (max - min + 1));

let kube: KubeCluster | undefined;
let dir: string;
let stack: ReplicaStack | undefined;
let receiver: Awaited<ReturnType<typeof useCallbackReceiver>>;
let steps: Awaited<ReturnType<typeof useStepReceiver>>;
let temporal: Client;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'foghorn-replicas-'));
  kube = await useKube();
  await kube.addNode('node-a');
  writeFileSync(path.join(dir, 'kubeconfig'), kube.kubeconfig, { mode: 0o600 });
  receiver = await useCallbackReceiver(SECRET);
  steps = await useStepReceiver();
  stack = await useReplicaStack(path.join(dir, 'data'), {
    apis: 2,
    workers: 2,
    gateway: true,
    env: {
      ...chaosEnv(receiver.url),
      KUBECONFIG: path.join(dir, 'kubeconfig'), // every worker registers it as `local`
      FOGHORN_WATCH_NOT_READY_AFTER: '1h',
    },
  });
  temporal = new Client({ connection: await Connection.connect({ address: stack.temporalAddress }) });
}, 420_000);

afterAll(async () => {
  await temporal?.connection.close();
  await stack?.shutdown();
  await killAll();
  expect(await survivors()).toEqual([]);
  await receiver?.stop();
  await steps?.stop();
  await kube?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it('loses nothing and keeps order and dedup when a worker and an API of two are killed', async () => {
  const s = stack!;
  const headers = { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' };
  const api = () => {
    const live = s.liveApis();
    return live[random(0, live.length - 1)];
  };
  const get = async (p: string): Promise<Json> => {
    const res = await fetch(api() + p, { headers, signal: AbortSignal.timeout(20_000) });
    if (res.status !== 200) throw new Error(`GET ${p}: HTTP ${res.status} ${await res.text()}`);
    return res.json();
  };
  const created = await fetch(`${s.apis[0]}/runbooks`, {
    method: 'POST',
    headers,
    body: JSON.stringify(chaosRunbook(steps.baseUrl)),
  });
  expect(created.status).toBe(201);

  // The watch of `local` runs on one of the workers: that one is killed.
  const watch = temporal.workflow.getHandle(clusterWatchWorkflowId(LOCAL_CLUSTER));
  const watcherPid = async () => {
    const { raw } = await watch.describe();
    const identity = raw.pendingActivities?.[0]?.lastWorkerIdentity ?? '';
    return Number(/^(\d+)@/.exec(identity)?.[1] ?? 0);
  };
  let watcher = -1;
  await until(
    'the cluster watch running on a worker',
    async () => {
      const pid = await watcherPid().catch(() => 0);
      watcher = s.workers().findIndex((w) => w?.pid === pid);
      return watcher >= 0;
    },
    120_000,
    s.output,
  );
  const apps = kube!.kc.makeApiClient(AppsV1Api);
  await apps.createNamespacedDeployment({ namespace: 'default', body: deploymentManifest('before', 1, 'crashloop') });
  const incidentsOf = async (resource: string): Promise<Json[]> =>
    (await get(`/incidents?namespace=default&resource=${encodeURIComponent(resource)}&pageSize=100`)).items;

  const acked: AckedAlert[] = [];
  const accepted: string[] = [];
  /** Each chat's accepted messages, in the order sent (a chat's sender waits for each 202). */
  const sentByChat = new Map<string, string[]>();
  let sent = 0;
  let seq = 0;
  let running = true;

  /** Alerts acknowledged by each API. */
  const ackedBy = new Map<string, number>(s.apis.map((a) => [a, 0]));
  const sendAlert = async (resource: string, to: string = api()): Promise<AckedAlert | undefined> => {
    const id = `a${++seq}`;
    sent++;
    try {
      const res = await fetch(`${to}/alerts/alertmanager`, {
        method: 'POST',
        headers,
        body: JSON.stringify(alert(resource, id)),
        signal: AbortSignal.timeout(20_000),
      });
      const body = (await res.json()) as { items?: { outcome: string; incident?: string }[] };
      const item = body.items?.[0];
      if (res.status === 202 && item?.incident && (item.outcome === 'opened' || item.outcome === 'correlated')) {
        const a = { id, resource, incident: item.incident, outcome: item.outcome };
        acked.push(a);
        ackedBy.set(to, ackedBy.get(to)! + 1);
        return a;
      }
    } catch {
      // not acknowledged (its API was killed meanwhile): the sender moves on
    }
    return undefined;
  };
  /** Incidents an operator resolved with a 200. */
  const resolved = new Set<string>();
  const alertLoop = async () => {
    while (running) {
      const a = await sendAlert(`svc-${random(1, RESOURCES)}`);
      // Now and then an operator resolves it, through either API: the next alert of the resource
      // opens a new incident, maybe on the other API while this one winds the old one down.
      if (a && Math.random() < 0.04)
        await fetch(`${api()}/incidents/${a.incident}/resolve?namespace=${NAMESPACE}`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ resolution: 'replicas' }),
          signal: AbortSignal.timeout(20_000),
        }).then(
          (r) => r.status === 200 && resolved.add(a.incident),
          () => undefined,
        );
      await sleep(random(50, 250));
    }
  };
  const chatLoop = async (chat: string) => {
    sentByChat.set(chat, []);
    while (running) {
      try {
        const res = await fetch(s.webhook, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-foghorn-secret': SECRET },
          body: JSON.stringify({ chat_id: chat, user_id: 'sre', text: '/help' }),
          signal: AbortSignal.timeout(20_000),
        });
        if (res.status === 202) {
          const id = ((await res.json()) as { message_id: string }).message_id;
          accepted.push(id);
          sentByChat.get(chat)!.push(id);
        }
      } catch {
        // not accepted
      }
      await sleep(random(300, 1200));
    }
  };
  const approvalLoop = async () => {
    while (running) {
      await approvePending(api(), headers);
      await sleep(random(500, 1500));
    }
  };

  // The first alert of every resource reaches both APIs at once: one of them opens the incident.
  const firsts = await Promise.all(
    Array.from({ length: RESOURCES }, (_, i) => Promise.all(s.apis.map((to) => sendAlert(`svc-${i + 1}`, to)))),
  );
  for (const answers of firsts) {
    expect(answers.map((a) => a?.outcome).sort()).toEqual(['correlated', 'opened']);
    expect(answers[0]!.incident).toBe(answers[1]!.incident);
  }
  const load = [
    approvalLoop(),
    ...Array.from({ length: SENDERS }, alertLoop),
    ...Array.from({ length: CHATS }, (_, i) => chatLoop(`replicas-${i}`)),
  ];
  let after: Json[] = [];
  try {
    const loadStarted = Date.now();
    await until(
      'the incident of Deployment/before',
      async () => (await incidentsOf('Deployment/before')).length > 0,
      180_000,
      s.output,
    );
    await sleep(Math.max(0, 12_000 - (Date.now() - loadStarted)));
    console.log(`replicas: killing worker-${watcher} (the watch's) and, a moment later, api-1`);
    await s.crashWorker(watcher);
    await sleep(random(1_000, 4_000));
    await s.crashApi(1);
    await apps.createNamespacedDeployment({ namespace: 'default', body: deploymentManifest('after', 1, 'crashloop') });
    await sleep(15_000);
  } finally {
    running = false;
    await Promise.all(load);
  }

  // The survivor took the watch over (after the heartbeat timeout) and saw the new failure.
  await until(
    'the incident of Deployment/after, seen by the watch on the surviving worker',
    async () => (after = await incidentsOf('Deployment/after').catch(() => [])).length > 0,
    240_000,
    s.output,
  );
  const survivor = s.workers().find((w) => w !== undefined)!;
  expect(await watcherPid()).toBe(survivor.pid);
  expect(after).toHaveLength(1);
  expect(await incidentsOf('Deployment/before')).toHaveLength(1);

  // Everything acknowledged settles, as in the crash suites.
  let report: ChaosReport;
  let extra: string[] = [];
  const settleStart = Date.now();
  for (;;) {
    await approvePending(api(), headers);
    report = await account(
      { api: api(), temporalAddress: s.temporalAddress },
      headers,
      acked,
      resolved,
      accepted,
      receiver,
      steps,
      'replicas',
      2,
      sent,
    );
    extra = [...(await overlappingIncidents(get)), ...(await planKeys(get, acked)), ...chatOrder(sentByChat, receiver)];
    if ((report.problems.length === 0 && extra.length === 0) || Date.now() - settleStart > 180_000) break;
    await sleep(3_000);
  }
  console.log(
    `replicas: alerts sent ${sent}, acknowledged ${report.alertsAcknowledged} (${[...ackedBy.values()].join(' and ')} by api-0 and api-1), ` +
      `incidents ${report.incidents}, plans ${report.plans} (${await planStates(get, acked)}), chat messages accepted ${report.chatMessagesAccepted} in ${CHATS} chats, ` +
      `HTTP step requests ${steps.received.length}, settled in ${Math.round((Date.now() - settleStart) / 1000)} s`,
  );
  expect([...report.problems, ...extra]).toEqual([]);
  expect(report).toMatchObject(NOTHING_LOST);
  // The run did something worth checking.
  expect(report.alertsAcknowledged).toBeGreaterThan(20);
  for (const n of ackedBy.values()) expect(n).toBeGreaterThan(RESOURCES);
  expect(report.incidents).toBeGreaterThanOrEqual(RESOURCES);
  expect(report.plans).toBeGreaterThan(1);
  expect(report.chatMessagesAccepted).toBeGreaterThan(CHATS * 3);
});

/** Resources with two incidents open at once (dedup must hold across API processes). */
async function overlappingIncidents(get: (p: string) => Promise<Json>): Promise<string[]> {
  const problems: string[] = [];
  for (let i = 1; i <= RESOURCES; i++) {
    const resource = `Deployment/svc-${i}`;
    const items: Json[] = (await get(`/incidents?namespace=${NAMESPACE}&resource=${resource}&pageSize=100`)).items;
    items.sort((a, b) => Date.parse(a.detectedAt) - Date.parse(b.detectedAt));
    for (let n = 1; n < items.length; n++) {
      const [before, next] = [items[n - 1], items[n]];
      if (!before.resolvedAt || Date.parse(before.resolvedAt) > Date.parse(next.detectedAt))
        problems.push(
          `${resource}: ${next.name} opened at ${next.detectedAt} while ${before.name} was ${before.state} (resolved ${before.resolvedAt ?? 'never'})`,
        );
    }
  }
  return problems;
}

/**
 * Plans whose HTTP step reached its receiver under more than one idempotency key, or a plan that
 * completed without its step reaching it. The key names the plan (`RP-…`).
 */
async function planKeys(get: (p: string) => Promise<Json>, acked: AckedAlert[]): Promise<string[]> {
  const problems: string[] = [];
  for (const incident of new Set(acked.map((a) => a.incident))) {
    const plans: Json[] = (await get(`/remediations?namespace=${NAMESPACE}&incident=${incident}&pageSize=100`)).items;
    const keys = [...new Set(steps.received.filter((r) => r.url === `/fix/${incident}`).map((r) => r.key))];
    for (const plan of plans) {
      const mine = keys.filter((k) => ofPlan(k, plan.name));
      if (mine.length > 1) problems.push(`${plan.name} (${incident}): its step came under ${mine.length} keys`);
      if (plan.state === 'Completed' && mine.length === 0)
        problems.push(`${plan.name} (${incident}): Completed, its step never came`);
    }
    const unowned = keys.filter((k) => !plans.some((p) => ofPlan(k, p.name)));
    if (unowned.length) problems.push(`${incident}: step keys of no plan: ${unowned.join(', ')}`);
  }
  return problems;
}

/** `Completed 20, Failed: <why> 6` */
async function planStates(get: (p: string) => Promise<Json>, acked: AckedAlert[]): Promise<string> {
  const states = new Map<string, number>();
  for (const incident of new Set(acked.map((a) => a.incident)))
    for (const plan of (await get(`/remediations?namespace=${NAMESPACE}&incident=${incident}&pageSize=100`)).items) {
      const result = String(plan.result ?? '')
        .replace(/[A-Z]+-\d{8}-\d+/g, '…')
        .replace(/svc-\d+/g, 'svc-…');
      const why = plan.state === 'Failed' ? ` (${result.slice(0, 50)})` : '';
      states.set(plan.state + why, (states.get(plan.state + why) ?? 0) + 1);
    }
  return [...states].map(([state, n]) => `${state} ${n}`).join(', ');
}

const ofPlan = (key: string, plan: string) => new RegExp(`${plan}(?![0-9])`).test(key);

/** Chats whose final replies came in another order than their messages were sent. */
function chatOrder(sentByChat: Map<string, string[]>, callbacks: typeof receiver): string[] {
  const problems: string[] = [];
  const firstFinal = new Map<string, number>();
  callbacks.delivered().forEach((c, i) => {
    if ((c.body.kind === 'final' || c.body.kind === 'error') && !firstFinal.has(c.body.message_id))
      firstFinal.set(c.body.message_id, i);
  });
  for (const [chat, ids] of sentByChat) {
    const answered = ids.filter((id) => firstFinal.has(id));
    const inArrival = [...answered].sort((a, b) => firstFinal.get(a)! - firstFinal.get(b)!);
    if (answered.join() !== inArrival.join())
      problems.push(`chat ${chat}: sent ${answered.join(' ')}, answered ${inArrival.join(' ')}`);
  }
  return problems;
}
