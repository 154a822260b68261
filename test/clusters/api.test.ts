import type { Client } from '@temporalio/client';
import { clusterHealthWorkflowId, clusterWatchWorkflowId } from '../../domain/cluster';
import { clusterRegistrationSchema } from '../../contracts/clusters';
import { ensureClusterWorkflows, registerCluster } from '../../operations/clusters';
import { AuditRecordModel, ClusterSecretModel } from '../../store/models';
import { BASE_PATH, type ApiResponse } from '../harness/api';
import { useStack } from '../harness/stack';
import { fakeKubeconfig, useTestSecretKey } from './fixtures';

let s: Awaited<ReturnType<typeof useStack>>;

beforeAll(async () => {
  useTestSecretKey();
  s = await useStack();
}, 180_000);
afterAll(() => s?.stop());

const TOKEN = 'fake-token-4f9c2a7e1b3d5c6a8e0f';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

const body = (name: string, spec: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}) => ({
  metadata: { name, ...metadata },
  spec: {
    displayName: `Cluster ${name}`,
    tier: 'standard',
    region: 'eu-west-1',
    kubeconfig: fakeKubeconfig(),
    ...spec,
  },
});

function expectError(res: ApiResponse, status: number, message: string): void {
  expect({ status: res.status, body: res.body }).toEqual({
    status,
    body: { apiVersion: 'v1', kind: 'Error', error: { code: status, message, details: expect.any(String) } },
  });
}

const register = (name: string, spec: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}) =>
  s.call('POST', '/clusters', { body: body(name, spec, metadata) });

describe('POST /clusters', () => {
  it('registers: 201 + Location, the detail, no credentials anywhere in the answer', async () => {
    const res = await register('alpha');
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`${BASE_PATH}/clusters/alpha`);
    expect(res.body).toEqual({
      apiVersion: 'v1',
      kind: 'ClusterRegistration',
      metadata: { name: 'alpha', namespace: 'default', createdAt: expect.stringMatching(ISO) },
      spec: {
        displayName: 'Cluster alpha',
        kubeconfigSecret: 'cluster-alpha-kubeconfig',
        tier: 'standard',
        region: 'eu-west-1',
      },
      status: {
        phase: 'Pending',
        kubernetesVersion: '',
        nodeCount: 0,
        namespaceCount: 0,
        activeIssues: 0,
        activeRemediations: 0,
        resourceUsage: { cpuCapacity: '0', cpuUsed: '0', memoryCapacity: '0', memoryUsed: '0' },
      },
    });
    expect(res.text).not.toContain(TOKEN);

    const got = await s.call('GET', '/clusters/alpha', { token: s.tokens.viewer });
    expect(got.status).toBe(200);
    expect(got.body.metadata).toEqual(res.body.metadata);
    expect(got.text).not.toContain(TOKEN);

    // both workflows run, started with the name only
    for (const id of [clusterHealthWorkflowId('alpha'), clusterWatchWorkflowId('alpha')]) {
      const d = await s.client.workflow.getHandle(id).describe();
      expect(d.status.name).toBe('RUNNING');
    }
  });

  it('accepts a token + server + CA instead of a kubeconfig, in another namespace', async () => {
    const res = await register(
      'beta',
      {
        kubeconfig: undefined,
        credentials: {
          server: 'https://127.0.0.1:1',
          token: TOKEN,
          caData: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n',
        },
        tier: 'critical',
      },
      { namespace: 'fleet' },
    );
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`${BASE_PATH}/clusters/beta?namespace=fleet`);
    expect(res.body.metadata.namespace).toBe('fleet');
    expect((await s.call('GET', '/clusters/beta?namespace=fleet')).status).toBe(200);
    expectError(await s.call('GET', '/clusters/beta'), 404, 'Cluster not found');
  });

  it.each([
    ['no credentials', body('c1', { kubeconfig: undefined }), 'exactly one of kubeconfig and credentials'],
    [
      'both credentials',
      body('c2', { credentials: { server: 'https://h:6443', token: 't' } }),
      'exactly one of kubeconfig and credentials',
    ],
    ['a name that is no DNS-1123 label', body('Not_A_Label'), 'body.metadata.name'],
    ['an unknown tier', body('c3', { tier: 'gold' }), 'body.spec.tier'],
    ['an unknown field', { ...body('c4'), status: {} }, 'status'],
    ['a kubeconfig that does not parse', body('c5', { kubeconfig: '[' }), 'does not parse'],
    [
      'an exec credential',
      body('c6', { kubeconfig: fakeKubeconfig().replace(`token: ${TOKEN}`, 'exec: {command: /bin/sh}') }),
      'exec',
    ],
    [
      'a server that is no URL',
      body('c7', { kubeconfig: undefined, credentials: { server: 'x', token: 't' } }),
      'server',
    ],
    [
      'a plain-http server that is not loopback',
      body('c8', { kubeconfig: undefined, credentials: { server: 'http://10.0.0.1:6443', token: 't' } }),
      'https://',
    ],
    [
      'a server URL with user:password@',
      body('c9', { kubeconfig: undefined, credentials: { server: 'https://u:pw-123@h:6443', token: 't' } }),
      'user or password',
    ],
    [
      'a kubeconfig server URL with user:password@',
      body('c10', { kubeconfig: fakeKubeconfig({ server: 'https://u:pw-123@h:6443' }) }),
      'user or password',
    ],
    [
      'a kubeconfig with a proxy-url',
      body('c11', {
        kubeconfig: fakeKubeconfig().replace('    server:', '    proxy-url: http://proxy.example:3128\n    server:'),
      }),
      'proxy-url',
    ],
  ])('400 for %s', async (_what, payload, fragment) => {
    const res = await s.call('POST', '/clusters', { body: payload });
    expectError(res, 400, 'Invalid request');
    expect(res.body.error.details).toContain(fragment);
    expect(res.text).not.toContain(TOKEN);
  });

  it('409 when the name is registered, in any namespace, and the first registration is untouched', async () => {
    expect((await register('gamma')).status).toBe(201);
    const before = await ClusterSecretModel.collection.findOne({ name: 'cluster-gamma-kubeconfig' });
    const again = await register('gamma', { kubeconfig: fakeKubeconfig({ token: 'another-token-123456' }) });
    expectError(again, 409, 'Cluster already exists');
    expect(again.body.error.details).toContain('gamma');
    expectError(await register('gamma', {}, { namespace: 'other' }), 409, 'Cluster already exists');
    expect(await ClusterSecretModel.collection.findOne({ name: 'cluster-gamma-kubeconfig' })).toEqual(before);
  });

  it('only admins register and delete; every role reads', async () => {
    for (const token of [s.tokens.viewer, s.tokens.operator]) {
      expectError(await s.call('POST', '/clusters', { token, body: body('delta') }), 403, 'Forbidden');
      expectError(await s.call('DELETE', '/clusters/alpha', { token }), 403, 'Forbidden');
    }
    expect((await s.call('GET', '/federation/clusters', { token: s.tokens.viewer })).status).toBe(200);
    expect((await s.call('GET', '/clusters/alpha', { token: s.tokens.operator })).status).toBe(200);
  });
});

describe('GET /clusters/{name}', () => {
  it('404 Cluster not found for an unknown name or another namespace', async () => {
    expectError(await s.call('GET', '/clusters/nope'), 404, 'Cluster not found');
    expectError(await s.call('GET', '/clusters/alpha?namespace=elsewhere'), 404, 'Cluster not found');
  });
});

describe('GET /federation/clusters', () => {
  beforeAll(async () => {
    for (const [name, tier] of [
      ['list-c', 'non-critical'],
      ['list-a', 'critical'],
      ['list-b', 'critical'],
    ])
      expect((await register(name, { tier })).status).toBe(201);
  });

  it('lists every field, sorted by name, with tier filter and paging', async () => {
    const all = await s.call('GET', '/federation/clusters?pageSize=100');
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ apiVersion: 'v1', kind: 'ClusterRegistrationList' });
    const names = all.body.items.map((i: { name: string }) => i.name);
    expect(names).toEqual([...names].sort());
    expect(all.body.metadata).toEqual({ totalCount: names.length, page: 1, pageSize: 100 });
    expect(all.body.items.find((i: { name: string }) => i.name === 'list-a')).toEqual({
      name: 'list-a',
      namespace: 'default',
      displayName: 'Cluster list-a',
      tier: 'critical',
      region: 'eu-west-1',
      connected: false,
      version: '',
      nodeCount: 0,
      activeIssues: 0,
      ...(all.body.items.find((i: { name: string }) => i.name === 'list-a').lastHealthCheck && {
        lastHealthCheck: expect.stringMatching(ISO),
      }),
      creationTimestamp: expect.stringMatching(ISO),
    });
    expect(all.text).not.toContain(TOKEN);

    const critical = await s.call('GET', '/federation/clusters?tier=critical&pageSize=1&page=2');
    expect(critical.status).toBe(200);
    const criticalNames = all.body.items
      .filter((i: { tier: string }) => i.tier === 'critical')
      .map((i: { name: string }) => i.name);
    expect(critical.body.metadata).toEqual({ totalCount: criticalNames.length, page: 2, pageSize: 1 });
    expect(critical.body.items.map((i: { name: string }) => i.name)).toEqual([criticalNames[1]]);

    expectError(await s.call('GET', '/federation/clusters?tier=gold'), 400, 'Invalid request');
    expectError(await s.call('GET', '/federation/clusters?pageSize=101'), 400, 'Invalid request');
    expectError(await s.call('GET', '/federation/clusters?page=0'), 400, 'Invalid request');
  });
});

describe('registration rollback', () => {
  it('a start that fails after Temporal took the workflows: both are cancelled, nothing is kept, 503', async () => {
    // Temporal accepts the watch workflow but the answer is lost (a deadline exceeded after the
    // server acted): the registration fails after both workflows started.
    const lostAnswer = new Proxy(s.client.workflow, {
      get(target, prop, receiver) {
        if (prop !== 'start') return Reflect.get(target, prop, receiver);
        return async (...args: Parameters<Client['workflow']['start']>) => {
          const handle = await target.start(...args);
          if (String(args[1].workflowId).startsWith('cluster-watch-'))
            throw Object.assign(new Error('deadline exceeded'), { name: 'ServiceError' });
          return handle;
        };
      },
    });
    const client = new Proxy(s.client, {
      get: (target, prop, receiver) => (prop === 'workflow' ? lostAnswer : Reflect.get(target, prop, receiver)),
    });
    const input = clusterRegistrationSchema.parse(body('rollback'));
    const actor = { user: 'admin-user', role: 'admin' as const, sourceIP: '127.0.0.1', userAgent: 'test' };
    await expect(registerCluster({ client, taskQueue: s.wf.taskQueue }, input, actor)).rejects.toMatchObject({
      status: 503,
    });
    // Each ends: Cancelled, or Completed when its check already saw the registration gone (the
    // cancel and the delete race in the workflow); either way a cancel was requested of both.
    for (const id of [clusterHealthWorkflowId('rollback'), clusterWatchWorkflowId('rollback')]) {
      const handle = s.client.workflow.getHandle(id);
      await s.eventually(
        async () => (await handle.describe()).status.name,
        (status) => status !== 'RUNNING',
        120_000,
      );
      const { events } = await handle.fetchHistory();
      expect({ id, cancelRequested: events?.some((e) => e.workflowExecutionCancelRequestedEventAttributes) }).toEqual({
        id,
        cancelRequested: true,
      });
    }
    expectError(await s.call('GET', '/clusters/rollback'), 404, 'Cluster not found');
    expect(await ClusterSecretModel.collection.findOne({ name: 'cluster-rollback-kubeconfig' })).toBeNull();
    // the same request then succeeds
    expect((await register('rollback')).status).toBe(201);
  }, 180_000);
});

describe('the audit of a registration', () => {
  it('records the server as scheme://host:port/path only (no query, which may carry a signature)', async () => {
    const server = 'https://10.9.8.7:6443/k8s/clusters/c-1';
    const kubeconfig = fakeKubeconfig({ server: `${server}?sig=query-secret-77` });
    expect((await register('audited', { kubeconfig })).status).toBe(201);
    const record = await AuditRecordModel.findOne({ action: 'cluster.register', resource: 'audited' }).lean();
    expect(record?.details).toMatchObject({ server, credentialsForm: 'kubeconfig' });
    expect(JSON.stringify(record)).not.toContain('query-secret-77');
  });
});

describe('DELETE /clusters/{name}', () => {
  it('204: workflows cancelled, record and secret gone, audited; then 404', async () => {
    expect((await register('epsilon')).status).toBe(201);
    const res = await s.call('DELETE', '/clusters/epsilon');
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expectError(await s.call('GET', '/clusters/epsilon'), 404, 'Cluster not found');
    expect(await ClusterSecretModel.collection.findOne({ name: 'cluster-epsilon-kubeconfig' })).toBeNull();
    for (const id of [clusterHealthWorkflowId('epsilon'), clusterWatchWorkflowId('epsilon')])
      await s.eventually(
        async () => (await s.client.workflow.getHandle(id).describe()).status.name,
        (status) => status !== 'RUNNING',
      );
    expectError(await s.call('DELETE', '/clusters/epsilon'), 404, 'Cluster not found');
    expectError(await s.call('DELETE', '/clusters/alpha?namespace=elsewhere'), 404, 'Cluster not found');

    const audit = await s.call('GET', '/audit?pageSize=200');
    const actions = audit.body.items
      .filter((r: { resource: string }) => r.resource === 'epsilon')
      .map((r: { action: string; resourceType: string; user: string }) => [r.action, r.resourceType, r.user]);
    expect(actions).toEqual(
      expect.arrayContaining([
        ['cluster.register', 'Cluster', 'admin-user'],
        ['cluster.delete', 'Cluster', 'admin-user'],
      ]),
    );
    expect(audit.text).not.toContain(TOKEN);

    // the name is free again
    expect((await register('epsilon')).status).toBe(201);
  });
});

describe('ensureClusterWorkflows (worker start)', () => {
  it('restarts lost workflows of registered clusters and registers local from KUBECONFIG', async () => {
    expect((await register('zeta')).status).toBe(201);
    const health = s.client.workflow.getHandle(clusterHealthWorkflowId('zeta'));
    await health.terminate('lost');
    const names = await ensureClusterWorkflows(
      { client: s.client, taskQueue: s.wf.taskQueue },
      { KUBECONFIG: '/nonexistent/kubeconfig' },
    );
    expect(names).toEqual(expect.arrayContaining(['zeta', 'local']));
    expect((await s.client.workflow.getHandle(clusterHealthWorkflowId('zeta')).describe()).status.name).toBe('RUNNING');

    const local = await s.call('GET', '/clusters/local');
    expect(local.status).toBe(200);
    expect(local.body.spec).toMatchObject({ kubeconfigSecret: 'KUBECONFIG', displayName: 'local (KUBECONFIG)' });
    // idempotent: a second start changes nothing
    await ensureClusterWorkflows({ client: s.client, taskQueue: s.wf.taskQueue }, { KUBECONFIG: '/other' });
    expect((await s.call('GET', '/clusters/local')).body.metadata).toEqual(local.body.metadata);
  });
});
