import { type RunbookInput, type RunbookSpec } from '../../domain/runbook';
import { runbookSpecSchema } from '../../contracts/runbooks';
import { BUILTIN_RUNBOOKS } from '../../contracts/runbooks';
import { RunbookModel } from '../../store/models';
import { recordRunbookExecution, seedBuiltinRunbooks } from '../../store/runbooks';
import { BASE_PATH, useApi, type ApiResponse } from '../harness/api';

let api: Awaited<ReturnType<typeof useApi>>;

beforeAll(async () => {
  api = await useApi();
  await seedBuiltinRunbooks();
}, 120_000);

afterAll(async () => {
  await api?.stop();
});

const BUILTIN_NAMES = BUILTIN_RUNBOOKS.map((r) => r.name).sort();
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** A minimal valid create body; each test changes what it needs. */
function spec(name: string, overrides: Partial<Record<keyof RunbookInput, unknown>> = {}): RunbookInput {
  return {
    name,
    category: 'custom',
    description: 'A runbook created by the API tests.',
    version: '1.0.0',
    severity: ['high'],
    steps: [
      { type: 'RestartDeployment', params: {}, description: 'roll the pods' },
      { type: 'HttpRequest', params: { url: 'https://status.example.com/health', expectStatus: 200 } },
      { type: 'Wait', params: { duration: '30s' } },
    ],
    ...overrides,
  } as RunbookInput;
}

/** The spec part of a create body, as the server stores it (defaults applied, no name). */
function expectedSpec(input: RunbookInput) {
  const { name: _name, ...rest } = runbookSpecSchema.parse(input);
  return rest;
}

/** Every error is the envelope with code = status (DESIGN §4). */
function expectError(res: ApiResponse, status: number, message: string): void {
  expect({ status: res.status, body: res.body }).toEqual({
    status,
    body: { apiVersion: 'v1', kind: 'Error', error: { code: status, message, details: expect.any(String) } },
  });
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
}

function expectInvalid(res: ApiResponse, ...fragments: string[]): void {
  expectError(res, 400, 'Invalid request');
  for (const f of fragments) expect(res.body.error.details).toContain(f);
}

async function listNames(query: string): Promise<string[]> {
  const res = await api.call('GET', `/runbooks?pageSize=100${query ? `&${query}` : ''}`, { token: api.tokens.viewer });
  expect(res.status).toBe(200);
  expect(res.body.metadata.totalCount).toBe(res.body.items.length);
  return res.body.items.map((i: { name: string }) => i.name);
}

async function create(input: RunbookInput): Promise<ApiResponse> {
  const res = await api.call('POST', '/runbooks', { body: input });
  expect(res.status).toBe(201);
  return res;
}

async function auditFor(action: string, resource: string) {
  const res = await api.call('GET', `/audit?action=${action}&resource=${resource}`);
  expect(res.status).toBe(200);
  return res.body.items;
}

describe('seeding the built-in runbooks', () => {
  it('gives exactly the built-ins once, however often it runs', async () => {
    const again = await seedBuiltinRunbooks();
    expect(again.inserted).toEqual([]);
    expect(again.existing.sort()).toEqual(BUILTIN_NAMES);
    await seedBuiltinRunbooks();
    expect(await listNames('')).toEqual(BUILTIN_NAMES);
    expect(await RunbookModel.countDocuments()).toBe(BUILTIN_NAMES.length);
  });

  it('is safe when several processes seed at once', async () => {
    await RunbookModel.deleteMany({});
    const results = await Promise.all([seedBuiltinRunbooks(), seedBuiltinRunbooks(), seedBuiltinRunbooks()]);
    // Every built-in was written by exactly one of the racing seeders.
    expect(results.flatMap((r) => r.inserted).sort()).toEqual(BUILTIN_NAMES);
    for (const r of results) expect([...r.inserted, ...r.existing].sort()).toEqual(BUILTIN_NAMES);
    expect(await listNames('')).toEqual(BUILTIN_NAMES);
  });

  it('never overwrites an admin edit to a built-in runbook', async () => {
    const name = 'network-restart-pods';
    const builtin = BUILTIN_RUNBOOKS.find((r) => r.name === name) as RunbookSpec;
    const { name: _n, ...update } = builtin;
    const edited = { ...update, description: 'Edited by an admin.', version: '1.0.1' };
    const put = await api.call('PUT', `/runbooks/${name}`, { body: edited });
    expect(put.status).toBe(200);

    const seeded = await seedBuiltinRunbooks();
    expect(seeded.inserted).toEqual([]);
    const get = await api.call('GET', `/runbooks/${name}`);
    expect(get.body).toEqual(put.body); // description, version and updatedAt all kept
    expect(get.body.spec).toMatchObject({ description: 'Edited by an admin.', version: '1.0.1' });
  });

  it('stores the built-ins as specified, with no usage yet (null figures, not 0)', async () => {
    const builtin = BUILTIN_RUNBOOKS.find((r) => r.name === 'oomkill-raise-memory-limit') as RunbookSpec;
    const res = await api.call('GET', '/runbooks?category=oomkill');
    expect(res.body.items).toEqual([
      {
        name: builtin.name,
        category: builtin.category,
        description: builtin.description,
        version: builtin.version,
        automated: builtin.automated,
        approvalRequired: builtin.approvalRequired,
        severity: builtin.severity,
        stepsCount: builtin.steps.length,
        avgExecutionTime: null,
        successRate: null,
        createdAt: expect.stringMatching(ISO),
        steps: builtin.steps,
        targets: builtin.targets,
        maxAttempts: builtin.maxAttempts,
        reviewPending: false,
      },
    ]);
    expect(res.body.items[0]).not.toHaveProperty('lastUsed');
  });
});

describe('GET /runbooks filters', () => {
  const extras = [
    spec('manual-low-custom', { automated: false, severity: ['low'] }),
    spec('manual-oom-review', { category: 'oomkill', automated: false, severity: ['critical', 'low'] }),
    spec('auto-disk-medium', { category: 'disk', severity: ['medium'] }),
  ];
  const all = [...BUILTIN_RUNBOOKS, ...extras.map((e) => runbookSpecSchema.parse(e))];
  const expected = (keep: (r: RunbookSpec) => boolean) =>
    all
      .filter(keep)
      .map((r) => r.name)
      .sort();

  beforeAll(async () => {
    for (const e of extras) await create(e);
  });
  afterAll(async () => {
    for (const e of extras) expect((await api.call('DELETE', `/runbooks/${e.name}`)).status).toBe(204);
  });

  it('lists every runbook sorted by name without filters', async () => {
    expect(await listNames('')).toEqual(expected(() => true));
  });

  it.each(['oomkill', 'crashloop', 'latency', 'scaling', 'disk', 'network', 'custom'])(
    'filters by category=%s',
    async (category) => {
      expect(await listNames(`category=${category}`)).toEqual(expected((r) => r.category === category));
    },
  );

  it.each(['critical', 'high', 'medium', 'low'])('filters by target severity=%s', async (severity) => {
    expect(await listNames(`severity=${severity}`)).toEqual(
      expected((r) => (r.severity as string[]).includes(severity)),
    );
  });

  it('filters by automated', async () => {
    expect(await listNames('automated=true')).toEqual(expected((r) => r.automated));
    expect(await listNames('automated=false')).toEqual(['manual-low-custom', 'manual-oom-review']);
  });

  it('combines filters', async () => {
    expect(await listNames('category=oomkill&automated=false')).toEqual(['manual-oom-review']);
    expect(await listNames('category=oomkill&automated=true')).toEqual(['oomkill-raise-memory-limit']);
    expect(await listNames('category=crashloop&severity=medium')).toEqual(['imagepull-rollback']);
    expect(await listNames('severity=low&automated=false')).toEqual(['manual-low-custom', 'manual-oom-review']);
    expect(await listNames('severity=low&automated=true')).toEqual([]);
    expect(await listNames('category=disk&severity=medium&automated=true')).toEqual([
      'auto-disk-medium',
      'disk-pressure-cleanup',
    ]);
    for (const category of ['oomkill', 'latency', 'disk'])
      for (const severity of ['critical', 'medium', 'low'])
        for (const automated of [true, false])
          expect(await listNames(`category=${category}&severity=${severity}&automated=${automated}`)).toEqual(
            expected(
              (r) =>
                r.category === category && (r.severity as string[]).includes(severity) && r.automated === automated,
            ),
          );
  });
});

describe('GET /runbooks pagination and query validation', () => {
  const total = BUILTIN_NAMES.length;

  it('defaults to page 1 of 20', async () => {
    const res = await api.call('GET', '/runbooks');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      apiVersion: 'v1',
      kind: 'RunbookList',
      metadata: { totalCount: total, page: 1, pageSize: 20 },
    });
    expect(res.body.items).toHaveLength(total);
  });

  it('walks the pages in name order', async () => {
    const pages = await Promise.all([1, 2, 3].map((page) => api.call('GET', `/runbooks?page=${page}&pageSize=3`)));
    for (const [i, res] of pages.entries()) {
      expect(res.body.metadata).toEqual({ totalCount: total, page: i + 1, pageSize: 3 });
    }
    expect(pages[2].body.items).toHaveLength(total - 6);
    expect(pages.flatMap((p) => p.body.items.map((item: { name: string }) => item.name))).toEqual(BUILTIN_NAMES);
  });

  it('answers a page beyond the end with no items and the right total', async () => {
    const res = await api.call('GET', '/runbooks?page=99&pageSize=5');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      apiVersion: 'v1',
      kind: 'RunbookList',
      metadata: { totalCount: total, page: 99, pageSize: 5 },
      items: [],
    });
  });

  it('accepts pageSize 100 and refuses 101', async () => {
    const ok = await api.call('GET', '/runbooks?pageSize=100');
    expect(ok.status).toBe(200);
    expect(ok.body.metadata.pageSize).toBe(100);
    expectInvalid(await api.call('GET', '/runbooks?pageSize=101'), 'query.pageSize');
  });

  it.each([
    ['page=0', 'query.page'],
    ['page=-1', 'query.page'],
    ['page=1.5', 'query.page'],
    ['page=abc', 'query.page'],
    ['pageSize=0', 'query.pageSize'],
    ['automated=maybe', 'query.automated'],
    ['automated=TRUE', 'query.automated'],
    ['category=kernel-panic', 'query.category'],
    ['severity=urgent', 'query.severity'],
    ['category=disk&category=network', 'query.category'],
  ])('refuses %s with 400 naming the parameter', async (query, field) => {
    expectInvalid(await api.call('GET', `/runbooks?${query}`, { token: api.tokens.viewer }), field);
  });
});

describe('usage statistics', () => {
  it('reports executions, success rate, average duration and last use', async () => {
    const name = 'latency-scale-out';
    const t0 = new Date('2025-03-01T10:00:00.000Z');
    const t1 = new Date('2025-03-01T11:00:00.000Z');
    expect(await recordRunbookExecution(name, { success: true, durationMs: 90_000, at: t1 })).toBe(true);
    expect(await recordRunbookExecution(name, { success: false, durationMs: 30_000, at: t0 })).toBe(true); // older, finished later
    expect(await recordRunbookExecution(name, { success: true, durationMs: 60_000, at: t0 })).toBe(true);
    expect(await recordRunbookExecution('no-such-runbook', { success: true, durationMs: 1 })).toBe(false);

    const detail = await api.call('GET', `/runbooks/${name}`, { token: api.tokens.viewer });
    expect(detail.body.status).toEqual({
      stepsCount: 2,
      avgExecutionTime: '1m0s',
      successRate: 66.7,
      lastUsed: t1.toISOString(),
      executions: 3,
      reviewPending: false,
    });
    const list = await api.call('GET', '/runbooks?category=latency&severity=medium');
    expect(list.body.items).toHaveLength(1);
    expect(list.body.items[0]).toMatchObject({
      name,
      avgExecutionTime: '1m0s',
      successRate: 66.7,
      lastUsed: t1.toISOString(),
    });
  });
});

describe('authentication and roles', () => {
  const target = 'auth-target';
  const probe = 'auth-probe';
  const { name: _n, ...update } = runbookSpecSchema.parse(spec(target));
  // Every row has three entries: jest-each treats a missing one as a `done` callback.
  const routes: [string, string, unknown][] = [
    ['GET', '/runbooks', undefined],
    ['GET', `/runbooks/${target}`, undefined],
    ['POST', '/runbooks', spec(probe)],
    ['PUT', `/runbooks/${target}`, { ...update, version: '9.9.9' }],
    ['DELETE', `/runbooks/${target}`, undefined],
  ];

  beforeAll(async () => {
    await create(spec(target));
  });

  async function expectUntouched(): Promise<void> {
    expectError(await api.call('GET', `/runbooks/${probe}`), 404, 'Runbook not found');
    const get = await api.call('GET', `/runbooks/${target}`);
    expect(get.status).toBe(200);
    expect(get.body.spec.version).toBe('1.0.0');
    expect(await auditFor('runbook.update', target)).toEqual([]);
    expect(await auditFor('runbook.delete', target)).toEqual([]);
    expect(await auditFor('runbook.create', probe)).toEqual([]);
  }

  it.each(routes)('%s %s without a token is 401 with WWW-Authenticate', async (method, path, body) => {
    const res = await api.call(method, path, { token: null, body });
    expectError(res, 401, 'Unauthorized');
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
  });

  it.each(routes)('%s %s with a bad or malformed token is 401', async (method, path, body) => {
    const bad = await api.call(method, path, { token: 'fh_not-a-real-token', body });
    expectError(bad, 401, 'Unauthorized');
    expect(bad.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const basic = await api.call(method, path, {
      token: null,
      body,
      headers: { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` },
    });
    expectError(basic, 401, 'Unauthorized');
  });

  it('refuses a revoked token on every runbook route', async () => {
    const created = await api.call('POST', '/tokens', { body: { user: 'soon-revoked', role: 'admin' } });
    expect(created.status).toBe(201);
    const { token } = created.body;
    expect((await api.call('GET', '/runbooks', { token })).status).toBe(200);
    expect((await api.call('DELETE', `/tokens/${created.body.metadata.id}`)).status).toBe(204);
    for (const [method, path, body] of routes) {
      const res = await api.call(method, path, { token, body });
      expectError(res, 401, 'Unauthorized');
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    }
    await expectUntouched();
  });

  it.each(['viewer', 'operator'] as const)('lets a %s read runbooks but not change them', async (role) => {
    const token = api.tokens[role];
    for (const [method, path, body] of routes) {
      const res = await api.call(method, path, { token, body });
      if (method === 'GET') expect(res.status).toBe(200);
      else expectError(res, 403, 'Forbidden');
    }
    // The role check comes before body validation: no hint about what a valid body looks like.
    expectError(await api.call('POST', '/runbooks', { token, body: {} }), 403, 'Forbidden');
    await expectUntouched();
  });

  it('lets an admin do everything', async () => {
    const token = api.tokens.admin;
    for (const [method, path, body] of routes) {
      const res = await api.call(method, path, { token, body });
      expect(res.status).toBe({ GET: 200, POST: 201, PUT: 200, DELETE: 204 }[method]);
    }
    expect((await api.call('DELETE', `/runbooks/${probe}`)).status).toBe(204);
  });
});

describe('CRUD round trip', () => {
  const name = 'crud-demo';
  const input = spec(name, { targets: { signalTypes: ['HighErrorRate'], resourceKinds: ['Deployment'] } });
  let created: ApiResponse;

  it('creates with 201, a Location header and the detail', async () => {
    created = await create(input);
    expect(created.headers.get('location')).toBe(`${BASE_PATH}/runbooks/${name}`);
    expect(created.body).toEqual({
      apiVersion: 'v1',
      kind: 'Runbook',
      metadata: { name, createdAt: expect.stringMatching(ISO), updatedAt: created.body.metadata.createdAt },
      spec: expectedSpec(input),
      status: { stepsCount: 3, avgExecutionTime: null, successRate: null, executions: 0, reviewPending: false },
    });
    // Defaults are applied and visible: automated, approvalRequired, maxAttempts, the HTTP method.
    expect(created.body.spec).toMatchObject({ automated: true, approvalRequired: false, maxAttempts: 3 });
    expect(created.body.spec.steps[0].params).toEqual({});
    expect(created.body.spec.steps[1].params.method).toBe('GET');
  });

  it('reads back exactly what was created, at the Location', async () => {
    const get = await api.call('GET', created.headers.get('location') as string, { token: api.tokens.viewer });
    expect(get.status).toBe(200);
    expect(get.body).toEqual(created.body);
    expect(await listNames('category=custom')).toContain(name);
  });

  it('refuses a second runbook of the same name with 409', async () => {
    const dup = await api.call('POST', '/runbooks', { body: spec(name, { description: 'another one' }) });
    expectError(dup, 409, 'Runbook already exists');
    expect(dup.body.error.details).toContain(name);
    const builtin = await api.call('POST', '/runbooks', { body: spec('oomkill-raise-memory-limit') });
    expectError(builtin, 409, 'Runbook already exists');
    expect(builtin.body.error.details).toContain('built-in');
    expect((await api.call('GET', `/runbooks/${name}`)).body).toEqual(created.body);
  });

  it('lets exactly one of two concurrent creates win', async () => {
    const racer = 'crud-race';
    const results = await Promise.all([1, 2].map(() => api.call('POST', '/runbooks', { body: spec(racer) })));
    expect(results.map((r) => r.status).sort()).toEqual([201, 409]);
    expect(await auditFor('runbook.create', racer)).toHaveLength(1);
    expect((await api.call('DELETE', `/runbooks/${racer}`)).status).toBe(204);
  });

  it('updates with PUT, visible in GET and the list', async () => {
    const { name: _n, ...rest } = input;
    const body = {
      ...rest,
      description: 'Updated description.',
      version: '1.1.0',
      severity: ['critical', 'high'],
      maxAttempts: 5,
    };
    const put = await api.call('PUT', `/runbooks/${name}`, { body });
    expect(put.status).toBe(200);
    expect(put.body.spec).toEqual(expectedSpec({ ...body, name } as RunbookInput));
    expect(put.body.metadata.createdAt).toBe(created.body.metadata.createdAt);
    expect(Date.parse(put.body.metadata.updatedAt)).toBeGreaterThanOrEqual(Date.parse(created.body.metadata.createdAt));
    const get = await api.call('GET', `/runbooks/${name}`);
    expect(get.body).toEqual(put.body);
    expect(await listNames('severity=critical&category=custom')).toEqual([name]);
  });

  it('answers PUT and DELETE of an unknown runbook with 404', async () => {
    const { name: _n, ...rest } = input;
    expectError(await api.call('PUT', '/runbooks/no-such-runbook', { body: rest }), 404, 'Runbook not found');
    expectError(await api.call('DELETE', '/runbooks/no-such-runbook'), 404, 'Runbook not found');
    expectError(await api.call('GET', '/runbooks/no-such-runbook'), 404, 'Runbook not found');
  });

  it('deletes with 204, then GET is 404', async () => {
    const del = await api.call('DELETE', `/runbooks/${name}`);
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expectError(await api.call('GET', `/runbooks/${name}`), 404, 'Runbook not found');
    expectError(await api.call('DELETE', `/runbooks/${name}`), 404, 'Runbook not found');
    expect(await listNames('')).not.toContain(name);
  });

  it('audits each mutation once, with the admin as user', async () => {
    const common = {
      user: 'admin-user',
      role: 'admin',
      resource: name,
      resourceType: 'Runbook',
      namespace: '',
      sourceIP: expect.any(String),
      userAgent: expect.any(String),
    };
    expect(await auditFor('runbook.create', name)).toEqual([
      expect.objectContaining({
        ...common,
        action: 'runbook.create',
        details: { version: '1.0.0', category: 'custom' },
      }),
    ]);
    const [update] = await auditFor('runbook.update', name);
    expect(update).toEqual(
      expect.objectContaining({
        ...common,
        action: 'runbook.update',
        details: { version: '1.1.0', previousVersion: '1.0.0', category: 'custom', changed: expect.any(Array) },
      }),
    );
    expect([...update.details.changed].sort()).toEqual(['description', 'maxAttempts', 'severity', 'version']);
    expect(await auditFor('runbook.delete', name)).toEqual([
      expect.objectContaining({
        ...common,
        action: 'runbook.delete',
        details: { version: '1.1.0', category: 'custom', builtin: false },
      }),
    ]);
    // The refused duplicate create and the 404s left no trace.
    const all = await api.call('GET', `/audit?resource=${name}`);
    expect(all.body.metadata.totalCount).toBe(3);
    expect(all.body.items.map((i: { action: string }) => i.action)).toEqual([
      'runbook.delete',
      'runbook.update',
      'runbook.create',
    ]);
  });
});

describe('validation', () => {
  const { name: _n, ...updateBody } = spec('unused');

  it.each([
    ['a bad semantic version', spec('bad-version', { version: 'v1.0' }), 'body.version'],
    [
      'an unknown action type',
      spec('bad-action', { steps: [{ type: 'RebootNode', params: {} }] }),
      'body.steps.0.type',
    ],
    [
      'an unknown params key',
      spec('bad-params', { steps: [{ type: 'Wait', params: { duration: '30s', jitter: '5s' } }] }),
      'body.steps.0.params',
    ],
    ['an unknown top-level field', { ...spec('bad-field'), owner: 'sre' }, 'owner'],
    ['a name that is not a DNS label', spec('Bad_Name'), 'body.name'],
    ['an unknown category', spec('bad-category', { category: 'kernel' }), 'body.category'],
    ['no steps', spec('no-steps', { steps: [] }), 'body.steps'],
  ])('refuses a create with %s, naming the field', async (_what, body, field) => {
    expectInvalid(await api.call('POST', '/runbooks', { body }), field);
    expectError(await api.call('GET', `/runbooks/${(body as RunbookInput).name}`), 404, 'Runbook not found');
  });

  it('lists every missing required field', async () => {
    expectInvalid(
      await api.call('POST', '/runbooks', { body: {} }),
      'body.name',
      'body.category',
      'body.description',
      'body.version',
      'body.severity',
      'body.steps',
    );
  });

  it('refuses a PUT body that contains a name', async () => {
    const res = await api.call('PUT', '/runbooks/disk-pressure-cleanup', {
      body: { ...updateBody, name: 'disk-pressure-cleanup' },
    });
    expectInvalid(res, 'body', "'name'");
    expect(await auditFor('runbook.update', 'disk-pressure-cleanup')).toEqual([]);
  });

  it('refuses a PUT with a bad field', async () => {
    expectInvalid(
      await api.call('PUT', '/runbooks/disk-pressure-cleanup', { body: { ...updateBody, version: '1.0' } }),
      'body.version',
    );
  });

  it('refuses malformed JSON and non-JSON bodies in the envelope', async () => {
    expectInvalid(
      await api.call('POST', '/runbooks', { rawBody: '{"name":', headers: { 'content-type': 'application/json' } }),
      'malformed JSON',
    );
    expectError(
      await api.call('POST', '/runbooks', { rawBody: 'name=x', headers: { 'content-type': 'text/plain' } }),
      415,
      'Unsupported media type',
    );
  });

  it('answers an unsupported method with 405 and Allow', async () => {
    const res = await api.call('PATCH', '/runbooks/disk-pressure-cleanup', { body: {} });
    expectError(res, 405, 'Method not allowed');
    expect(res.headers.get('allow')).toContain('PUT');
  });
});

describe('OpenAPI and audit chain', () => {
  it('documents the runbook routes', async () => {
    const res = await api.call('GET', `${BASE_PATH}/openapi.json`, { token: null });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.paths[`${BASE_PATH}/runbooks`]).sort()).toEqual(['get', 'post']);
    expect(Object.keys(res.body.paths[`${BASE_PATH}/runbooks/{name}`]).sort()).toEqual(['delete', 'get', 'put']);
  });

  it('leaves the audit chain intact', async () => {
    const res = await api.call('GET', '/audit/verify');
    expect(res.status).toBe(200);
    expect(res.body.status.intact).toBe(true);
    expect(res.body.status.verifiedRecords).toBe(res.body.status.totalRecords);
    expect(res.body.status.totalRecords).toBeGreaterThan(10);
  });
});
