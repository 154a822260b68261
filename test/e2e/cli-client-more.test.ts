import { execFile } from 'child_process';
import { mkdtemp, rm, writeFile } from 'fs/promises';
import { tmpdir } from 'os';
import path from 'path';
import { promisify } from 'util';
import { parse as parseYaml, stringify } from 'yaml';
import { fakeKubeconfig } from '../clusters/fixtures';
import { useStack } from '../harness/stack';
import { cliRunner, rowsOf, type CliResult } from './cli-client-helpers';

/**
 * The `foghorn` API-client commands, part two (see cli-client.test.ts): runbooks apply/get/
 * delete, postmortems, analytics, clusters, and shell completion, each command a child process
 * against the real stack.
 */

jest.setTimeout(300_000);

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- API JSON
type Json = any;

let s: Awaited<ReturnType<typeof useStack>>;
let home: string;
let cli: ReturnType<typeof cliRunner>;

beforeAll(async () => {
  s = await useStack();
  home = await mkdtemp(path.join(tmpdir(), 'foghorn-cli-'));
  cli = cliRunner({ baseUrl: s.baseUrl, token: s.tokens.admin, home });
}, 180_000);

afterAll(async () => {
  await s?.stop();
  if (home) await rm(home, { recursive: true, force: true });
});

const api = async (p: string) => {
  const res = await s.call('GET', p, { token: s.tokens.admin });
  expect(res.status).toBe(200);
  return res.body as Json;
};

/** Runs the CLI with `-o json` until its answer equals the API's (what is measured keeps moving). */
async function sameAsApi(args: string[], apiPath: string, strip: (j: Json) => Json = (j) => j): Promise<Json> {
  let last: { cli?: Json; api?: Json } = {};
  for (let attempt = 0; attempt < 5; attempt++) {
    const run: CliResult = await cli([...args, '-o', 'json']);
    expect(run).toMatchObject({ code: 0 });
    const fromCli = strip(JSON.parse(run.stdout));
    const fromApi = strip(await api(apiPath));
    if (JSON.stringify(fromCli) === JSON.stringify(fromApi)) return JSON.parse(run.stdout);
    last = { cli: fromCli, api: fromApi };
  }
  expect(last.cli).toEqual(last.api);
  return last.cli;
}

describe('runbooks', () => {
  const spec = {
    name: 'cli-disk-cleanup',
    category: 'disk',
    version: '1.0.0',
    description: 'frees disk space',
    severity: ['low'],
    steps: [{ type: 'HttpRequest', params: { method: 'POST', url: 'http://127.0.0.1:9/clean', expectStatus: 200 } }],
  };

  it('apply -f creates, then configures (kubectl apply); get -o yaml applies back; list; delete; 404 after', async () => {
    const file = path.join(home, 'runbook.yaml');
    await writeFile(file, stringify(spec));
    const created = await cli(['runbooks', 'apply', '-f', file]);
    expect(created).toMatchObject({ code: 0, stdout: 'runbook/cli-disk-cleanup created\n' });

    await writeFile(file, JSON.stringify({ ...spec, version: '1.1.0' })); // JSON is YAML too
    const configured = await cli(['runbooks', 'apply', '-f', file]);
    expect(configured).toMatchObject({ code: 0, stdout: 'runbook/cli-disk-cleanup configured\n' });
    expect((await api('/runbooks/cli-disk-cleanup')).spec.version).toBe('1.1.0');

    const got = await cli(['runbooks', 'get', 'cli-disk-cleanup']);
    expect(rowsOf(got.stdout)).toEqual([
      ['NAME', 'CATEGORY', 'VERSION', 'AUTOMATED', 'APPROVAL', 'STEPS', 'SEVERITY', 'AGE'],
      ['cli-disk-cleanup', 'disk', '1.1.0', 'true', 'false', '1', 'low', expect.any(String)],
    ]);
    const asJson = await sameAsApi(['runbooks', 'get', 'cli-disk-cleanup'], '/runbooks/cli-disk-cleanup');
    const yaml = await cli(['runbooks', 'get', 'cli-disk-cleanup', '-o', 'yaml']);
    expect(parseYaml(yaml.stdout)).toEqual(asJson);

    // What `get -o yaml` prints is a file `apply -f` takes back (the Runbook object shape).
    const edited = parseYaml(yaml.stdout);
    edited.spec.version = '2.0.0';
    await writeFile(file, stringify(edited));
    const again = await cli(['runbooks', 'apply', '-f', file]);
    expect(again.stdout).toBe('runbook/cli-disk-cleanup configured\n');
    expect((await api('/runbooks/cli-disk-cleanup')).spec.version).toBe('2.0.0');
    const updates = (await api('/audit?action=runbook.update&resource=cli-disk-cleanup')).items;
    expect(updates).toHaveLength(2);
    expect(updates[0]).toMatchObject({ user: 'admin-user', userAgent: expect.stringMatching(/^foghorn-cli\//) });

    const list = await cli(['runbooks', 'list', '--category', 'disk']);
    expect(rowsOf(list.stdout)).toContainEqual([
      'cli-disk-cleanup',
      'disk',
      '2.0.0',
      'true',
      'false',
      '1',
      'low',
      expect.any(String),
    ]);
    await sameAsApi(['runbooks', 'list', '--category', 'disk'], '/runbooks?category=disk');

    // Only admins change runbooks: the API's 403, nothing changed.
    const refused = await cli(['runbooks', 'delete', 'cli-disk-cleanup'], { token: s.tokens.operator });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^Error from server \(403 Forbidden\)/);

    expect(await cli(['runbooks', 'delete', 'cli-disk-cleanup'])).toMatchObject({
      code: 0,
      stdout: 'runbook/cli-disk-cleanup deleted\n',
    });
    const gone = await cli(['runbooks', 'get', 'cli-disk-cleanup']);
    expect(gone).toMatchObject({
      code: 1,
      stderr: 'Error from server (404 Runbook not found): Runbook cli-disk-cleanup does not exist\n',
    });
  });

  it('apply reports the API’s field problems (400) and a file that is not a runbook', async () => {
    const file = path.join(home, 'bad.yaml');
    await writeFile(file, stringify({ ...spec, name: 'cli-bad', version: 'one' }));
    const bad = await cli(['runbooks', 'apply', '-f', file]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^Error from server \(400 Invalid request\): body\.version: must be a semantic version/);

    await writeFile(file, '- just\n- a list\n');
    const notRunbook = await cli(['runbooks', 'apply', '-f', file]);
    expect(notRunbook).toMatchObject({ code: 1, stderr: `error: ${file}: not a runbook object\n` });
  });
});

describe('postmortems', () => {
  it('get shows the postmortem of a resolved incident; review and close record the token’s user as reviewer', async () => {
    const created = await s.call('POST', '/incidents', {
      token: s.tokens.operator,
      body: { resource: 'Deployment/cli-pm', namespace: 'shop', signalType: 'Custom', severity: 'medium' },
    });
    const incident = created.body.metadata.name;
    expect((await cli(['incidents', 'resolve', incident, '-n', 'shop'])).code).toBe(0);
    const pm = (
      await s.eventually(
        () => api(`/incidents/${incident}`),
        (i) => !!i.status.postmortem,
        120_000,
      )
    ).status.postmortem;

    const got = await cli(['postmortems', 'get', pm]);
    expect(rowsOf(got.stdout)).toEqual([
      ['NAME', 'NAMESPACE', 'INCIDENT', 'STATE', 'SEVERITY', 'REVIEWER', 'AGE'],
      [pm, 'shop', incident, 'Open', 'medium', '<none>', expect.any(String)],
    ]);
    await sameAsApi(['postmortems', 'get', pm], `/postmortems/${pm}`);

    const review = await cli(['postmortems', 'review', pm, '--notes', 'timeline checked']);
    expect(review).toMatchObject({ code: 0, stdout: `postmortem/${pm} in review (reviewer admin-user)\n` });
    const early = await cli(['postmortems', 'close', pm, '--reviewer', 'alice', '-o', 'json']);
    expect(JSON.parse(early.stdout)).toMatchObject({ status: { state: 'Closed', reviewer: 'alice' } });
    const closeAgain = await cli(['postmortems', 'close', pm]);
    expect(closeAgain.code).toBe(1);
    expect(closeAgain.stderr).toMatch(/^Error from server \(409 PostMortem already closed\): closed by alice at /);

    const audit = (await api(`/audit?action=postmortem.review&resource=${pm}`)).items;
    expect(audit[0]).toMatchObject({
      user: 'admin-user',
      details: expect.objectContaining({ reviewer: 'admin-user', notes: 'timeline checked' }),
      userAgent: expect.stringMatching(/^foghorn-cli\//),
    });
    const list = await cli(['postmortems', 'list', '--incident', incident]);
    expect(rowsOf(list.stdout)[1]).toEqual([pm, 'shop', incident, 'Closed', 'medium', 'alice', expect.any(String)]);
  });
});

describe('analytics', () => {
  /** The window and generation times move with every request. */
  const timeless = (a: Json) => {
    const copy = structuredClone(a);
    for (const key of ['from', 'to', 'generatedAt']) delete copy.metadata?.[key];
    delete copy.spec?.Period;
    return copy;
  };

  it('mttr, trends and compliance: tables for people, JSON equal to the API’s', async () => {
    const mttr = await cli(['analytics', 'mttr', '--period', '7d']);
    expect(mttr.code).toBe(0);
    expect(mttr.stdout).toMatch(/^MTTR over 7d \(/);
    expect(mttr.stdout).toMatch(/^SEVERITY\s+MEAN\s+MEDIAN\s+P95\s+P99\s+COUNT$/m);
    expect(mttr.stdout).toMatch(/^all\s+\S+\s+\S+\s+\S+\s+\S+\s+\d+$/m);
    await sameAsApi(['analytics', 'mttr', '--period', '7d'], '/analytics/mttr?period=7d', timeless);

    const trends = await cli(['analytics', 'trends', '--group-by', 'day']);
    const [header, ...days] = rowsOf(trends.stdout);
    expect(header).toEqual(['DATE', 'TOTAL', 'CRITICAL', 'HIGH', 'MEDIUM', 'LOW']);
    expect(days.length).toBeGreaterThan(0);
    await sameAsApi(['analytics', 'trends'], '/analytics/trends', timeless);

    const compliance = await cli(['analytics', 'compliance', '-n', 'shop']);
    expect(compliance.stdout).toMatch(/^incidents: +\d+$/m);
    expect(compliance.stdout).toMatch(/^SLA compliance %: +\S+$/m);
    await sameAsApi(['analytics', 'compliance', '-n', 'shop'], '/analytics/compliance?namespace=shop', timeless);

    const bad = await cli(['analytics', 'mttr', '--period', '3w']);
    expect(bad.code).toBe(2); // not among the choices: a usage error before any request
  });
});

describe('clusters', () => {
  it('an empty list, a registered cluster in the table and as JSON, and the 404 of an unknown one', async () => {
    const empty = await cli(['clusters', 'list']);
    expect(empty).toMatchObject({ code: 0, stdout: '', stderr: 'No clusters found.\n' });

    const res = await s.call('POST', '/clusters', {
      token: s.tokens.admin,
      body: {
        metadata: { name: 'cli-east' },
        spec: { displayName: 'East', tier: 'critical', region: 'us-east-1', kubeconfig: fakeKubeconfig() },
      },
    });
    expect(res.status).toBe(201);

    const list = await cli(['clusters', 'list']);
    const [header, row] = rowsOf(list.stdout);
    expect(header).toEqual(['NAME', 'NAMESPACE', 'TIER', 'REGION', 'CONNECTED', 'VERSION', 'NODES', 'ISSUES', 'AGE']);
    expect(row.slice(0, 4)).toEqual(['cli-east', 'default', 'critical', 'us-east-1']);
    await sameAsApi(['clusters', 'list'], '/federation/clusters');
    const got = await cli(['clusters', 'get', 'cli-east']);
    expect(rowsOf(got.stdout)[1].slice(0, 4)).toEqual(['cli-east', 'default', 'critical', 'us-east-1']);
    const detail = await sameAsApi(['clusters', 'get', 'cli-east'], '/clusters/cli-east');
    expect(JSON.stringify(detail)).not.toContain('fake-token-4f9c2a7e1b3d5c6a8e0f');

    const missing = await cli(['clusters', 'get', 'nowhere']);
    expect(missing).toMatchObject({
      code: 1,
      stderr: 'Error from server (404 Cluster not found): cluster nowhere is not registered in namespace default\n',
    });
  });
});

describe('completion', () => {
  it('the bash script completes commands, subcommands, options and -o values', async () => {
    const gen = await cli(['completion', 'bash']);
    expect(gen.code).toBe(0);
    const script = path.join(home, 'foghorn.bash');
    await writeFile(script, gen.stdout);
    const complete = async (...words: string[]) => {
      const { stdout } = await promisify(execFile)('bash', [
        '-c',
        `source "$1"; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _foghorn_complete; printf '%s\\n' "\${COMPREPLY[@]}"`,
        'bash',
        script,
      ]);
      return stdout.split('\n').filter(Boolean).sort();
    };
    expect(await complete('foghorn', 'inc')).toEqual(['incidents']);
    expect(await complete('foghorn', 'incidents', '')).toEqual(
      ['ack', 'get', 'list', 'resolve', 'snooze', 'timeline'].sort(),
    );
    expect(await complete('foghorn', 'incident', 'sn')).toEqual(['snooze']); // an alias leads there too
    expect(await complete('foghorn', 'audit', '')).toEqual(['export', 'list', 'verify', 'verify-file']);
    expect(await complete('foghorn', 'incidents', 'list', '--sev')).toEqual(['--severity']);
    expect(await complete('foghorn', 'incidents', 'list', '-o', '')).toEqual(['json', 'table', 'wide', 'yaml']);

    const zsh = await cli(['completion', 'zsh']);
    expect(zsh.code).toBe(0);
    expect(zsh.stdout).toMatch(/^#compdef foghorn/);
    expect(zsh.stdout).toContain("'foghorn incidents'");
    expect((await cli(['completion', 'fish'])).code).toBe(2);
  });
});
