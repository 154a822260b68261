import { mkdtemp, rm } from 'fs/promises';
import { tmpdir } from 'os';
import path from 'path';
import { parseSince } from '../../cli/client/changes';
import { revisionChange, scaleChange } from '../../domain/change-record';
import { recordChanges, recordRevision } from '../../store/changes';
import { useApi } from '../harness/api';
import { cliRunner, rowsOf } from './cli-client-helpers';

/**
 * `foghorn changes` (issue 60 §5): the change record through the CLI, a child process against
 * the API over a real MongoDB-wire server; the same answer as `GET /changes` with `-o json`, a
 * kubectl-style table otherwise, `--since` as a time or a duration back from now.
 */

jest.setTimeout(120_000);

let api: Awaited<ReturnType<typeof useApi>>;
let home: string;
let cli: ReturnType<typeof cliRunner>;

const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000);
const by = { manager: 'kubectl-client-side-apply', changeCause: 'kubectl set image', source: '', foghorn: false };
const tpl = (image: string) => ({ spec: { containers: [{ name: 'app', image }] } });

beforeAll(async () => {
  api = await useApi();
  home = await mkdtemp(path.join(tmpdir(), 'foghorn-cli-changes-'));
  cli = cliRunner({ baseUrl: api.baseUrl, token: api.tokens.viewer, home });
  const rollout = (revision: number, image: string, at: Date, previous?: string) =>
    revisionChange({
      cluster: 'prod',
      namespace: 'shop',
      workload: 'Deployment/checkout',
      revision,
      ...(previous && { previousRevision: revision - 1, previousTemplate: tpl(previous) }),
      template: tpl(image),
      at,
      by,
    });
  await recordChanges([
    rollout(1, 'checkout:1', minutesAgo(240)),
    rollout(2, 'checkout:2', minutesAgo(30), 'checkout:1'),
    scaleChange('prod', 'shop', 'Deployment/cart', 3, 2, 4, minutesAgo(20), {
      manager: 'foghorn',
      changeCause: '',
      source: '',
      foghorn: true,
    }),
  ]);
  const health = {
    cluster: 'prod',
    namespace: 'shop',
    resource: 'Deployment/checkout',
    replicaSet: 'checkout-abc',
    templateHash: 'abc',
    firstSeenAt: minutesAgo(240),
  };
  await recordRevision({
    ...health,
    revision: 1,
    images: ['app=checkout:1'],
    state: 'Healthy',
    healthyAt: minutesAgo(239),
  });
  await recordRevision({
    ...health,
    revision: 2,
    images: ['app=checkout:2'],
    state: 'Failed',
    failure: { signal: 'CrashLoopBackOff', reason: 'Error', exitCode: 1, at: minutesAgo(29) },
  });
}, 120_000);

afterAll(async () => {
  await api?.stop();
  if (home) await rm(home, { recursive: true, force: true });
});

it('-o json is the API answer; the table shows who, the revision and its health, newest first', async () => {
  const json = await cli(['changes', '--cluster', 'prod', '--resource', 'Deployment/checkout', '-o', 'json']);
  expect(json).toMatchObject({ code: 0, stderr: '' });
  const fromApi = await api.call('GET', '/changes?cluster=prod&resource=Deployment/checkout', {
    token: api.tokens.viewer,
  });
  expect(JSON.parse(json.stdout)).toEqual(fromApi.body);
  expect(fromApi.body.metadata.totalCount).toBe(2);

  const table = await cli(['changes', '--cluster', 'prod', '-n', 'shop']);
  expect(table.code).toBe(0);
  const rows = rowsOf(table.stdout);
  expect(rows[0]).toEqual(['AGE', 'CLUSTER', 'NAMESPACE', 'RESOURCE', 'TYPE', 'REVISION', 'HEALTH', 'BY', 'SUMMARY']);
  expect(rows.slice(1).map((r) => r.slice(1, 8))).toEqual([
    ['prod', 'shop', 'Deployment/cart', 'Scale', '<none>', '<none>', 'foghorn'],
    [
      'prod',
      'shop',
      'Deployment/checkout',
      'Rollout',
      '2<-1',
      'Failed(CrashLoopBackOff,exit=1)',
      'kubectl-client-side-apply',
    ],
    ['prod', 'shop', 'Deployment/checkout', 'Rollout', '1', 'Healthy', 'kubectl-client-side-apply'],
  ]);
  expect(table.stdout).toContain(
    'revision 2 of shop/Deployment/checkout replaced 1: image app checkout:1 → checkout:2',
  );

  const wide = await cli(['changes', '--resource', 'Deployment/checkout', '-o', 'wide']);
  expect(wide.stdout).toContain('image app: checkout:1 -> checkout:2');
  expect(wide.stdout).toContain('kubectl set image');
});

it('--since takes a duration back from now or an RFC 3339 time; nothing found is said on stderr', async () => {
  const recent = await cli(['changes', '--since', '2h', '-o', 'json']);
  expect(recent.code).toBe(0);
  expect(JSON.parse(recent.stdout).items.map((c: { resource: string }) => c.resource)).toEqual([
    'Deployment/cart',
    'Deployment/checkout',
  ]);
  const at = minutesAgo(25).toISOString();
  const since = await cli(['changes', '--since', at, '-o', 'json']);
  expect(JSON.parse(since.stdout).items.map((c: { type: string }) => c.type)).toEqual(['Scale']);

  const none = await cli(['changes', '--cluster', 'staging']);
  expect(none).toMatchObject({ code: 0, stdout: '', stderr: 'No changes found.\n' });
});

it('refuses a bad --since with a usage error, and a bad filter with the API’s 400', async () => {
  const bad = await cli(['changes', '--since', 'yesterday']);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain('must be an RFC 3339 time or a duration like 2h');
  const refused = await cli(['changes', '--resource', 'checkout']);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toMatch(/400|Invalid request/);
});

it('parseSince resolves a duration on the caller’s clock and keeps a time as it is', () => {
  const now = new Date('2026-12-07T12:00:00Z');
  expect(parseSince('2h', now)).toBe('2026-12-07T10:00:00.000Z');
  expect(parseSince('90m', now)).toBe('2026-12-07T10:30:00.000Z');
  expect(parseSince('2026-12-07T09:00:00+01:00', now)).toBe('2026-12-07T09:00:00+01:00');
  expect(() => parseSince('-1h', now)).toThrow('must not be negative');
  expect(() => parseSince('2026-13-40T00:00:00Z', now)).toThrow('RFC 3339');
});
