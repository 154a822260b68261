import { mkdtemp, readFile, rm, stat } from 'fs/promises';
import { tmpdir } from 'os';
import path from 'path';
import { parse as parseYaml } from 'yaml';
import { approvalAwaitingDecision } from '../harness/approvals';
import { TEST_AUDIT_KEY } from '../harness/mongo';
import { useStack } from '../harness/stack';
import { useStepReceiver } from '../harness/step-receiver';
import { cliRunner, rowsOf, type CliResult } from './cli-client-helpers';

/**
 * The `foghorn` API-client commands (issue 13 §2) against the real stack: the API on an
 * ephemeral port, the MongoDB-wire server, the Temporal test server and the real worker. Every
 * command runs as its own process (`node bin/foghorn.js …`), configured by FOGHORN_URL and
 * FOGHORN_TOKEN or by `foghorn login`, with HOME and XDG_CONFIG_HOME in a temporary folder.
 * Scenarios follow one another (the incident acknowledged first is resolved, then its
 * postmortem reviewed). Runbooks, postmortems, analytics, clusters and completion are in
 * cli-client-more.test.ts.
 */

jest.setTimeout(300_000);

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- API JSON
type Json = any;

let s: Awaited<ReturnType<typeof useStack>>;
let receiver: Awaited<ReturnType<typeof useStepReceiver>>;
let home: string;
let cli: ReturnType<typeof cliRunner>;

beforeAll(async () => {
  receiver = await useStepReceiver();
  s = await useStack({ env: { FOGHORN_VERIFY_WINDOW: '1m' } });
  home = await mkdtemp(path.join(tmpdir(), 'foghorn-cli-'));
  cli = cliRunner({ baseUrl: s.baseUrl, token: s.tokens.operator, home });
}, 180_000);

afterAll(async () => {
  await s?.stop();
  await receiver?.stop();
  if (home) await rm(home, { recursive: true, force: true });
});

const api = async (p: string, token = s.tokens.admin) => {
  const res = await s.call('GET', p, { token });
  expect(res.status).toBe(200);
  return res.body as Json;
};

/** Runs the CLI with `-o json` until its answer equals the API's (the workflows keep moving). */
async function sameAsApi(args: string[], apiPath: string, strip: (j: Json) => Json = (j) => j, token?: string) {
  let last: { cli?: Json; api?: Json; run?: CliResult } = {};
  for (let attempt = 0; attempt < 5; attempt++) {
    const run = await cli([...args, '-o', 'json'], { token });
    expect(run).toMatchObject({ code: 0 });
    const fromCli = strip(JSON.parse(run.stdout));
    const fromApi = strip(await api(apiPath, token));
    if (JSON.stringify(fromCli) === JSON.stringify(fromApi)) return JSON.parse(run.stdout) as Json;
    last = { cli: fromCli, api: fromApi, run };
  }
  expect(last.cli).toEqual(last.api);
  return last.cli;
}

async function openIncident(resource: string, signalType: string, severity = 'high'): Promise<string> {
  const res = await s.call('POST', '/incidents', {
    token: s.tokens.operator,
    body: { resource, namespace: 'shop', signalType, severity, description: 'cli test' },
  });
  expect(res.status).toBe(201);
  return res.body.metadata.name as string;
}

const auditOf = async (action: string, resource: string): Promise<Json[]> =>
  (await api(`/audit?action=${action}&resource=${resource}`)).items;

let incident = '';

describe('incidents', () => {
  it('ack, snooze and resolve change the incident, audited with the token’s user and the CLI’s user agent; a second ack is a 409', async () => {
    incident = await openIncident('Deployment/cli-web', 'Custom');

    const ack = await cli(['incidents', 'ack', incident, '-m', 'looking into it']);
    expect(ack).toMatchObject({ code: 0, stdout: `incident/${incident} acknowledged by operator-user\n` });
    expect((await api(`/incidents/${incident}`)).status.acknowledged).toBe(true);

    const again = await cli(['incidents', 'ack', incident]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(
      /^Error from server \(409 Incident already acknowledged\): acknowledged by operator-user at \d{4}-/,
    );

    const snooze = await cli(['incidents', 'snooze', incident, '-d', '30m', '--reason', 'deploy window', '-o', 'json']);
    expect(snooze.code).toBe(0);
    expect(JSON.parse(snooze.stdout)).toMatchObject({
      kind: 'Incident',
      metadata: { name: incident, namespace: 'shop' },
      status: { snoozed: true, snoozedBy: 'operator-user', snoozeReason: 'deploy window' },
    });

    // Without -n: the CLI finds the incident's namespace (the API would look in `default`).
    const resolve = await cli(['incidents', 'resolve', incident, '-r', 'rolled back']);
    expect(resolve).toMatchObject({ code: 0, stdout: `incident/${incident} resolved\n` });
    expect((await api(`/incidents/${incident}`)).status).toMatchObject({
      state: 'Resolved',
      resolution: 'rolled back',
    });

    // The audit log says who (the token's user) and with what (the CLI).
    const listed = await cli([
      'audit',
      'list',
      '--action',
      'incident.acknowledge',
      '--resource',
      incident,
      '-o',
      'json',
    ]);
    expect(listed.code).toBe(0);
    const records = JSON.parse(listed.stdout);
    expect(records).toMatchObject({ kind: 'AuditLogList', metadata: { totalCount: 1 } });
    expect(records.items[0]).toMatchObject({
      action: 'incident.acknowledge',
      user: 'operator-user',
      role: 'operator',
      resource: incident,
      userAgent: expect.stringMatching(/^foghorn-cli\/\d+\.\d+\.\d+/),
    });
    for (const action of ['incident.snooze', 'incident.resolve'])
      expect(await auditOf(action, incident)).toEqual([
        expect.objectContaining({ user: 'operator-user', userAgent: expect.stringMatching(/^foghorn-cli\//) }),
      ]);
  });

  it('list, get and timeline: kubectl-style tables, and -o json / -o yaml equal to the API’s answers', async () => {
    // Settled: resolved, its postmortem written.
    await s.eventually(
      () => api(`/incidents/${incident}`),
      (i) => !!i.status.postmortem,
      120_000,
    );

    const list = await cli(['incidents', 'list', '-n', 'shop', '--state', 'Resolved']);
    expect(list.code).toBe(0);
    const [header, ...rows] = rowsOf(list.stdout);
    expect(header).toEqual(['NAME', 'NAMESPACE', 'SEVERITY', 'STATE', 'RESOURCE', 'RISK', 'AGE']);
    expect(rows).toContainEqual([
      incident,
      'shop',
      'high',
      'Resolved',
      'Deployment/cli-web',
      expect.any(String),
      expect.stringMatching(/^\d+[smhd]/),
    ]);

    const noAge = (l: Json) => ({ ...l, items: l.items.map(({ age: _age, ...i }: Json) => i) });
    await sameAsApi(
      ['incidents', 'list', '-n', 'shop', '--state', 'Resolved'],
      '/incidents?namespace=shop&state=Resolved',
      noAge,
    );

    const get = await cli(['incidents', 'get', incident]);
    expect(rowsOf(get.stdout)).toEqual([
      ['NAME', 'NAMESPACE', 'SEVERITY', 'STATE', 'RESOURCE', 'RISK', 'ACK', 'AGE'],
      [incident, 'shop', 'high', 'Resolved', 'Deployment/cli-web', expect.any(String), 'true', expect.any(String)],
    ]);
    const wide = await cli(['incidents', 'get', incident, '-o', 'wide']);
    expect(rowsOf(wide.stdout)[0]).toEqual(expect.arrayContaining(['SIGNAL', 'RUNBOOK', 'POSTMORTEM', 'DESCRIPTION']));

    const detail = await sameAsApi(['incidents', 'get', incident], `/incidents/${incident}`);
    const yaml = await cli(['incidents', 'get', incident, '-o', 'yaml']);
    expect(yaml.code).toBe(0);
    expect(parseYaml(yaml.stdout)).toEqual(detail);

    const timeline = await cli(['incidents', 'timeline', incident]);
    expect(timeline.code).toBe(0);
    const [theader, ...events] = timeline.stdout.trimEnd().split('\n');
    expect(theader.split(/\s+/)).toEqual(['TIME', 'TYPE', 'SOURCE', 'MESSAGE']);
    expect(events.some((e) => /^\S+Z\s+Acknowledged\s+user:operator-user\s/.test(e))).toBe(true);
    await sameAsApi(['incidents', 'timeline', incident], `/incidents/${incident}/timeline`);
  });

  it('an unknown incident: exit 1 with the API’s 404', async () => {
    const res = await cli(['incidents', 'get', 'INC-20990101-999']);
    expect(res).toMatchObject({ code: 1, stdout: '' });
    expect(res.stderr).toBe('Error from server (404 Incident not found): incident INC-20990101-999 does not exist\n');
  });
});

describe('approvals and remediations', () => {
  /** An incident whose plan waits in an approval (an admin-created runbook with approvalRequired). */
  async function pendingApproval(resource: string): Promise<{ incident: string; approval: string }> {
    const name = await openIncident(resource, 'HighLatency', 'low');
    const list = await s.eventually(
      () => api(`/approvals?incident=${name}&status=pending`),
      (l) => l.items?.length === 1,
      120_000,
    );
    await approvalAwaitingDecision(s.client, list.items[0].name);
    return { incident: name, approval: list.items[0].name };
  }

  beforeAll(async () => {
    const res = await s.call('POST', '/runbooks', {
      token: s.tokens.admin,
      body: {
        name: 'cli-latency-http',
        category: 'latency',
        version: '1.0.0',
        description: 'asks first',
        approvalRequired: true,
        severity: ['low'],
        steps: [{ type: 'HttpRequest', params: { method: 'POST', url: `${receiver.baseUrl}/fix`, expectStatus: 200 } }],
      },
    });
    expect(res.status).toBe(201);
  });

  it('list and get pending approvals; approve and reject decide as the token’s user; deciding twice is a 409', async () => {
    const first = await pendingApproval('Deployment/cli-search');
    const second = await pendingApproval('Deployment/cli-cart');

    const list = await cli(['approvals', 'list', '--status', 'pending']);
    expect(list.code).toBe(0);
    const [header, ...rows] = rowsOf(list.stdout);
    expect(header).toEqual(['NAME', 'NAMESPACE', 'STATUS', 'INCIDENT', 'ACTION', 'RISK', 'ROLE', 'AGE']);
    expect(list.stdout).toContain(first.approval);
    expect(rows.find((r) => r[0] === second.approval)).toEqual(
      expect.arrayContaining([second.approval, 'shop', 'pending', second.incident, 'operator']),
    );
    await sameAsApi(['approvals', 'get', first.approval], `/approvals/${first.approval}`);

    const approve = await cli(['approvals', 'approve', first.approval, '-c', 'diff looks right']);
    expect(approve).toMatchObject({ code: 0, stdout: `approval/${first.approval} approved by operator-user\n` });
    const reject = await cli(['approvals', 'reject', second.approval, '-c', 'not now', '-o', 'yaml']);
    expect(reject.code).toBe(0);
    expect(parseYaml(reject.stdout)).toMatchObject({
      status: 'rejected',
      decidedBy: 'operator-user',
      comment: 'not now',
    });
    expect(await auditOf('approval.approve', first.approval)).toEqual([
      expect.objectContaining({ user: 'operator-user', userAgent: expect.stringMatching(/^foghorn-cli\//) }),
    ]);

    const twice = await cli(['approvals', 'reject', first.approval]);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toMatch(/^Error from server \(409 Approval already decided\): approved by operator-user at /);

    // The rejected plan is final: its table row and its JSON.
    const plan = (
      await s.eventually(
        () => api(`/remediations?incident=${second.incident}`),
        (l) => l.items?.[0]?.state === 'Failed',
        120_000,
      )
    ).items[0];
    const plans = await cli(['remediations', 'list', '--incident', second.incident]);
    expect(rowsOf(plans.stdout)).toEqual([
      ['NAME', 'NAMESPACE', 'INCIDENT', 'RUNBOOK', 'STATE', 'ATTEMPT', 'RISK', 'AGE'],
      [
        plan.name,
        'shop',
        second.incident,
        'cli-latency-http',
        'Failed',
        '1',
        String(plan.riskScore),
        expect.any(String),
      ],
    ]);
    await sameAsApi(
      ['remediations', 'list', '--incident', second.incident],
      `/remediations?incident=${second.incident}`,
    );
    const one = await cli(['remediations', 'get', plan.name]);
    expect(rowsOf(one.stdout)[1]).toEqual(expect.arrayContaining([plan.name, second.incident, 'Failed']));
    await sameAsApi(['remediations', 'get', plan.name], `/remediations/${plan.name}`);
  });
});

describe('audit', () => {
  it('list as a table; export CSV with the spec’s header and JSON that verify-file finds intact; verify', async () => {
    const list = await cli(['audit', 'list', '--user', 'operator-user', '--page-size', '5']);
    expect(list.code).toBe(0);
    const [header, ...rows] = rowsOf(list.stdout);
    expect(header).toEqual(['TIME', 'ACTION', 'USER', 'ROLE', 'TYPE', 'RESOURCE', 'NAMESPACE']);
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) expect(r[2]).toBe('operator-user');
    expect(list.stderr).toMatch(/^\(5 of \d+ audit records; --page 2 for more\)/);

    const csv = path.join(home, 'audit.csv');
    const exported = await cli(['audit', 'export', '--format', 'csv', '--user', 'operator-user', '-f', csv], {
      token: s.tokens.admin,
    });
    expect(exported).toMatchObject({ code: 0, stdout: '' });
    expect(exported.stderr).toBe(`audit export written to ${csv}\n`);
    const lines = (await readFile(csv, 'utf8')).split('\r\n');
    expect(lines[0]).toBe('id,timestamp,action,user,role,resource,resourceType,namespace,sourceIP,checksum');
    expect(lines.length).toBeGreaterThan(2);

    const json = path.join(home, 'audit.json');
    expect(await cli(['audit', 'export', '-f', json], { token: s.tokens.admin })).toMatchObject({ code: 0 });
    expect(JSON.parse(await readFile(json, 'utf8'))).toMatchObject({
      kind: 'AuditExport',
      metadata: { format: 'json' },
    });
    const offline = await cli(['audit', 'verify-file', json], { env: { FOGHORN_AUDIT_KEY: TEST_AUDIT_KEY } });
    expect(offline).toMatchObject({ code: 0 });
    expect(offline.stdout).toContain(`${json}: intact`);

    const verify = await cli(['audit', 'verify'], { token: s.tokens.admin });
    expect(verify.code).toBe(0);
    expect(verify.stdout).toMatch(/^intact: +true$/m);
    const verifyJson = await cli(['audit', 'verify', '-o', 'json'], { token: s.tokens.admin });
    expect(JSON.parse(verifyJson.stdout)).toMatchObject({ kind: 'AuditChainVerification', status: { intact: true } });

    // Exports are the admin's: an operator gets the API's 403.
    const refused = await cli(['audit', 'export', '-f', path.join(home, 'no.csv')]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^Error from server \(403 Forbidden\): role operator may not do this/);
    await expect(stat(path.join(home, 'no.csv'))).rejects.toThrow();
  });

  it('a large export is a job: the CLI polls its download URL until the file arrives (or prints the job with --no-wait)', async () => {
    // A second API on the same servers answering at most one record at once.
    const { useApi } = await import('../harness/api');
    const small = await useApi({
      temporal: s.client,
      taskQueue: s.wf.taskQueue,
      mongo: s.mongo,
      auditExportSyncLimit: 1,
    });
    try {
      const env = { FOGHORN_URL: small.baseUrl };
      const file = path.join(home, 'job.csv');
      const waited = await cli(['audit', 'export', '--format', 'csv', '-f', file, '--interval', '1'], {
        token: small.tokens.admin,
        env,
      });
      expect(waited.code).toBe(0);
      expect(waited.stderr).toMatch(/^export job \S+: processing/);
      expect(waited.stderr).toMatch(/audit export written to .*job\.csv \(job \S+\)\n$/);
      expect((await readFile(file, 'utf8')).split('\r\n')[0]).toBe(
        'id,timestamp,action,user,role,resource,resourceType,namespace,sourceIP,checksum',
      );

      const queued = await cli(['audit', 'export', '--no-wait'], { token: small.tokens.admin, env });
      expect(queued.code).toBe(0);
      const job = JSON.parse(queued.stdout);
      expect(job).toMatchObject({
        kind: 'AuditExportJob',
        status: { downloadUrl: expect.stringContaining('/audit/export/download/') },
      });
      expect(queued.stderr).toContain(`download it later: ${small.baseUrl}${job.status.downloadUrl}`);
    } finally {
      await small.stop();
    }
  });
});

describe('configuration, login and errors', () => {
  it('a wrong token: exit 1 with the API’s 401, and the token appears nowhere', async () => {
    const token = 'fgh_wrong_token_0123456789abcdef';
    const res = await cli(['incidents', 'list'], { token });
    expect(res).toMatchObject({ code: 1, stdout: '' });
    expect(res.stderr).toBe('Error from server (401 Unauthorized): invalid or revoked token\n');
    expect(res.stderr).not.toContain(token);
  });

  it('a viewer may read but not act: 403 with the API’s details', async () => {
    expect((await cli(['incidents', 'list'], { token: s.tokens.viewer })).code).toBe(0);
    const res = await cli(['incidents', 'ack', incident], { token: s.tokens.viewer });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^Error from server \(403 Forbidden\): role viewer may not do this/);
  });

  it('usage errors exit 2: an unknown option, an unknown command, a missing argument, a bad -o', async () => {
    for (const args of [
      ['incidents', 'list', '--bogus'],
      ['incidents', 'frobnicate'],
      ['incidents', 'get'],
      ['incidents', 'list', '-o', 'xml'],
    ]) {
      const res = await cli(args);
      expect({ args, code: res.code }).toEqual({ args, code: 2 });
      expect(res.stderr).toMatch(/^error: /);
    }
  });

  it('login checks the token, writes config.yaml (0600); later commands need no environment; flags beat it', async () => {
    const own = await mkdtemp(path.join(tmpdir(), 'foghorn-login-'));
    try {
      const noEnv = { FOGHORN_URL: '', FOGHORN_TOKEN: '', HOME: own, XDG_CONFIG_HOME: '' };
      const config = path.join(own, '.config', 'foghorn', 'config.yaml');

      const bad = await cli(['login', '--url', s.baseUrl, '--token', 'fgh_nope'], { env: noEnv, token: null });
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain('Error from server (401 Unauthorized)');
      await expect(stat(config)).rejects.toThrow();

      const before = await cli(['incidents', 'list'], { env: noEnv, token: null });
      expect(before).toMatchObject({
        code: 1,
        stderr: 'error: no server: set FOGHORN_URL, pass --url, or run foghorn login\n',
      });

      const login = await cli(['login', '--url', s.baseUrl, '--token', s.tokens.viewer], { env: noEnv, token: null });
      expect(login).toMatchObject({ code: 0, stdout: `Logged in to ${s.baseUrl} as viewer-user (viewer)\n` });
      expect(login.stdout + login.stderr).not.toContain(s.tokens.viewer);
      expect((await stat(config)).mode & 0o777).toBe(0o600);
      expect(parseYaml(await readFile(config, 'utf8'))).toMatchObject({ url: s.baseUrl, token: s.tokens.viewer });

      const list = await cli(['incidents', 'list', '-o', 'json'], { env: noEnv, token: null });
      expect(list.code).toBe(0);
      expect(JSON.parse(list.stdout).kind).toBe('IncidentList');
      // The viewer of the saved login may not acknowledge; --token (an operator's) beats the file.
      const saved = await cli(['incidents', 'ack', incident], { env: noEnv, token: null });
      expect(saved.stderr).toContain('403 Forbidden');
      const flagged = await cli(['incidents', 'ack', incident, '--token', s.tokens.operator], {
        env: noEnv,
        token: null,
      });
      expect(flagged.stderr).toContain('409 Incident already acknowledged'); // not the viewer's 403
      // The environment beats the file too.
      const envWins = await cli(['incidents', 'list'], {
        env: { ...noEnv, FOGHORN_TOKEN: 'fgh_env_wrong' },
        token: null,
      });
      expect(envWins.stderr).toContain('401 Unauthorized');

      // XDG_CONFIG_HOME moves the file.
      const xdg = path.join(own, 'xdg');
      const moved = await cli(['login', '--url', s.baseUrl, '--token', s.tokens.admin], {
        env: { ...noEnv, XDG_CONFIG_HOME: xdg },
        token: null,
      });
      expect(moved.stdout).toBe(`Logged in to ${s.baseUrl} as admin-user (admin)\n`);
      expect((await stat(path.join(xdg, 'foghorn', 'config.yaml'))).mode & 0o777).toBe(0o600);
    } finally {
      await rm(own, { recursive: true, force: true });
    }
  });
});
