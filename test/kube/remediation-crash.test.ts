import { AppsV1Api, CoreV1Api, type V1Deployment } from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import { execFile } from 'child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'fs';
import type { IncomingMessage, ServerResponse } from 'http';
import { createServer, request as httpsRequest, type Server } from 'https';
import { MongoClient } from 'mongodb';
import type { AddressInfo } from 'net';
import { tmpdir } from 'os';
import path from 'path';
import { promisify } from 'util';
import { kubeconfigYaml } from '../../cli/embedded/kube';
import { FINAL_PLAN_STATES } from '../../domain/remediation';
import { deploymentManifest, useKube, waitFor, type ApiWrite, type KubeCluster } from '../harness/kube';
import { killAll, survivors, until } from '../harness/processes';
import { useSplitStack, type SplitStack } from '../harness/split-stack';

/**
 * Kubernetes remediation under kill -9 of the worker: a real kube-apiserver with KWOK nodes, the
 * Temporal dev server in real time, `foghorn api` and `foghorn worker` as processes (the worker
 * starts the `local` cluster's watch itself, from KUBECONFIG). A Deployment `checkout` runs
 * revision 1 (checkout:1), proven healthy; revision 2 (checkout:2, crash-looping) rolls out; the
 * watcher opens the incident; the evidence's plan rolls back to revision 1 once approved.
 * A. The worker dies with the rollback's intent recorded and its write on the way to the API
 *    server (held by a proxy in front of it, so the kill lands there every time): a new worker
 *    applies the step once, the API server sees one write of the template.
 * B. The worker dies while the plan is Verifying, in the health wait: the wait is retried on the
 *    new worker, the verification succeeds once, nothing is written again.
 * Either way the incident is Resolved by system. Only outcomes are asserted, never durations.
 * A kill after the API server stored the write but before the key is marked done is met by the
 * rollback's "already applied" read (activities/kube-actions.ts): the new worker finds the
 * template in place and sends nothing (not driven here: the proxy holds writes, it does not
 * let one through and then cut the worker off).
 */

jest.setTimeout(20 * 60_000);

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- API JSON
type Json = any;

const ROLLBACK_NS = 'kill-in-rollback';
const VERIFY_NS = 'kill-in-verify';
const DEPLOYMENT = 'checkout';
const RESOURCE = `Deployment/${DEPLOYMENT}`;
const REVISION = 'deployment.kubernetes.io/revision';
/** PENDING_ACTIVITY_STATE_STARTED: a worker runs the activity. */
const STARTED = 2;

/**
 * An HTTPS proxy in front of the API server that the processes' kubeconfig points at (its own
 * self-signed certificate, made with openssl as the API server's is). It forwards everything
 * (watches streamed) except the first request `trap` matches: that one is held, never
 * forwarded, until its client goes away — the worker's write, caught on its way.
 */
interface ApiProxy {
  url: string;
  /** PEM of its certificate. */
  caData: string;
  /** Holds the next request `match` accepts; resolves with its method and URI once it arrives. */
  trap(match: (req: IncomingMessage) => boolean): Promise<string>;
  close(): Promise<void>;
}

async function useApiProxy(kube: KubeCluster, dir: string): Promise<ApiProxy> {
  const key = path.join(dir, 'proxy.key');
  const cert = path.join(dir, 'proxy.crt');
  await promisify(execFile)('openssl', [
    'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1',
    '-keyout', key, '-out', cert,
    '-subj', '/CN=foghorn-test-proxy', '-addext', 'subjectAltName=IP:127.0.0.1',
  ]); // prettier-ignore
  const caData = readFileSync(cert, 'utf8');
  const upstream = new URL(kube.server);
  let trap: { match: (req: IncomingMessage) => boolean; caught: (what: string) => void } | undefined;
  const forward = (req: IncomingMessage, body: Buffer, res: ServerResponse) => {
    const up = httpsRequest(
      {
        hostname: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: upstream.host },
        ca: kube.caData,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        res.flushHeaders(); // a watch answers its headers at once, its events when they come
        answer.pipe(res);
      },
    );
    up.on('error', () => res.destroy());
    res.on('close', () => up.destroy()); // a watch whose client died (a killed worker) ends
    up.end(body);
  };
  const server: Server = createServer({ key: readFileSync(key), cert: caData }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (trap?.match(req)) {
        const { caught } = trap;
        trap = undefined;
        caught(`${req.method} ${req.url}`);
        return; // held: the client's death closes it, and it never reaches the API server
      }
      forward(req, Buffer.concat(chunks), res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    caData,
    trap: (match) => new Promise<string>((caught) => (trap = { match, caught })),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let kube: KubeCluster;
let apps: AppsV1Api;
let core: CoreV1Api;
let proxy: ApiProxy;
let stack: SplitStack;
let mongo: MongoClient;
let temporal: Connection;
let dataDir: string;

beforeAll(async () => {
  kube = await useKube();
  await kube.addNode('node-a');
  await kube.addNode('node-b');
  apps = kube.kc.makeApiClient(AppsV1Api);
  core = kube.kc.makeApiClient(CoreV1Api);
  dataDir = mkdtempSync(path.join(tmpdir(), 'foghorn-kube-remediation-crash-'));
  proxy = await useApiProxy(kube, dataDir);
  // The `local` cluster is the one KUBECONFIG points at (activities/kube/client.ts): this
  // cluster, through the proxy, with its admin token.
  const kubeconfig = path.join(dataDir, 'kubeconfig');
  writeFileSync(kubeconfig, kubeconfigYaml(proxy.url, proxy.caData, kube.token), { mode: 0o600 });
  stack = await useSplitStack(dataDir, {
    KUBECONFIG: kubeconfig,
    FOGHORN_VERIFY_WINDOW: '30s',
    FOGHORN_REVISION_STABLE_AFTER: '2s',
    // One attempt: a failed plan escalates instead of trying another strategy's writes.
    FOGHORN_MAX_ATTEMPTS: '1',
    FOGHORN_LLM_BASE_URL: '', // no agentic strategy
    FOGHORN_STT: '',
    FOGHORN_WEBHOOK_HOME_CHANNEL: '',
  });
  mongo = await MongoClient.connect(stack.mongoUri);
  temporal = await Connection.connect({ address: stack.temporalAddress });
}, 600_000);

afterAll(async () => {
  try {
    await stack?.stop();
  } finally {
    await killAll();
    await temporal?.close();
    await mongo?.close();
    await proxy?.close();
    await kube?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
  expect(await survivors()).toEqual([]);
}, 180_000);

// ---------------------------------------------------------------------------------------------

const get = async (p: string): Promise<Json> => {
  const res = await stack.call('GET', p);
  if (res.status !== 200) throw new Error(`GET ${p}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
};
const planDetail = (plan: string): Promise<Json> => get(`/remediations/${plan}`);
const incidentDetail = (ns: string, incident: string): Promise<Json> => get(`/incidents/${incident}?namespace=${ns}`);
const timeline = async (ns: string, incident: string): Promise<Json[]> =>
  (await get(`/incidents/${incident}/timeline?namespace=${ns}`)).events;
const kubeAction = (key: string) => mongo.db().collection('kube_actions').findOne({ key });
const readDeployment = (ns: string) => apps.readNamespacedDeployment({ name: DEPLOYMENT, namespace: ns });

/**
 * The writes of the Deployment's template by Foghorn, as the API server audited them: its
 * patches (the test itself only creates and updates), not the approval's dry run.
 */
async function templateWrites(ns: string): Promise<ApiWrite[]> {
  const writes = await kube.writes({ verb: 'patch', resource: 'deployments', namespace: ns, name: DEPLOYMENT });
  return writes.filter((w) => !w.dryRun && w.subresource === undefined);
}

/** The JSON patch of the rollback: the one write the worker sends to the Deployment. */
const isRollbackWrite = (ns: string) => (req: IncomingMessage) =>
  req.method === 'PATCH' &&
  req.url?.split('?')[0] === `/apis/apps/v1/namespaces/${ns}/deployments/${DEPLOYMENT}` &&
  !/[?&]dryRun=/.test(req.url ?? '');

/**
 * Revision 1 (checkout:1) running and proven healthy in the change record, then revision 2
 * (checkout:2, crash-looping) rolled out as a person would (an update, change-cause set).
 */
async function badRollout(ns: string, tune: (d: V1Deployment) => void = () => undefined): Promise<void> {
  await core.createNamespace({ body: { metadata: { name: ns } } });
  await waitFor(
    `the service account of ${ns}`,
    async () => {
      await core.readNamespacedServiceAccount({ name: 'default', namespace: ns });
      return true;
    },
    120_000,
  );
  const body = deploymentManifest(DEPLOYMENT, 2, undefined, ns);
  body.spec!.template.spec!.containers[0].image = 'checkout:1';
  tune(body);
  await apps.createNamespacedDeployment({ namespace: ns, body });
  await until(
    `${ns} revision 1 healthy`,
    async () => {
      const changes = await get(`/changes?namespace=${ns}&resource=${encodeURIComponent(RESOURCE)}`).catch(() => ({
        items: [],
      }));
      return changes.items.some((c: Json) => c.revision === 1 && c.revisionHealth?.state === 'Healthy');
    },
    240_000,
    stack.output,
  );
  const d = await readDeployment(ns);
  d.metadata!.annotations = { ...d.metadata!.annotations, 'kubernetes.io/change-cause': 'deploy checkout 2' };
  d.spec!.template.metadata!.labels = { ...d.spec!.template.metadata!.labels, sim: 'crashloop' };
  d.spec!.template.spec!.containers[0].image = 'checkout:2';
  await apps.replaceNamespacedDeployment({
    name: DEPLOYMENT,
    namespace: ns,
    body: d,
    fieldManager: 'kubectl-client-side-apply',
  });
}

/** The incident the watcher opened on the Deployment and its first plan, waiting for approval. */
async function pendingRollback(ns: string): Promise<{ incident: string; plan: string; approval: string }> {
  let incident: string | undefined;
  let diag = '';
  await until(
    `the incident on ${ns}/${RESOURCE}`,
    async () => {
      // For a failure message: the pods as the watcher should see them, and every incident.
      const pods = (await core.listNamespacedPod({ namespace: ns })).items.map(
        (p) => `${p.metadata?.name} ${JSON.stringify(p.status?.containerStatuses?.map((c) => [c.image, c.state]))}`,
      );
      diag = `${pods.join('\n')}\n${JSON.stringify((await get('/incidents?pageSize=50')).items)}`;
      return (
        (incident = (await get(`/incidents?namespace=${ns}&resource=${encodeURIComponent(RESOURCE)}`)).items[0]
          ?.name) !== undefined
      );
    },
    300_000,
    () => `${stack.output()}\n${diag}`,
  );
  let approval: Json;
  let seen: Json[] = [];
  await until(
    `the approval of ${incident}'s plan`,
    async () => {
      seen = await timeline(ns, incident!);
      approval = (await get(`/approvals?status=pending&incident=${incident}&namespace=${ns}`)).items[0];
      return approval !== undefined;
    },
    300_000,
    () => `${stack.output()}\n${seen.map((e) => `${e.timestamp} ${e.type}: ${e.message}`).join('\n')}`,
  );
  const plan = await planDetail(approval.plan);
  expect(plan.spec.actions.map((a: Json) => a.type)).toEqual(['RollbackDeployment']);
  expect(plan.spec.strategy).toMatch(/^from the evidence: roll back/);
  return { incident: incident!, plan: approval.plan, approval: approval.name };
}

/** Approves as the admin; a 503 (the approval's workflow not running yet) is retried, as it says. */
async function approve(approval: string): Promise<void> {
  let last: { status: number; body: Json } | undefined;
  await until(
    `${approval} approved`,
    async () => {
      last = await stack.call('POST', `/approvals/${approval}/approve`, { comment: 'roll it back' });
      if (last.status === 503) return false;
      expect(last).toMatchObject({ status: 200, body: { status: 'approved' } });
      return true;
    },
    120_000,
    () => `${JSON.stringify(last)}\n${stack.output()}`,
  );
}

async function finalPlan(plan: string): Promise<Json> {
  let detail: Json;
  await until(
    `plan ${plan} final`,
    async () => FINAL_PLAN_STATES.includes((detail = await planDetail(plan)).status.state),
    600_000,
    stack.output,
  );
  return detail;
}

/**
 * What must hold after either kill: the Deployment back on revision 1's template, written once;
 * the step recorded once, verified once; the plan Completed and the incident Resolved by system.
 */
async function expectRolledBackOnce(ns: string, incident: string, plan: string): Promise<void> {
  const done = await finalPlan(plan);
  const events = await timeline(ns, incident);
  const context = { plan: done, events: events.map((e) => `${e.timestamp} ${e.type}: ${e.message}`) };
  expect({ ...context, state: done.status.state }).toMatchObject({ state: 'Completed' });
  expect(done.spec.actions.map((a: Json) => a.outcome)).toEqual(['ok']);
  await until(
    `${incident} resolved`,
    async () => (await incidentDetail(ns, incident)).status.state === 'Resolved',
    180_000,
    stack.output,
  );

  // Back on revision 1's template: the rollback made it the newest revision (3), and the
  // Deployment's spec changed once after the bad rollout (generation 1 create, 2 rollout, 3 rollback).
  const d = await readDeployment(ns);
  expect(d.spec!.template.spec!.containers.map((c) => c.image)).toEqual(['checkout:1']);
  expect(d.spec!.template.metadata!.labels).toEqual({ app: DEPLOYMENT });
  expect(d.metadata!.generation).toBe(3);
  await waitFor(
    `${ns} on revision 3`,
    async () => (await readDeployment(ns)).metadata!.annotations?.[REVISION] === '3',
  );

  // The API server saw the template written once.
  await waitFor(`the rollback in the audit log of ${ns}`, async () => (await templateWrites(ns)).length > 0);
  const writes = await templateWrites(ns);
  expect({ writes, count: writes.length }).toMatchObject({ count: 1 });
  expect(writes[0]).toMatchObject({ code: 200, user: 'admin' });

  // The step once: its key done, one ActionExecuted.
  expect(await kubeAction(`${plan}/0`)).toMatchObject({ action: 'RollbackDeployment', state: 'done' });
  const executed = events.filter((e) => e.type === 'ActionExecuted' && e.details?.plan === plan);
  expect(executed.map((e) => e.details)).toEqual([
    expect.objectContaining({ step: 1, action: 'RollbackDeployment', outcome: 'ok' }),
  ]);

  // Verified once, successfully.
  const verification = events.filter((e) => e.type === 'Verification' && e.details?.plan === plan);
  expect(verification.map((e) => e.details.passed)).toEqual([true]);

  // Resolved by the plan, as system.
  const resolved = await incidentDetail(ns, incident);
  expect(resolved.status.resolution).toMatch(new RegExp(`^Remediated automatically by plan ${plan} `));
  const stored = await mongo.db().collection('incidents').findOne({ name: incident });
  expect(stored).toMatchObject({ state: 'Resolved', resolvedBy: 'system' });
}

it('a worker killed with the rollback recorded but not yet written: a new worker writes it once', async () => {
  await badRollout(ROLLBACK_NS);
  const { incident, plan, approval } = await pendingRollback(ROLLBACK_NS);
  expect(await templateWrites(ROLLBACK_NS)).toEqual([]);

  const held = proxy.trap(isRollbackWrite(ROLLBACK_NS));
  await approve(approval);
  let request: string | undefined;
  void held.then((r) => (request = r));
  await until('the rollback write at the proxy', () => request !== undefined, 300_000, stack.output);
  // The intent is recorded before the cluster is touched: the key is pending now.
  expect(await kubeAction(`${plan}/0`)).toMatchObject({ action: 'RollbackDeployment', state: 'pending' });
  await stack.crashWorker();
  expect(await kubeAction(`${plan}/0`)).toMatchObject({ state: 'pending' });
  expect(await templateWrites(ROLLBACK_NS)).toEqual([]);
  await stack.startWorker();

  await expectRolledBackOnce(ROLLBACK_NS, incident, plan);
  console.log(`held and dropped by the kill: ${request}`);
});

it('a worker killed while the plan verifies: verification succeeds once, nothing is written again', async () => {
  // Every pod replaced at once (revision 2 leaves none of revision 1 running), and each new pod
  // available 10 s after it is ready: the rollback's health wait lasts long enough to die in.
  await badRollout(VERIFY_NS, (d) => {
    d.spec!.strategy = { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: 2 } };
    d.spec!.minReadySeconds = 10;
  });
  const { incident, plan, approval } = await pendingRollback(VERIFY_NS);
  await approve(approval);

  const client = new Client({ connection: temporal });
  const workflow = client.workflow.getHandle(incident);
  const seen = new Set<string>();
  await until(
    `${plan} verifying, its health wait running`,
    async () => {
      const state = (await planDetail(plan)).status.state;
      const pending = ((await workflow.describe()).raw.pendingActivities ?? []).map(
        (a) =>
          `${a.activityType?.name} attempt ${a.attempt} state ${a.state} heartbeat ${a.lastHeartbeatTime ? 'yes' : 'no'}`,
      );
      seen.add(`${state}: ${pending.join(', ')}`);
      return (
        state === 'Verifying' && pending.some((a) => a.startsWith(`awaitTargetHealthy attempt 1 state ${STARTED} `))
      );
    },
    300_000,
    () => `${stack.output()}\n${[...seen].join('\n')}`,
  );
  await stack.crashWorker();
  await stack.startWorker();

  await expectRolledBackOnce(VERIFY_NS, incident, plan);

  // The kill landed in the health wait: the attempt that answered was not its first (the one on
  // the dead worker timed out without a heartbeat; the server retried it on the new worker).
  const history = (await workflow.fetchHistory()).events ?? [];
  const waits = new Set(
    history
      .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'awaitTargetHealthy')
      .map((e) => String(e.eventId)),
  );
  const attempts = history
    .filter((e) => waits.has(String(e.activityTaskStartedEventAttributes?.scheduledEventId ?? '')))
    .map((e) => e.activityTaskStartedEventAttributes!.attempt);
  expect(attempts.length).toBe(2); // the wait, and the check at the end of the window
  expect(attempts[0]).toBeGreaterThan(1);
});
