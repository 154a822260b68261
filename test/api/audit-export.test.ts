import { mkdtemp, rm, writeFile } from 'fs/promises';
import { tmpdir } from 'os';
import path from 'path';
import { AuditRecordModel } from '../../store/models';
import { seedAuditChain } from '../fixtures/audit-chain';
import { useApi } from '../harness/api';
import { TEST_AUDIT_KEY } from '../harness/mongo';
import { runCli } from '../harness/processes';

/**
 * GET /audit/export, synchronous side (issue 12 §1): up to 10,000 matching records streamed as
 * CSV or JSON, the JSON re-verifiable offline with `foghorn audit verify-file`, every export
 * audited, admins only. (The job above 10,000 is in test/workflows/audit-export.test.ts.)
 */

jest.setTimeout(180_000);

const HEADER = 'id,timestamp,action,user,role,resource,resourceType,namespace,sourceIP,checksum';
const today = () => new Date().toISOString().slice(0, 10).replace(/-/g, '');

let api: Awaited<ReturnType<typeof useApi>>;
let dir: string;

beforeAll(async () => {
  api = await useApi();
  dir = await mkdtemp(path.join(tmpdir(), 'foghorn-export-'));
  // 10,000 records by `bulk`, oldest 2026-01-01T00:00:00Z, one second apart.
  await seedAuditChain(10_000, {
    start: new Date('2026-01-01T00:00:00Z'),
    stepMs: 1000,
    entry: (i) => ({
      user: 'bulk',
      namespace: i % 4 === 0 ? 'prod' : 'dev',
      action: i % 10 === 0 ? 'incident.resolve' : 'config.update',
    }),
  });
  // Values a CSV must quote or neutralise, by `tricky`.
  await seedAuditChain(4, {
    start: new Date('2026-02-01T00:00:00Z'),
    entry: (i) =>
      [
        { user: 'tricky', resource: 'a,b', namespace: 'qa' },
        { user: 'tricky', resource: 'say "hi"', namespace: 'qa' },
        { user: 'tricky', resource: 'line1\nline2', namespace: 'qa' },
        { user: 'tricky', resource: '=HYPERLINK("http://evil")', sourceIP: '@SUM(A1)', namespace: '-qa' },
      ][i],
  });
});

afterAll(async () => {
  await api?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

it('10,000 records: 200 CSV, streamed, with the exact header, filename and one row per record', async () => {
  const res = await api.call('GET', '/audit/export?format=csv&user=bulk');
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
  expect(res.headers.get('content-disposition')).toBe(`attachment; filename="audit-export-${today()}.csv"`);
  const lines = res.text.split('\r\n');
  expect(lines[0]).toBe(HEADER);
  expect(lines.at(-1)).toBe(''); // the last row ends with CRLF too
  expect(lines).toHaveLength(1 + 10_000 + 1);
  // Oldest first: the chain's order.
  const first = lines[1].split(',');
  expect(first[1]).toBe('2026-01-01T00:00:00.000Z');
  expect(first[2]).toBe('incident.resolve');
  expect(first[3]).toBe('bulk');
  expect(first[9]).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
  expect(lines[10_000].split(',')[1]).toBe('2026-01-01T02:46:39.000Z'); // 9,999 s later
});

it('quotes commas, quotes and newlines (RFC 4180) and neutralises formulas', async () => {
  const res = await api.call('GET', '/audit/export?format=csv&user=tricky');
  expect(res.status).toBe(200);
  const rows = res.text.split('\r\n').slice(1, -1);
  expect(rows).toHaveLength(4);
  expect(rows[0]).toContain(',tricky,admin,"a,b",Config,qa,10.0.0.1,');
  expect(rows[1]).toContain(',tricky,admin,"say ""hi""",Config,qa,');
  expect(rows[2]).toContain(',tricky,admin,"line1\nline2",Config,qa,');
  // A leading = + - @ becomes text: prefixed with ', quoted when it also holds a quote or comma.
  expect(rows[3]).toContain(`,tricky,admin,"'=HYPERLINK(""http://evil"")",Config,'-qa,'@SUM(A1),`);
});

it('JSON: the AuditExport wrapper, which verify-file proves intact, and catches an edited, removed or reordered row', async () => {
  const res = await api.call('GET', '/audit/export?user=bulk&namespace=prod');
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(res.headers.get('content-disposition')).toBe(`attachment; filename="audit-export-${today()}.json"`);
  const file = res.body as any; // eslint-disable-line @typescript-eslint/no-explicit-any
  // Every 4th of 10,000 is in prod: 2,500.
  expect(file).toMatchObject({
    apiVersion: 'v1',
    kind: 'AuditExport',
    metadata: {
      totalRecords: 2_500,
      format: 'json',
      from: '2026-01-01T00:00:00.000Z',
      filters: { user: 'bulk', namespace: 'prod' },
    },
    integrity: { scheme: 'hmac-sha256' },
  });
  expect(file.records).toHaveLength(2_500);
  expect(Object.keys(file.records[0])).toEqual([
    'id',
    'timestamp',
    'action',
    'user',
    'role',
    'resource',
    'resourceType',
    'namespace',
    'sourceIP',
    'checksum',
    'seq',
    'previousChecksum',
    'details',
    'userAgent',
  ]);
  expect(file.records[1].timestamp).toBe('2026-01-01T00:00:04.000Z');

  const env = { FOGHORN_AUDIT_KEY: TEST_AUDIT_KEY, FOGHORN_DATA_DIR: dir };
  const good = path.join(dir, 'good.json');
  await writeFile(good, res.text);
  const ok = await runCli(['audit', 'verify-file', good], env);
  expect(ok.output).toContain('intact');
  expect(ok.code).toBe(0);

  const edited = structuredClone(file);
  edited.records[700].user = 'someone-else';
  const editedFile = path.join(dir, 'edited.json');
  await writeFile(editedFile, JSON.stringify(edited));
  const caught = await runCli(['audit', 'verify-file', editedFile], env);
  expect(caught.code).toBe(1);
  expect(caught.output).toContain('NOT INTACT');
  expect(caught.output).toContain(`row 701, ${file.records[700].id}`);

  const removed = structuredClone(file);
  removed.records.splice(10, 1);
  removed.metadata.totalRecords -= 1;
  const removedFile = path.join(dir, 'removed.json');
  await writeFile(removedFile, JSON.stringify(removed));
  const gone = await runCli(['audit', 'verify-file', removedFile, '--json'], env);
  expect(gone.code).toBe(1);
  expect(JSON.parse(gone.output)).toMatchObject({ intact: false, sealValid: false });

  const reordered = structuredClone(file);
  [reordered.records[20], reordered.records[21]] = [reordered.records[21], reordered.records[20]];
  const reorderedFile = path.join(dir, 'reordered.json');
  await writeFile(reorderedFile, JSON.stringify(reordered));
  const swapped = await runCli(['audit', 'verify-file', reorderedFile], env);
  expect(swapped.code).toBe(1);
  expect(swapped.output).toContain('row 22');
  expect(swapped.output).toContain('reordered');

  const wrongKey = await runCli(['audit', 'verify-file', good], {
    ...env,
    FOGHORN_AUDIT_KEY: 'another-key-of-enough-length-0123456789',
  });
  expect(wrongKey.code).toBe(1);

  const csv = path.join(dir, 'export.csv');
  await writeFile(csv, (await api.call('GET', '/audit/export?format=csv&user=tricky')).text);
  const notJson = await runCli(['audit', 'verify-file', csv], env);
  expect(notJson.code).toBe(2);
  expect(notJson.output).toContain('format=json');
});

it('filters by action, namespace and time; an empty result is still a valid file', async () => {
  const byAction = await api.call('GET', '/audit/export?user=bulk&action=incident.resolve&format=csv');
  expect(byAction.text.split('\r\n')).toHaveLength(1 + 1_000 + 1); // every 10th of 10,000
  // [00:01:40, 00:03:19]: records 100..199, of which 100 110 … 190 are resolves.
  const window = await api.call(
    'GET',
    '/audit/export?user=bulk&action=incident.resolve&start=2026-01-01T00:01:40Z&end=2026-01-01T00:03:19Z',
  );
  expect(window.body.metadata).toMatchObject({
    totalRecords: 10,
    from: '2026-01-01T00:01:40.000Z',
    to: '2026-01-01T00:03:19.000Z',
  });
  expect(window.body.records.map((r: { details: { i: number } }) => r.details.i)).toEqual([
    100, 110, 120, 130, 140, 150, 160, 170, 180, 190,
  ]);
  const none = await api.call('GET', '/audit/export?user=nobody');
  expect(none.status).toBe(200);
  expect(none.body).toMatchObject({ metadata: { totalRecords: 0 }, records: [] });
});

it('every export is itself audited: who, filters and the record count', async () => {
  await api.call('GET', '/audit/export?format=csv&user=tricky&namespace=qa');
  const list = await api.call('GET', '/audit?action=audit.export&pageSize=1');
  expect(list.body.items[0]).toMatchObject({
    action: 'audit.export',
    user: 'admin-user',
    role: 'admin',
    resourceType: 'AuditExport',
    namespace: 'qa',
    details: { format: 'csv', mode: 'sync', records: 3, filters: { user: 'tricky', namespace: 'qa' } },
  });
});

it('over 10,000 records without Temporal: 503, and nothing is streamed', async () => {
  await seedAuditChain(1, { entry: () => ({ user: 'bulk' }) });
  const res = await api.call('GET', '/audit/export?user=bulk');
  expect(res.status).toBe(503);
  expect(res.body.error.message).toBe('Service unavailable');
});

it('admins only; bad parameters are 400', async () => {
  for (const role of ['viewer', 'operator'] as const) {
    const res = await api.call('GET', '/audit/export', { token: api.tokens[role] });
    expect(res.status).toBe(403);
    expect(res.body.error.message).toBe('Forbidden');
    expect(
      (await api.call('GET', '/audit/export/download/export-20260101-001', { token: api.tokens[role] })).status,
    ).toBe(403);
  }
  expect((await api.call('GET', '/audit/export', { token: null })).status).toBe(401);
  for (const q of [
    'format=xml',
    'start=yesterday',
    'action=nope',
    'start=2026-02-01T00:00:00Z&end=2026-01-01T00:00:00Z',
  ]) {
    const res = await api.call('GET', `/audit/export?${q}`);
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe('Invalid request');
  }
  const unknown = await api.call('GET', '/audit/export/download/export-20260101-999');
  expect(unknown.status).toBe(404);
  expect(unknown.body.error.message).toBe('AuditExportJob not found');
});

it('the chain still verifies in the database after the exports', async () => {
  expect(await AuditRecordModel.countDocuments({ action: 'audit.export' })).toBeGreaterThan(0);
  const res = await api.call('GET', '/audit/verify');
  expect(res.body.status).toMatchObject({ intact: true });
});
