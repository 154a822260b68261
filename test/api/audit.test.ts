import { execFile } from 'child_process';
import path from 'path';
import { promisify } from 'util';
import { appendAudit, verifyAuditChain } from '../../store/audit';
import { AuditRecordModel } from '../../store/models';
import { allocateName } from '../../store/names';
import { useApi } from '../harness/api';

const run = promisify(execFile);
const entry = (i: number) => ({
  action: 'config.update' as const,
  user: 'tester',
  role: 'admin' as const,
  resource: `r-${i}`,
  resourceType: 'Config',
  namespace: i % 2 ? 'prod' : 'dev',
  details: { i, nested: { b: 2, a: [1, { z: true }] } },
  sourceIP: '127.0.0.1',
  userAgent: 'jest',
});

describe('audit log', () => {
  let api: Awaited<ReturnType<typeof useApi>>;
  beforeAll(async () => {
    api = await useApi();
  });
  afterAll(() => api?.stop());

  it('keeps one unbroken chain under concurrent writers in this process', async () => {
    const records = await Promise.all(Array.from({ length: 40 }, (_, i) => appendAudit(entry(i))));
    expect(new Set(records.map((r) => r.seq)).size).toBe(40);
    expect(new Set(records.map((r) => r.id)).size).toBe(40);
    for (const r of records) expect(r.id).toMatch(/^audit-\d{8}-\d{3,}$/);
    expect(await verifyAuditChain()).toMatchObject({ intact: true, totalRecords: 40, verifiedRecords: 40 });
  });

  it('keeps one unbroken chain when separate processes append at once', async () => {
    const before = await AuditRecordModel.countDocuments();
    const script = path.join(__dirname, '../fixtures/audit-writer.ts');
    await Promise.all(
      ['p1', 'p2', 'p3'].map((label) =>
        run(process.execPath, ['-r', 'ts-node/register/transpile-only', script, api.mongo.uri, '15', label], {
          timeout: 60_000,
        }),
      ),
    );
    const report = await verifyAuditChain();
    expect(report).toMatchObject({ intact: true, totalRecords: before + 45, verifiedRecords: before + 45 });
  }, 90_000);

  it('allocates unique names under concurrency', async () => {
    const names = await Promise.all(
      Array.from({ length: 60 }, () => allocateName('INC', new Date('2026-03-04T05:06:07Z'))),
    );
    expect(new Set(names).size).toBe(60);
    for (const n of names) expect(n).toMatch(/^INC-20260304-\d{3,}$/);
  });

  it('lists newest first with filters and pagination', async () => {
    const all = await api.call('GET', '/audit?pageSize=200', { token: api.tokens.operator });
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ apiVersion: 'v1', kind: 'AuditLogList', metadata: { page: 1, pageSize: 200 } });
    const seqs = all.body.items.map((r: { id: string }) => r.id);
    expect(all.body.items.length).toBe(Math.min(200, all.body.metadata.totalCount));
    expect(seqs.length).toBeGreaterThan(0);
    const first = all.body.items[0];
    for (const field of [
      'id',
      'timestamp',
      'action',
      'user',
      'role',
      'resource',
      'resourceType',
      'namespace',
      'details',
      'sourceIP',
      'userAgent',
      'checksum',
    ]) {
      expect(first).toHaveProperty(field);
    }

    const byUser = await api.call('GET', '/audit?user=p2', { token: api.tokens.operator });
    expect(byUser.body.metadata.totalCount).toBe(15);
    expect(byUser.body.items.every((r: { user: string }) => r.user === 'p2')).toBe(true);
    const byResource = await api.call('GET', '/audit?resource=r-3&action=config.update');
    expect(byResource.body.items.map((r: { resource: string }) => r.resource)).toEqual(['r-3']);
    const future = await api.call('GET', '/audit?from=2999-01-01T00:00:00Z');
    expect(future.body).toMatchObject({ metadata: { totalCount: 0 }, items: [] });
    const past = await api.call('GET', '/audit?to=2000-01-01T00:00:00Z');
    expect(past.body.metadata.totalCount).toBe(0);

    const defaultPage = await api.call('GET', '/audit');
    expect(defaultPage.body.metadata).toMatchObject({ page: 1, pageSize: 50 });
    const beyond = await api.call('GET', '/audit?page=999');
    expect(beyond.status).toBe(200);
    expect(beyond.body.items).toEqual([]);
    expect(beyond.body.metadata.totalCount).toBe(all.body.metadata.totalCount);
  });

  it.each([
    ['pageSize=201', 'query.pageSize'],
    ['page=0', 'query.page'],
    ['pageSize=abc', 'query.pageSize'],
    ['action=incident.explode', 'query.action'],
    ['from=yesterday', 'query.from'],
  ])('rejects %s with 400 naming the field', async (qs, field) => {
    const res = await api.call('GET', `/audit?${qs}`);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      apiVersion: 'v1',
      kind: 'Error',
      error: { code: 400, message: 'Invalid request', details: expect.stringContaining(field) },
    });
  });

  it('is for operators and up; verification is for admins', async () => {
    expect((await api.call('GET', '/audit', { token: api.tokens.viewer })).status).toBe(403);
    expect((await api.call('GET', '/audit/verify', { token: api.tokens.operator })).status).toBe(403);
  });

  it('reports the first tampered record', async () => {
    const ok = await api.call('GET', '/audit/verify');
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ apiVersion: 'v1', kind: 'AuditChainVerification', status: { intact: true } });

    const victim = await AuditRecordModel.findOne({ resource: 'r-7' }).lean();
    await AuditRecordModel.updateOne({ _id: victim!._id }, { $set: { 'details.i': 700 } });
    const broken = await api.call('GET', '/audit/verify');
    expect(broken.body.status).toMatchObject({
      intact: false,
      verifiedRecords: victim!.seq - 1,
      firstBroken: { id: victim!.id, seq: victim!.seq, reason: expect.stringContaining('checksum') },
    });

    await AuditRecordModel.updateOne({ _id: victim!._id }, { $set: { 'details.i': 7 } });
    expect((await api.call('GET', '/audit/verify')).body.status.intact).toBe(true);
    await AuditRecordModel.deleteOne({ _id: victim!._id });
    const gap = await api.call('GET', '/audit/verify');
    expect(gap.body.status).toMatchObject({
      intact: false,
      firstBroken: { seq: victim!.seq + 1, reason: expect.stringContaining('missing') },
    });
  });
});
