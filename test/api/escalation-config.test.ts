import { mkdtempSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import path from 'path';
import { connectStore } from '../../cli/services';
import { ConfigError, parseConfig, type Config } from '../../config/env';
import { BUILTIN_DEFAULT_POLICY, BUILTIN_NONE_POLICY } from '../../domain/escalation-policy';
import { escalationFileSchema, type EscalationFile } from '../../contracts/escalation';
import {
  getPolicy,
  getSchedule,
  listPolicies,
  listSchedules,
  maintenanceAt,
  provisionEscalationFile,
} from '../../store/escalation-config';
import { AuditRecordModel, EscalationConfigModel } from '../../store/models';
import { useApi, type ApiResponse } from '../harness/api';
import { TEST_SECRET_KEY } from '../harness/mongo';

/**
 * Escalation configuration over the API and from FOGHORN_ESCALATION_FILE (issue 11), against the
 * real MongoDB-wire server. Secrets (routing keys, webhook URL paths, signing secrets) must never
 * appear in an answer, an audit record or a stored document in clear.
 */

let api: Awaited<ReturnType<typeof useApi>>;

beforeAll(async () => {
  api = await useApi();
}, 120_000);

afterAll(async () => {
  await api?.stop();
});

const ROUTING_KEY = 'R0uT1nGkEy0123456789abcdef012345';
const SLACK_PATH = '/services/T000/B000/sLaCkToKeN';
const SLACK_URL = `https://hooks.slack.com${SLACK_PATH}`;
const WEBHOOK_SECRET = 'whsec_c2lnbmluZy1zZWNyZXQtdmFsdWU=';
const WEBHOOK_URL = 'https://hooks.example.com:8443/in/w3bh00kP4th';
const SECRETS = [ROUTING_KEY, SLACK_PATH, 'sLaCkToKeN', WEBHOOK_SECRET, 'w3bh00kP4th'];

/** Every answer of this file, to check none carries a secret. */
const answers: string[] = [];

async function call(method: string, p: string, init: Parameters<typeof api.call>[2] = {}): Promise<ApiResponse> {
  const res = await api.call(method, p, init);
  answers.push(res.text, JSON.stringify([...res.headers]));
  return res;
}

function expectError(res: ApiResponse, status: number, message: string, ...fragments: string[]): void {
  expect({ status: res.status, body: res.body }).toEqual({
    status,
    body: { apiVersion: 'v1', kind: 'Error', error: { code: status, message, details: expect.any(String) } },
  });
  for (const f of fragments) expect(res.body.error.details).toContain(f);
}

const schedule = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  start: '2026-01-05T09:00:00Z',
  shift: '24h',
  people: [
    { name: 'alice', targets: [{ channel: 'slack', url: SLACK_URL }] },
    { name: 'bob', targets: [{ channel: 'pagerduty', routingKey: ROUTING_KEY }] },
    { name: 'carol', targets: [{ channel: 'webhook', url: WEBHOOK_URL, secret: WEBHOOK_SECRET }, { channel: 'chat' }] },
  ],
  ...extra,
});

const policy = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  levels: [
    { targets: [{ channel: 'pagerduty', routingKey: ROUTING_KEY }], escalateAfter: '5m' },
    {
      targets: [
        { channel: 'slack', url: SLACK_URL },
        { channel: 'webhook', url: WEBHOOK_URL, secret: WEBHOOK_SECRET },
      ],
    },
  ],
  ...extra,
});

async function create(p: string, body: unknown): Promise<ApiResponse> {
  const res = await call('POST', p, { body });
  expect(res.status).toBe(201);
  return res;
}

async function auditFor(resource: string) {
  return AuditRecordModel.find({ action: 'config.update', resource }).sort({ seq: 1 }).lean();
}

describe('escalation policies over the API', () => {
  it('creates, reads, lists, replaces and deletes a policy, showing targets as channel and host', async () => {
    const created = await create(
      '/escalation-policies',
      policy('payments', { priority: 10, match: { namespaces: ['payments'] } }),
    );
    expect(created.headers.get('location')).toBe('/api/v1/escalation-policies/payments');
    expect(created.body).toEqual({
      apiVersion: 'v1',
      kind: 'EscalationPolicy',
      metadata: {
        name: 'payments',
        source: 'api',
        createdAt: expect.stringMatching(/Z$/),
        updatedAt: created.body.metadata.createdAt,
      },
      spec: {
        description: '',
        priority: 10,
        match: { namespaces: ['payments'] },
        levels: [
          { targets: [{ channel: 'pagerduty', target: 'events.pagerduty.com' }], escalateAfter: '5m' },
          {
            targets: [
              { channel: 'slack', target: 'hooks.slack.com' },
              { channel: 'webhook', target: 'hooks.example.com:8443' },
            ],
            escalateAfter: '5m',
          },
        ],
      },
    });
    expect((await call('GET', '/escalation-policies/payments')).body).toEqual(created.body);

    const replaced = await call('PUT', '/escalation-policies/payments', {
      body: { levels: [{ targets: [{ channel: 'chat', chatId: 'ops' }] }], repeat: { every: '30m', times: 2 } },
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body.metadata).toMatchObject({ name: 'payments', createdAt: created.body.metadata.createdAt });
    expect(replaced.body.spec).toEqual({
      description: '',
      priority: 100,
      match: {},
      levels: [{ targets: [{ channel: 'chat', target: 'ops' }], escalateAfter: '5m' }],
      repeat: { every: '30m', times: 2 },
    });
    expect(await getPolicy('payments')).toMatchObject({ levels: [{ targets: [{ channel: 'chat', chatId: 'ops' }] }] });

    expect((await call('DELETE', '/escalation-policies/payments')).status).toBe(204);
    expectError(await call('GET', '/escalation-policies/payments'), 404, 'Escalation policy not found');
    expectError(
      await call('PUT', '/escalation-policies/payments', { body: { levels: [] } }),
      404,
      'Escalation policy not found',
    );
    expectError(await call('DELETE', '/escalation-policies/payments'), 404, 'Escalation policy not found');

    const audit = await auditFor('payments');
    expect(audit.map((r) => r.details)).toEqual([
      { kind: 'policy', name: 'payments', operation: 'create' },
      { kind: 'policy', name: 'payments', operation: 'replace' },
      { kind: 'policy', name: 'payments', operation: 'delete' },
    ]);
    expect(audit.map((r) => [r.user, r.resourceType])).toEqual(Array(3).fill(['admin-user', 'EscalationPolicy']));
  });

  it('lists policies in the order they are tried (priority, then creation), paged', async () => {
    await create('/escalation-policies', policy('late', { priority: 50 }));
    await create('/escalation-policies', policy('first', { priority: 5 }));
    await create('/escalation-policies', policy('tie', { priority: 50 }));
    const page1 = await call('GET', '/escalation-policies?pageSize=2');
    expect(page1.body).toMatchObject({
      kind: 'EscalationPolicyList',
      metadata: { totalCount: 3, page: 1, pageSize: 2 },
    });
    expect(page1.body.items.map((i: { name: string }) => i.name)).toEqual(['first', 'late']);
    const page2 = await call('GET', '/escalation-policies?pageSize=2&page=2');
    expect(page2.body.items.map((i: { name: string }) => i.name)).toEqual(['tie']);
    expect(page2.body.items[0]).toMatchObject({ name: 'tie', source: 'api', priority: 50, levels: expect.any(Array) });
    expect((await listPolicies()).map((p) => p.name)).toEqual(['first', 'late', 'tie']);
    expectError(await call('GET', '/escalation-policies?pageSize=101'), 400, 'Invalid request', 'query.pageSize');
    for (const name of ['late', 'first', 'tie']) await call('DELETE', `/escalation-policies/${name}`);
  });

  it('refuses bad bodies with 400 naming the field, and a taken name with 409', async () => {
    expectError(
      await call('POST', '/escalation-policies', {
        body: {
          name: 'bad',
          levels: [{ targets: [{ channel: 'pagerduty', routingKey: 'nope' }], escalateAfter: 'soon' }],
        },
      }),
      400,
      'Invalid request',
      'body.levels.0.targets.0.routingKey',
      'body.levels.0.escalateAfter',
    );
    expectError(
      await call('POST', '/escalation-policies', { body: policy('fast', { repeat: { every: '10s' } }) }),
      400,
      'Invalid request',
      'body.repeat.every: must be at least 1m',
    );
    await create('/escalation-policies', policy('taken'));
    expectError(
      await call('PUT', '/escalation-policies/taken', {
        body: { levels: [{ targets: [{ channel: 'chat' }], escalateAfter: '10ms' }] },
      }),
      400,
      'Invalid request',
      'body.levels.0.escalateAfter: must be at least 1s',
    );
    // A name no entry has is a 404 whatever the body (also one no entry could have).
    const body = { levels: [{ targets: [{ channel: 'chat' }], escalateAfter: '10ms' }] };
    expectError(await call('PUT', '/escalation-policies/anything', { body }), 404, 'Escalation policy not found');
    expectError(await call('PUT', '/escalation-policies/Not%20A%20Name', { body }), 404, 'Escalation policy not found');
    expectError(
      await call('POST', '/escalation-policies', { body: { ...policy('x'), extra: 1 } }),
      400,
      'Invalid request',
      'extra',
    );
    expectError(
      await call('POST', '/escalation-policies', { body: policy('taken') }),
      409,
      'Escalation policy already exists',
      'taken',
    );
    await call('DELETE', '/escalation-policies/taken');
  });

  it('answers the built-in default until one is stored, and never stores none', async () => {
    const builtin = await call('GET', '/escalation-policies/default');
    expect(builtin.body).toEqual({
      apiVersion: 'v1',
      kind: 'EscalationPolicy',
      metadata: { name: 'default', source: 'builtin' },
      spec: expect.objectContaining({ levels: expect.any(Array), repeat: { every: '30m' } }),
    });
    expect(builtin.body.spec.levels.map((l: { escalateAfter: string }) => l.escalateAfter)).toEqual([
      '5m',
      '10m',
      '30m',
    ]);
    expect((await call('GET', '/escalation-policies/none')).body.metadata).toEqual({ name: 'none', source: 'builtin' });
    expectError(await call('DELETE', '/escalation-policies/default'), 404, 'Escalation policy not found');

    await create('/escalation-policies', policy('default'));
    expect((await call('GET', '/escalation-policies/default')).body.metadata.source).toBe('api');
    expect((await getPolicy('default'))?.levels).toHaveLength(2);
    expect((await call('DELETE', '/escalation-policies/default')).status).toBe(204);
    expect(await getPolicy('default')).toEqual(BUILTIN_DEFAULT_POLICY);
    expect(await getPolicy('none')).toEqual(BUILTIN_NONE_POLICY);
    expect(await getPolicy('unknown')).toBeUndefined();

    expectError(
      await call('POST', '/escalation-policies', { body: policy('none') }),
      400,
      'Invalid request',
      'body.name: none is built in',
    );
    expectError(
      await call('PUT', '/escalation-policies/none', { body: { levels: [] } }),
      400,
      'Invalid request',
      'none is built in',
    );
    expectError(await call('DELETE', '/escalation-policies/none'), 400, 'Invalid request', 'none is built in');
  });

  it('is read by everyone (views hold no secret) and changed by admins only', async () => {
    for (const role of ['viewer', 'operator'] as const) {
      expect((await call('GET', '/escalation-policies', { token: api.tokens[role] })).status).toBe(200);
      expectError(
        await call('GET', '/maintenance-windows/x', { token: api.tokens[role] }),
        404,
        'Maintenance window not found',
      );
      expectError(
        await call('POST', '/oncall-schedules', { token: api.tokens[role], body: schedule('s') }),
        403,
        'Forbidden',
      );
      expectError(await call('DELETE', '/maintenance-windows/x', { token: api.tokens[role] }), 403, 'Forbidden');
    }
    expectError(await call('GET', '/escalation-policies', { token: null }), 401, 'Unauthorized');
  });
});

describe('schedules and the policies that page them', () => {
  it('refuses a policy naming an unknown schedule, and deleting a schedule a policy pages', async () => {
    expectError(
      await call('POST', '/escalation-policies', {
        body: { name: 'sched', levels: [{ targets: [{ channel: 'chat' }, { schedule: 'primary' }] }] },
      }),
      400,
      'Invalid request',
      'body.levels.0.targets.1.schedule: no schedule named primary',
    );
    const created = await create('/oncall-schedules', schedule('primary'));
    expect(created.headers.get('location')).toBe('/api/v1/oncall-schedules/primary');
    expect(created.body).toMatchObject({
      kind: 'OnCallSchedule',
      metadata: { name: 'primary', source: 'api' },
      spec: {
        shift: '24h',
        overrides: [],
        people: [
          { name: 'alice', targets: [{ channel: 'slack', target: 'hooks.slack.com' }] },
          { name: 'bob', targets: [{ channel: 'pagerduty', target: 'events.pagerduty.com' }] },
          {
            name: 'carol',
            targets: [
              { channel: 'webhook', target: 'hooks.example.com:8443' },
              { channel: 'chat', target: 'home channel' },
            ],
          },
        ],
      },
    });
    await create('/escalation-policies', { name: 'sched', levels: [{ targets: [{ schedule: 'primary' }] }] });
    expect((await call('GET', '/escalation-policies/sched')).body.spec.levels[0].targets).toEqual([
      { channel: 'schedule', target: 'primary' },
    ]);
    expectError(await call('DELETE', '/oncall-schedules/primary'), 409, 'Schedule in use', 'sched');
    expectError(
      await call('PUT', '/escalation-policies/sched', { body: { levels: [{ targets: [{ schedule: 'secondary' }] }] } }),
      400,
      'Invalid request',
      'body.levels.0.targets.0.schedule: no schedule named secondary',
    );
    expect((await call('DELETE', '/escalation-policies/sched')).status).toBe(204);
    expect((await call('DELETE', '/oncall-schedules/primary')).status).toBe(204);
    expectError(await call('GET', '/oncall-schedules/primary'), 404, 'Schedule not found');
  });

  it('validates schedules: people, overrides, shift', async () => {
    expectError(
      await call('POST', '/oncall-schedules', {
        body: schedule('s', {
          shift: '30s',
          overrides: [{ person: 'zed', from: '2026-01-06T00:00:00Z', to: '2026-01-06T01:00:00Z' }],
        }),
      }),
      400,
      'Invalid request',
      'body.shift: must be at least 1m',
      "body.overrides.0.person: must be one of the schedule's people",
    );
    expectError(
      await call('PUT', '/oncall-schedules/s', { body: { start: 'yesterday', people: [] } }),
      400,
      'Invalid request',
      'body.start',
      'body.people',
    );
  });

  it('answers who is on call, overrides first, at a given time or now (operators may ask)', async () => {
    await create(
      '/oncall-schedules',
      schedule('primary', {
        overrides: [{ person: 'carol', from: '2026-01-06T12:00:00Z', to: '2026-01-06T14:00:00Z' }],
      }),
    );
    await create('/oncall-schedules', {
      name: 'secondary',
      start: '2026-01-01T00:00:00Z',
      people: [{ name: 'dave', targets: [{ channel: 'chat', chatId: 'dave-dm' }] }],
    });
    const operator = { token: api.tokens.operator };
    const at10 = await call('GET', '/oncall?at=2026-01-06T10:00:00Z', operator);
    expect(at10.status).toBe(200);
    expect(at10.body).toEqual({
      apiVersion: 'v1',
      kind: 'OnCallList',
      items: [
        {
          schedule: 'primary',
          person: 'bob',
          since: '2026-01-06T09:00:00.000Z',
          until: '2026-01-07T09:00:00.000Z',
          override: false,
          channels: [{ channel: 'pagerduty', target: 'events.pagerduty.com' }],
        },
        {
          schedule: 'secondary',
          person: 'dave',
          since: '2026-01-01T00:00:00.000Z',
          until: '2026-01-08T00:00:00.000Z',
          override: false,
          channels: [{ channel: 'chat', target: 'dave-dm' }],
        },
      ],
    });
    const at13 = await call('GET', '/oncall?schedule=primary&at=2026-01-06T13:00:00%2B00:00', operator);
    expect(at13.body.items).toEqual([
      {
        schedule: 'primary',
        person: 'carol',
        since: '2026-01-06T12:00:00.000Z',
        until: '2026-01-06T14:00:00.000Z',
        override: true,
        channels: [
          { channel: 'webhook', target: 'hooks.example.com:8443' },
          { channel: 'chat', target: 'home channel' },
        ],
      },
    ]);
    const now = await call('GET', '/oncall?schedule=secondary', operator);
    expect(now.body.items).toEqual([expect.objectContaining({ schedule: 'secondary', person: 'dave' })]);
    expect(Date.parse(now.body.items[0].since)).toBeLessThanOrEqual(Date.now());
    expect(Date.parse(now.body.items[0].until)).toBeGreaterThan(Date.parse(now.body.items[0].since));

    expectError(await call('GET', '/oncall?schedule=nobody', operator), 404, 'Schedule not found', 'nobody');
    expectError(await call('GET', '/oncall?at=tomorrow', operator), 400, 'Invalid request', 'query.at');
    expect((await call('GET', '/oncall', { token: api.tokens.viewer })).status).toBe(200);
    expect((await listSchedules()).map((s) => s.name)).toEqual(['primary', 'secondary']);
    for (const name of ['primary', 'secondary']) await call('DELETE', `/oncall-schedules/${name}`);
  });
});

describe('maintenance windows', () => {
  it('are created, listed by start, replaced and deleted; maintenanceAt finds the one holding a namespace', async () => {
    const w = (name: string, namespace: string, from: string, to: string) => ({ name, namespace, from, to });
    const created = await create('/maintenance-windows', {
      ...w('db-upgrade', 'payments', '2026-02-01T02:00:00Z', '2026-02-01T04:00:00Z'),
      reason: 'DB upgrade',
    });
    expect(created.body).toEqual({
      apiVersion: 'v1',
      kind: 'MaintenanceWindow',
      metadata: expect.objectContaining({ name: 'db-upgrade', source: 'api' }),
      spec: { namespace: 'payments', from: '2026-02-01T02:00:00Z', to: '2026-02-01T04:00:00Z', reason: 'DB upgrade' },
    });
    await create('/maintenance-windows', w('everything', '*', '2026-02-01T00:00:00Z', '2026-02-01T03:00:00Z'));
    const list = await call('GET', '/maintenance-windows');
    expect(list.body.items.map((i: { name: string }) => i.name)).toEqual(['everything', 'db-upgrade']);

    expect((await maintenanceAt('payments', new Date('2026-02-01T02:30:00Z')))?.name).toBe('db-upgrade');
    expect((await maintenanceAt('shop', new Date('2026-02-01T02:30:00Z')))?.name).toBe('everything');
    expect((await maintenanceAt('payments', new Date('2026-02-01T01:00:00Z')))?.name).toBe('everything');
    expect(await maintenanceAt('payments', new Date('2026-02-01T04:00:00Z'))).toBeUndefined();

    expectError(
      await call('PUT', '/maintenance-windows/db-upgrade', {
        body: { namespace: 'payments', from: '2026-02-01T05:00:00Z', to: '2026-02-01T04:00:00Z' },
      }),
      400,
      'Invalid request',
      'body.to: must be after from',
    );
    const moved = await call('PUT', '/maintenance-windows/db-upgrade', {
      body: { namespace: 'payments', from: '2026-02-02T02:00:00Z', to: '2026-02-02T04:00:00Z' },
    });
    expect(moved.status).toBe(200);
    expect(await maintenanceAt('payments', new Date('2026-02-01T03:30:00Z'))).toBeUndefined();
    expect((await maintenanceAt('payments', new Date('2026-02-02T03:30:00Z')))?.reason).toBe('');
    for (const name of ['db-upgrade', 'everything'])
      expect((await call('DELETE', `/maintenance-windows/${name}`)).status).toBe(204);
    expect((await auditFor('everything')).map((r) => r.details)).toEqual([
      { kind: 'maintenance', name: 'everything', operation: 'create' },
      { kind: 'maintenance', name: 'everything', operation: 'delete' },
    ]);
  });
});

describe('provisioning from FOGHORN_ESCALATION_FILE', () => {
  const file = (f: unknown): EscalationFile => escalationFileSchema.parse(f);
  const v1 = file({
    policies: [policy('filed', { priority: 1 }), { name: 'paged', levels: [{ targets: [{ schedule: 'rota' }] }] }],
    schedules: [schedule('rota')],
    maintenanceWindows: [{ name: 'freeze', namespace: '*', from: '2026-12-24T00:00:00Z', to: '2026-12-27T00:00:00Z' }],
  });

  it('creates, updates and removes file entries, keeps api ones, and is idempotent under concurrency', async () => {
    await create('/escalation-policies', policy('by-api'));
    const results = await Promise.all([
      provisionEscalationFile(v1),
      provisionEscalationFile(v1),
      provisionEscalationFile(v1),
    ]);
    // Each entry was created by exactly one of the racing processes.
    expect(results.reduce((n, r) => n + r.created, 0)).toBe(4);
    expect(await provisionEscalationFile(v1)).toEqual({ created: 0, updated: 0, removed: 0 });
    expect(await EscalationConfigModel.countDocuments({ source: 'file' })).toBe(4);

    const v2 = file({
      policies: [policy('filed', { priority: 1, description: 'changed' })],
      maintenanceWindows: v1.maintenanceWindows,
    });
    expect(await provisionEscalationFile(v2)).toEqual({ created: 0, updated: 1, removed: 2 });
    expect((await getPolicy('filed'))?.description).toBe('changed');
    expect(await getSchedule('rota')).toBeUndefined();
    expect((await listPolicies()).map((p) => p.name)).toEqual(['filed', 'by-api']);
    expect((await call('GET', '/escalation-policies/by-api')).body.metadata.source).toBe('api');

    // A file entry with an api entry's name takes it over.
    const v3 = file({ policies: [...v2.policies, policy('by-api', { priority: 7 })] });
    expect(await provisionEscalationFile(v3)).toEqual({ created: 0, updated: 1, removed: 1 });
    expect((await call('GET', '/escalation-policies/by-api')).body.metadata.source).toBe('file');
  });

  it('keeps file entries read-only over the API (409), readable like any other', async () => {
    const got = await call('GET', '/escalation-policies/filed');
    expect(got.body.metadata.source).toBe('file');
    expectError(
      await call('PUT', '/escalation-policies/filed', { body: { levels: [] } }),
      409,
      'Provisioned from FOGHORN_ESCALATION_FILE',
      'edit the file',
    );
    expectError(await call('DELETE', '/escalation-policies/filed'), 409, 'Provisioned from FOGHORN_ESCALATION_FILE');
    expectError(
      await call('POST', '/escalation-policies', { body: policy('filed') }),
      409,
      'Escalation policy already exists',
      'source file',
    );
    expect((await call('GET', '/escalation-policies/filed')).body).toEqual(got.body);
    expect(await provisionEscalationFile(file({}))).toEqual({ created: 0, updated: 0, removed: 2 });
    expect(await EscalationConfigModel.countDocuments({})).toBe(0);
  });

  describe('at start (connectStore)', () => {
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(path.join(tmpdir(), 'foghorn-escalation-'));
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('provisions a good file once connected', async () => {
      const good = path.join(dir, 'good.yaml');
      writeFileSync(
        good,
        [
          'policies:',
          '  - name: from-start',
          `    levels: [{ targets: [{ channel: pagerduty, routingKey: ${ROUTING_KEY} }] }]`,
          'maintenanceWindows:',
          '  - { name: start-freeze, namespace: "*", from: 2026-12-24T00:00:00Z, to: 2026-12-27T00:00:00Z }',
        ].join('\n'),
      );
      await connectStore(
        api.mongo.uri,
        parseConfig({ FOGHORN_ESCALATION_FILE: good, FOGHORN_SECRET_KEY: TEST_SECRET_KEY }),
      );
      expect((await getPolicy('from-start'))?.levels[0].targets).toEqual([
        { channel: 'pagerduty', routingKey: ROUTING_KEY },
      ]);
      expect((await maintenanceAt('shop', new Date('2026-12-25T00:00:00Z')))?.name).toBe('start-freeze');
      expect((await call('GET', '/maintenance-windows/start-freeze')).body.metadata.source).toBe('file');
      expect(await provisionEscalationFile(escalationFileSchema.parse({}))).toEqual({
        created: 0,
        updated: 0,
        removed: 2,
      });
    });

    it('refuses a bad file before connecting, one line per problem naming the field', async () => {
      const bad = path.join(dir, 'bad.yaml');
      writeFileSync(
        bad,
        `policies:\n  - name: p\n    levels: [{ targets: [{ channel: pagerduty, routingKey: ${ROUTING_KEY.slice(0, 5)} }] }]\n`,
      );
      // Nothing listens there: the file is refused before any connection is tried.
      const config = { FOGHORN_ESCALATION_FILE: bad } as Config;
      const err = await connectStore('mongodb://127.0.0.1:9/none', config).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).problems).toEqual([
        `FOGHORN_ESCALATION_FILE ${bad}: policies.0.levels.0.targets.0.routingKey: must be a PagerDuty integration (routing) key`,
      ]);
    });
  });
});

describe('secrets', () => {
  it('never appear in an answer, an audit record or a stored document', async () => {
    // Leave something stored to look at.
    await create('/oncall-schedules', schedule('kept'));
    await create(
      '/escalation-policies',
      policy('kept', {
        levels: [{ targets: [{ schedule: 'kept' }, { channel: 'pagerduty', routingKey: ROUTING_KEY }] }],
      }),
    );
    answers.push((await call('GET', '/escalation-policies')).text, (await call('GET', '/oncall-schedules')).text);
    answers.push((await call('GET', '/audit?pageSize=200')).text);
    const audit = JSON.stringify(await AuditRecordModel.find({}).lean());
    const stored = JSON.stringify(await EscalationConfigModel.find({}).lean());
    expect(stored).toContain('ciphertext');
    for (const text of [...answers, audit, stored]) for (const secret of SECRETS) expect(text).not.toContain(secret);
    expect(answers.length).toBeGreaterThan(50);
  });
});
