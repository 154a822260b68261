import { CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { Writable } from 'stream';
import type { Server } from 'http';
import type { AddressInfo } from 'net';
import { createApp } from '../../api/app';
import { createLogger } from '../../api/observability';
import { clusterHealthWorkflowId, clusterWatchWorkflowId } from '../../domain/cluster';
import { AuditRecordModel } from '../../store/models';
import { createToken } from '../../store/tokens';
import { installRuntime } from '../../worker/worker';
import { useKube, type KubeCluster } from '../harness/kube';
import { useStack } from '../harness/stack';
import { useTestSecretKey } from './fixtures';

/**
 * Cluster health against a real kube-apiserver (KWOK nodes), through the real API, worker and
 * health workflow. Everything this file's run writes — API answers, the log lines of the API
 * and the worker, audit records, workflow histories — is searched for the credentials at the end.
 */

// Every log line of the worker (SDK, workflows, activities) and the API, as the product writes them.
const logged: string[] = [];
const logStream = new Writable({
  write(chunk: Buffer, _enc, done) {
    logged.push(chunk.toString('utf8'));
    done();
  },
});
installRuntime(createLogger('trace', { stream: logStream, pretty: false }));

let kube: KubeCluster;
let s: Awaited<ReturnType<typeof useStack>>;
let server: Server;
let baseUrl: string;
let adminToken: string;
const answers: string[] = [];

beforeAll(async () => {
  useTestSecretKey();
  kube = await useKube();
  await kube.addNode('node-a');
  await kube.addNode('node-b');
  s = await useStack();
  // An API of its own, logging at trace into the capture (the harness's API logs nothing).
  const app = createApp({
    basePath: '/api/v1',
    rateLimitPerMinute: 100_000,
    logger: createLogger('trace', { stream: logStream, pretty: false }),
    temporal: s.client,
    taskQueue: s.wf.taskQueue,
  });
  server = await new Promise((resolve) => {
    const srv = app.listen(0, '127.0.0.1', () => resolve(srv));
  });
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
  adminToken = (await createToken('cluster-admin', 'admin')).token;
}, 300_000);

afterAll(async () => {
  await new Promise((r) => server?.close(r));
  await s?.stop();
  await kube?.stop();
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests inspect arbitrary JSON
async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(baseUrl + path, {
    method,
    headers: {
      authorization: `Bearer ${adminToken}`,
      ...(body !== undefined && { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  answers.push(text);
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

const register = async (name: string, spec: Record<string, unknown>) => {
  const res = await call('POST', '/clusters', { metadata: { name }, spec: { tier: 'critical', ...spec } });
  expect(res.status).toBe(201);
};

const detail = async (name: string) => (await call('GET', `/clusters/${name}`)).body;

/**
 * The cluster's detail once `check` holds. Each probe lets 30 s of workflow time pass on the
 * time-skipping server, so the health workflow's timer fires and the next check runs.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests inspect arbitrary JSON
async function phaseOf(name: string, check: (d: any) => boolean): Promise<any> {
  return s.eventually(
    async () => {
      const d = await detail(name);
      if (!check(d)) await s.wf.env.sleep(30_000);
      return d;
    },
    check,
    300_000, // a loaded 2-core machine: the worker, the API server and KWOK share it
  );
}

describe('cluster health against a real API server', () => {
  it('Connected with real node and namespace counts, capacity and requests', async () => {
    // the admin token + server + CA (PEM), as an operator would paste them
    await register('kube-one', { credentials: { server: kube.server, token: kube.token, caData: kube.caData } });
    const d = await phaseOf('kube-one', (x) => x.status.phase === 'Connected');
    const core = kube.kc.makeApiClient(CoreV1Api);
    const namespaces = (await core.listNamespace()).items.length;
    expect(d.status).toMatchObject({
      phase: 'Connected',
      lastHealthCheck: expect.any(String),
      kubernetesVersion: expect.stringMatching(/^v1\.33\./),
      nodeCount: 2,
      namespaceCount: namespaces,
      activeIssues: expect.any(Number),
      activeRemediations: expect.any(Number),
    });
    // two KWOK nodes of 4 CPUs and 16Gi each
    expect(d.status.resourceUsage).toMatchObject({ cpuCapacity: '8', memoryCapacity: '32Gi' });
    expect(d.status.resourceUsage.cpuUsed).toMatch(/^\d+m?$/);

    const list = await call('GET', '/federation/clusters');
    expect(list.body.items.find((i: { name: string }) => i.name === 'kube-one')).toMatchObject({
      connected: true,
      version: d.status.kubernetesVersion,
      nodeCount: 2,
    });
  }, 700_000);

  it('a wrong token is Unauthorized; a token without rights too', async () => {
    await register('kube-wrong', {
      credentials: { server: kube.server, token: 'wrong-token-0123456789abcdef', caData: kube.caData },
    });
    await register('kube-norights', {
      credentials: { server: kube.server, token: kube.restrictedToken, caData: kube.caData },
    });
    for (const name of ['kube-wrong', 'kube-norights']) {
      const d = await phaseOf(name, (x) => x.status.phase === 'Unauthorized');
      expect(d.status.lastHealthCheck).toEqual(expect.any(String));
      const item = (await call('GET', '/federation/clusters')).body.items.find(
        (i: { name: string }) => i.name === name,
      );
      expect(item.connected).toBe(false);
    }
  }, 700_000);

  it('API server stopped ⇒ Unreachable (nothing crashes); started again ⇒ Connected', async () => {
    await register('kube-config', { kubeconfig: kube.kubeconfig });
    await phaseOf('kube-config', (x) => x.status.phase === 'Connected');
    await kube.stopApiServer();
    try {
      const down = await phaseOf('kube-config', (x) => x.status.phase === 'Unreachable');
      // the last known figures stay; only the phase and the time of the check move
      expect(down.status.nodeCount).toBe(2);
    } finally {
      await kube.startApiServer();
    }
    await phaseOf('kube-config', (x) => x.status.phase === 'Connected');
    await phaseOf('kube-one', (x) => x.status.phase === 'Connected');
    const health = await s.client.workflow.getHandle(clusterHealthWorkflowId('kube-config')).describe();
    expect(health.status.name).toBe('RUNNING');
  }, 700_000);

  it('a node NotReady ⇒ Degraded; Ready again ⇒ Connected', async () => {
    const core = kube.kc.makeApiClient(CoreV1Api);
    // KWOK's stock node-not-ready stage turns a node so labelled NotReady (and back when removed).
    const notReady = (value: 'true' | null) =>
      core.patchNode(
        { name: 'node-b', body: { metadata: { labels: { 'node-not-ready.stage.kwok.x-k8s.io': value } } } },
        setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
      );
    await phaseOf('kube-one', (x) => x.status.phase === 'Connected');
    await notReady('true');
    try {
      const degraded = await phaseOf('kube-one', (x) => x.status.phase === 'Degraded');
      expect(degraded.status).toMatchObject({ nodeCount: 2 });
      expect(
        (await call('GET', '/federation/clusters')).body.items.find((i: { name: string }) => i.name === 'kube-one'),
      ).toMatchObject({ connected: true });
    } finally {
      await notReady(null);
    }
    await phaseOf('kube-one', (x) => x.status.phase === 'Connected');
  }, 700_000);

  it('no credential appears in any answer, log line, audit record or workflow history', async () => {
    const secrets = [kube.token, kube.restrictedToken, 'wrong-token-0123456789abcdef'];
    // the kubeconfig's own content: its CA block is distinctive even if not secret itself
    const caLine = kube.caData.split('\n').find((l) => l.length > 40 && !l.startsWith('-----'))!;
    const distinctive = [...secrets, caLine, Buffer.from(kube.caData).toString('base64').slice(0, 60)];

    const histories: string[] = [];
    for (const name of ['kube-one', 'kube-wrong', 'kube-norights', 'kube-config'])
      for (const id of [clusterHealthWorkflowId(name), clusterWatchWorkflowId(name)]) {
        const history = await s.client.workflow.getHandle(id).fetchHistory();
        // payloads are base64 in the JSON form of a history: search them decoded
        histories.push(
          JSON.stringify(history, (key, value: unknown) =>
            key === 'data' && typeof value === 'string' ? Buffer.from(value, 'base64').toString('utf8') : value,
          ),
        );
      }
    expect(histories.join('')).toContain('kube-config'); // the name is there: the search is real
    const audit = JSON.stringify(await AuditRecordModel.find({}).lean());
    expect(audit).toContain('cluster.register');
    expect(logged.length).toBeGreaterThan(0);
    expect(answers.length).toBeGreaterThan(10);

    const places = { answers: answers.join('\n'), logs: logged.join(''), audit, histories: histories.join('\n') };
    for (const [where, text] of Object.entries(places))
      for (const secret of distinctive)
        expect({ where, leaked: text.includes(secret) }).toEqual({ where, leaked: false });
  });
});
