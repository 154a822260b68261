import { spawn } from 'child_process';
import { existsSync } from 'fs';
import os from 'os';
import path from 'path';
import { REPO_ROOT, TOOLS_DIR } from '../../cli/paths';
import { BASE_PATH } from '../harness/api';
import { useStack } from '../harness/stack';

/**
 * The API contract (issue 8): the OpenAPI document says exactly what the API does. schemathesis
 * (installed by tools/bootstrap.sh) fuzzes every operation with `--checks all` against the
 * whole stack (API + worker on the time-skipping server + MongoDB-wire server), so incident
 * actions, postmortems and runbook writes really run. The generation is deterministic and
 * bounded, so a run is repeatable; the narrow exceptions are in test/api/schemathesis.toml.
 */

const SCHEMATHESIS = path.join(TOOLS_DIR, 'venv', 'bin', 'schemathesis');
const CONFIG = path.join(REPO_ROOT, 'test', 'api', 'schemathesis.toml');
const MAX_EXAMPLES = 25;
const SEED = 8;

function run(command: string, args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    // Asynchronous on purpose: the API under test answers from this very process.
    const child = spawn(command, args, {
      cwd: os.tmpdir(), // nothing schemathesis writes lands in the repository
      env: { ...process.env, NO_COLOR: '1', PYTHONUNBUFFERED: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe('the API contract', () => {
  let stack: Awaited<ReturnType<typeof useStack>>;
  beforeAll(async () => {
    stack = await useStack();
  });
  afterAll(() => stack?.stop());

  const notFound = (message: string) => ({
    apiVersion: 'v1',
    kind: 'Error',
    error: { code: 404, message, details: expect.any(String) },
  });
  /** GET of a path exactly as written (the harness's `call` would prefix the base path). */
  const getRaw = async (p: string) => {
    const res = await fetch(stack.baseUrl + p, { headers: { authorization: `Bearer ${stack.tokens.admin}` } });
    return { status: res.status, body: (await res.json()) as unknown };
  };

  it('answers at the base path with an index of links (public), documented too', async () => {
    const res = await stack.call('GET', BASE_PATH, { token: null });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      apiVersion: 'v1',
      kind: 'ApiIndex',
      version: expect.stringMatching(/^\d+\.\d+\.\d+/),
      links: {
        self: BASE_PATH,
        openapi: `${BASE_PATH}/openapi.json`,
        docs: `${BASE_PATH}/docs`,
        health: '/healthz',
        readiness: '/readyz',
        metrics: '/metrics',
      },
      collections: expect.objectContaining({
        incidents: `${BASE_PATH}/incidents`,
        aiinsights: `${BASE_PATH}/aiinsights`,
        runbooks: `${BASE_PATH}/runbooks`,
        postmortems: `${BASE_PATH}/postmortems`,
        audit: `${BASE_PATH}/audit`,
        tokens: `${BASE_PATH}/tokens`,
      }),
    });
    // Every link leads somewhere real.
    for (const href of [...Object.values(res.body.links), ...Object.values(res.body.collections)] as string[])
      expect((await stack.call('GET', href)).status).toBe(200);
    // The readable reference is made from the document: every operation is on it.
    const page = await stack.call('GET', `${BASE_PATH}/docs`, { token: null });
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.text).toContain('<code>POST</code></td><td><code>/api/v1/incidents/{name}/acknowledge</code>');
    expect(page.text).toContain('409 Incident already acknowledged');
    const doc = (await stack.call('GET', '/openapi.json', { token: null })).body;
    expect(doc.paths[BASE_PATH].get.responses['200'].content['application/json'].schema.properties.kind).toEqual({
      type: 'string',
      enum: ['ApiIndex'],
    });
  });

  it('is case-sensitive and strict: other spellings of a path are 404s, not aliases', async () => {
    for (const p of [
      `${BASE_PATH}/`,
      '/API/v1/incidents',
      `${BASE_PATH}/Incidents`,
      `${BASE_PATH}/incidents/`,
      `${BASE_PATH}/runbooks/`,
      `${BASE_PATH}/%69ncidents`,
      '/healthz/',
    ]) {
      const res = await getRaw(p);
      expect({ path: p, ...res }).toEqual({ path: p, status: 404, body: notFound('Not found') });
    }
  });

  it('never lets a percent-encoded name alias another resource', async () => {
    const created = await stack.call('POST', '/incidents', {
      token: stack.tokens.operator,
      body: { resource: 'Deployment/contract-alias', signalType: 'HighCPU', severity: 'low' },
    });
    expect(created.status).toBe(201);
    const name: string = created.body.metadata.name; // INC-yyyymmdd-nnn
    expect((await stack.call('GET', `/incidents/${name}`)).status).toBe(200);
    const encoded = name.replace(/-/g, '%2D');
    for (const p of [`/incidents/${encoded}`, `/incidents/${encoded}/timeline`, `/incidents/${name.toLowerCase()}`]) {
      const res = await stack.call('GET', p);
      expect({ path: p, status: res.status, body: res.body }).toEqual({
        path: p,
        status: 404,
        body: notFound('Incident not found'),
      });
    }
    expect((await stack.call('GET', '/runbooks/disk%2Dpressure-cleanup')).body).toEqual(notFound('Runbook not found'));
    // Malformed percent-encoding names nothing either (it is not a 400 of an undocumented kind).
    expect((await stack.call('GET', '/incidents/%E0%A4%A')).status).toBe(404);
    // A canonical encoding still works: a space is %20 (no such runbook, but the lookup happened).
    expect((await stack.call('GET', '/runbooks/a%20b')).body).toEqual(notFound('Runbook not found'));
  });

  it('documents every status code an operation can answer, derived from its declaration', async () => {
    const doc = (await stack.call('GET', '/openapi.json', { token: null })).body;
    const snooze = doc.paths[`${BASE_PATH}/incidents/{name}/snooze`].post;
    expect(Object.keys(snooze.responses).sort()).toEqual(
      ['200', '400', '401', '403', '404', '409', '413', '415', '429', '500', '503'].sort(),
    );
    expect(snooze.requestBody.required).toBe(true);
    expect(snooze.responses['404'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
    expect(snooze.responses['429'].headers['Retry-After'].required).toBe(true);
    expect(snooze.responses['401'].headers['WWW-Authenticate'].required).toBe(true);
    // A viewer route: no 403 (every token is at least a viewer), no body codes.
    const list = doc.paths[`${BASE_PATH}/incidents`].get;
    expect(Object.keys(list.responses).sort()).toEqual(['200', '400', '401', '429', '500', '503']);
    // Resolve takes no body at all (the spec's resolution is optional): not required.
    expect(doc.paths[`${BASE_PATH}/incidents/{name}/resolve`].post.requestBody.required).toBe(false);
    expect(Object.keys(doc.paths['/healthz'].get.responses).sort()).toEqual(['200', '500']);
    expect(doc.components.schemas.Error.required).toEqual(['apiVersion', 'kind', 'error']);
  });

  it('refuses what MongoDB cannot store with a 400, not a 500', async () => {
    const nulKey = await stack.call('POST', '/incidents', {
      token: stack.tokens.operator,
      body: { resource: 'Deployment/contract-nul', signalType: 'HighCPU', labels: { 'a\u0000b': 'x' } },
    });
    expect(nulKey.status).toBe(400);
    expect(nulKey.body.error.details).toContain('NUL');
    const noSource = await stack.call('POST', '/incidents', {
      token: stack.tokens.operator,
      body: { resource: 'Deployment/contract-nul', signalType: 'HighCPU', detectionSource: '' },
    });
    expect(noSource.status).toBe(400);
    expect(noSource.body.error.details).toContain('body.detectionSource');
    const alert = await stack.call('POST', '/alerts/alertmanager', {
      token: stack.tokens.operator,
      body: {
        version: '4',
        groupKey: 'g',
        status: 'firing',
        receiver: 'r',
        groupLabels: {},
        commonLabels: {},
        commonAnnotations: {},
        externalURL: '',
        alerts: [
          {
            status: 'firing',
            labels: { alertname: 'KubePodCrashLooping', deployment: 'contract-nul', 'x\u0000': 'y' },
            startsAt: '2026-01-01T00:00:00Z',
            endsAt: '',
            fingerprint: 'f',
          },
        ],
      },
    });
    expect(alert.status).toBe(400);
  });

  it('refuses to revoke the token that makes the call (409), so a caller cannot lock itself out', async () => {
    const created = await stack.call('POST', '/tokens', { body: { user: 'contract-self', role: 'admin' } });
    const self = created.body.token;
    const res = await stack.call('DELETE', `/tokens/${created.body.metadata.id}`, { token: self });
    expect(res.status).toBe(409);
    expect(res.body.error.message).toBe('Token in use');
    expect((await stack.call('GET', '/tokens', { token: self })).status).toBe(200);
    expect((await stack.call('DELETE', `/tokens/${created.body.metadata.id}`)).status).toBe(204);
  });

  it(
    'passes schemathesis --checks all with 0 failures',
    async () => {
      expect(existsSync(SCHEMATHESIS)).toBe(true); // tools/bootstrap.sh installs it (npm test runs it)
      const doc = (await stack.call('GET', '/openapi.json', { token: null })).body;
      const operations = Object.values(doc.paths as Record<string, object>).reduce(
        (n, item) => n + Object.keys(item).length,
        0,
      );
      const { code, output } = await run(SCHEMATHESIS, [
        '--config-file',
        CONFIG,
        'run',
        `${stack.baseUrl}${BASE_PATH}/openapi.json`,
        '--checks',
        'all',
        '--header',
        `Authorization: Bearer ${stack.tokens.admin}`,
        '--seed',
        String(SEED),
        '--generation-deterministic',
        '--max-examples',
        String(MAX_EXAMPLES),
        // One worker: CPython 3.11's compiler is not thread-safe (gh-106905), and a 2-worker run
        // once died inside schemathesis with "AST constructor recursion depth mismatch".
        '--workers',
        '1',
        '--request-timeout',
        '60',
        '--no-color',
      ]);
      // On failure, schemathesis's own report (every failure with a curl to reproduce it).
      expect(code === 0 ? 'passed' : `exit code ${code}\n${output}`).toBe('passed');
      // Every operation but the document itself (schemathesis loads it rather than tests it).
      expect(output).toContain(`Tested: ${operations - 1}`);
      expect(output).toMatch(/\d+ generated, (\d+) passed/);
      // The run stayed valid: its token was never revoked.
      expect((await stack.call('GET', '/tokens')).status).toBe(200);
    },
    15 * 60_000,
  );
});
