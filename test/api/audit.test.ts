import { execFile } from 'child_process';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'fs/promises';
import mongoose from 'mongoose';
import { tmpdir } from 'os';
import path from 'path';
import { promisify } from 'util';
import { verifySchema } from '../../api/routes/audit';
import { ensureAuditKey } from '../../cli/services';
import {
  GENESIS_CHECKSUM,
  keyedAuditChecksum,
  legacyAuditChecksum,
  signCheckpoint,
  type AuditRecord,
} from '../../domain/audit';
import { parseConfig } from '../../config/env';
import { REDACTED } from '../../domain/redact';
import {
  appendAudit,
  configureAuditCheckpointFile,
  configureAuditKey,
  startAuditCheckpointer,
  verifyAuditChain,
  writeAuditCheckpoint,
} from '../../store/audit';
import { AuditCheckpointModel, AuditRecordModel, NameClaim } from '../../store/models';
import { allocateName, allocateNamesAt } from '../../store/names';
import { useApi } from '../harness/api';
import { TEST_AUDIT_KEY } from '../harness/mongo';

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
          env: { ...process.env, FOGHORN_AUDIT_KEY: TEST_AUDIT_KEY },
        }),
      ),
    );
    const report = await verifyAuditChain();
    expect(report).toMatchObject({ intact: true, totalRecords: before + 45, verifiedRecords: before + 45 });
  }, 90_000);

  it('group-commits concurrent appends: each event once, an invalid entry failing alone', async () => {
    const before = await AuditRecordModel.countDocuments();
    const commands: string[] = [];
    // Mongoose's debug hook sees every collection call this process makes.
    mongoose.set('debug', (collection: string, method: string) => void commands.push(`${collection}.${method}`));
    let results: PromiseSettledResult<AuditRecord>[];
    try {
      results = await Promise.allSettled([
        ...Array.from({ length: 30 }, (_, i) =>
          appendAudit(entry(100 + i), new Date(), i < 10 ? `batch-key-${i % 5}` : undefined),
        ),
        appendAudit({ ...entry(99), user: '' }), // required: refused alone
      ]);
    } finally {
      mongoose.set('debug', false);
    }
    const refused = results.pop()!;
    expect(refused).toMatchObject({ status: 'rejected', reason: { message: expect.stringMatching(/user/) } });
    const records = results.map((r) => (r as PromiseFulfilledResult<AuditRecord>).value);
    // Asked twice under one key: the same record, written once.
    for (let i = 0; i < 5; i++) expect(records[i + 5]).toEqual(records[i]);
    expect(await AuditRecordModel.countDocuments()).toBe(before + 25);
    expect(new Set(records.map((r) => r.seq)).size).toBe(25);
    // Asked for at once, they were written in a few batches, not one command sequence each.
    const inserts = commands.filter((c) => c === 'audit_records.insertMany').length;
    expect(inserts).toBeGreaterThan(0);
    expect(inserts).toBeLessThan(10);
    expect(await verifyAuditChain()).toMatchObject({ intact: true, totalRecords: before + 25 });
    // A retry of a keyed event (a retried activity) returns the stored record, writes nothing.
    expect(await appendAudit(entry(103), new Date(), 'batch-key-3')).toEqual(records[3]);
    expect(await AuditRecordModel.countDocuments()).toBe(before + 25);
  });

  it('allocates unique names under concurrency, those asked for together in shared counter steps', async () => {
    const steps: string[] = [];
    mongoose.set('debug', (collection: string, method: string) => {
      if (collection === 'counters') steps.push(method);
    });
    let names: string[];
    try {
      names = await Promise.all(
        Array.from({ length: 60 }, (_, i) => allocateName(i % 3 ? 'INC' : 'AI', new Date('2026-03-04T05:06:07Z'))),
      );
    } finally {
      mongoose.set('debug', false);
    }
    expect(new Set(names).size).toBe(60);
    names.forEach((n, i) => expect(n).toMatch(i % 3 ? /^INC-20260304-\d{3,}$/ : /^AI-20260304-\d{3,}$/));
    expect(steps.length).toBeLessThan(30);
  });

  it('allocates names for many dates at once: in order, per day, skipping claims already taken', async () => {
    const day1 = new Date('2026-05-06T23:59:00Z');
    const day2 = new Date('2026-05-07T00:01:00Z');
    const [first] = await Promise.all([allocateName('PM', day1)]);
    // A claim a racing writer already holds (the embedded store's findAndModify is not atomic).
    const next = Number(first.split('-')[2]) + 2;
    await NameClaim.create({ _id: `PM-20260506-${String(next).padStart(3, '0')}`, claimedAt: new Date() });
    const names = await allocateNamesAt('PM', [day1, day2, day1, day1, day2]);
    expect(names.filter((n) => n.startsWith('PM-20260506-'))).toHaveLength(3);
    expect([names[1], names[4]]).toEqual(['PM-20260507-001', 'PM-20260507-002']);
    expect(new Set([first, ...names]).size).toBe(6);
    expect(names).not.toContain(`PM-20260506-${String(next).padStart(3, '0')}`);
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

  describe('keyed chain, checkpoints and verify', () => {
    let dir: string;
    let mirror: string;
    beforeAll(async () => {
      dir = await mkdtemp(path.join(tmpdir(), 'foghorn-audit-'));
      mirror = path.join(dir, 'audit-checkpoint.json');
    });
    afterAll(async () => {
      configureAuditCheckpointFile(undefined);
      await rm(dir, { recursive: true, force: true });
    });
    beforeEach(async () => {
      configureAuditKey(TEST_AUDIT_KEY);
      configureAuditCheckpointFile(mirror);
      await AuditRecordModel.deleteMany({});
      await AuditCheckpointModel.deleteMany({});
      await rm(mirror, { force: true });
    });

    const appendSome = async (n: number) => {
      const out: AuditRecord[] = [];
      for (let i = 0; i < n; i++) out.push(await appendAudit(entry(i)));
      return out;
    };
    const verify = async () => {
      const res = await api.call('GET', '/audit/verify');
      expect(res.status).toBe(200);
      // The answer is what the OpenAPI document says it is, and never shows the key.
      expect(verifySchema.safeParse(res.body).error).toBeUndefined();
      expect(res.text).not.toContain(TEST_AUDIT_KEY);
      return res.body.status;
    };
    const chainOrder = () => AuditRecordModel.find({}).sort({ seq: 1 }).lean<Array<AuditRecord & { _id: unknown }>>();

    /** What someone with database access but without the key does: edit, then re-chain every later record. */
    async function forge(seq: number, rule: (r: Omit<AuditRecord, 'checksum'>, previous: string) => string) {
      const docs = await chainOrder();
      let previous = GENESIS_CHECKSUM;
      for (const doc of docs) {
        const { _id, checksum, ...rest } = doc;
        if (doc.seq >= seq) {
          const unsigned = { ...rest, user: doc.seq === seq ? 'mallory' : rest.user };
          const forged = rule(unsigned, previous);
          await AuditRecordModel.updateOne({ _id }, { $set: { user: unsigned.user, checksum: forged } });
          previous = forged;
        } else previous = checksum;
      }
    }

    it('writes hmac-sha256 checksums and an intact chain', async () => {
      const records = await appendSome(4);
      for (const r of records) expect(r.checksum).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
      expect(await verify()).toMatchObject({
        intact: true,
        totalRecords: 4,
        verifiedRecords: 4,
        keyedRecords: 4,
        legacyRecords: 0,
        missing: [],
        invalidCheckpoints: [],
        head: { seq: 4, checksum: records[3].checksum },
      });
    });

    it('finds a forged user when later checksums were recomputed with unkeyed sha256', async () => {
      const records = await appendSome(6);
      await forge(3, (r, previous) => legacyAuditChecksum(r, previous));
      expect(await verify()).toMatchObject({
        intact: false,
        verifiedRecords: 2,
        brokenRecords: 4,
        firstBroken: { id: records[2].id, seq: 3, problem: 'downgrade' },
      });
    });

    it('finds a forged user when later checksums were recomputed with HMAC under a wrong key', async () => {
      const records = await appendSome(6);
      await forge(3, (r, previous) => keyedAuditChecksum(r, previous, 'wrong-key-wrong-key-wrong-key-wrong-key'));
      expect(await verify()).toMatchObject({
        intact: false,
        verifiedRecords: 2,
        firstBroken: { id: records[2].id, seq: 3, problem: 'checksum', reason: expect.stringContaining('checksum') },
      });
    });

    it('reports deleting the newest records after a checkpoint as a tail cut', async () => {
      const records = await appendSome(5);
      expect(await writeAuditCheckpoint()).toMatchObject({ status: 'written', seq: 5 });
      await AuditRecordModel.deleteMany({ seq: { $gte: 4 } });
      const status = await verify();
      expect(status).toMatchObject({
        intact: false,
        totalRecords: 3,
        verifiedRecords: 3,
        head: { seq: 3 },
        tailCut: { headSeq: 3, checkpointSeq: 5, missingFromSeq: 4, missingToSeq: 5 },
        checkpoint: { seq: 5, checksum: records[4].checksum },
      });
      expect(status.firstBroken).toBeUndefined();

      // Deleting the database checkpoints too does not help: the mirror file still has seq 5,
      // and a checkpointer that runs after the cut never moves the mirror back.
      await AuditCheckpointModel.deleteMany({});
      expect(await writeAuditCheckpoint()).toMatchObject({ status: 'written', seq: 3 });
      expect(JSON.parse(await readFile(mirror, 'utf8'))).toMatchObject({ seq: 5, checksum: records[4].checksum });
      expect(await verify()).toMatchObject({
        intact: false,
        tailCut: { headSeq: 3, checkpointSeq: 5 },
        checkpoint: { seq: 5, source: 'file' },
      });
    });

    it('reports records missing in the middle with the missing range', async () => {
      const records = await appendSome(7);
      await AuditRecordModel.deleteMany({ seq: { $in: [3, 4] } });
      expect(await verify()).toMatchObject({
        intact: false,
        verifiedRecords: 2,
        brokenRecords: 0,
        missing: [{ fromSeq: 3, toSeq: 4 }],
        missingRecords: 2,
        firstBroken: { id: records[4].id, seq: 5, problem: 'missing' },
        head: { seq: 7 },
      });
    });

    it('keeps legacy sha256 records verifiable, followed by keyed ones', async () => {
      // Records as the writer before the key stored them.
      let previous = GENESIS_CHECKSUM;
      for (let seq = 1; seq <= 3; seq++) {
        const unsigned = {
          ...entry(seq),
          id: await allocateName('audit', new Date('2026-01-01T00:00:00Z')),
          seq,
          timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, seq)),
        };
        previous = legacyAuditChecksum(unsigned, previous);
        await AuditRecordModel.create({ ...unsigned, checksum: previous });
      }
      const keyed = await appendSome(2);
      expect(keyed[0].seq).toBe(4);
      expect(await verify()).toMatchObject({
        intact: true,
        totalRecords: 5,
        verifiedRecords: 5,
        legacyRecords: 3,
        keyedRecords: 2,
      });
      // A legacy-style record after the keyed ones is a downgrade.
      const last = await AuditRecordModel.findOne({ seq: 5 }).lean<AuditRecord & { _id: unknown }>();
      const { _id, checksum: _c, ...unsigned } = last!;
      const prev = (await AuditRecordModel.findOne({ seq: 4 }).lean<AuditRecord>())!.checksum;
      await AuditRecordModel.updateOne({ _id }, { $set: { checksum: legacyAuditChecksum(unsigned, prev) } });
      expect(await verify()).toMatchObject({ intact: false, firstBroken: { seq: 5, problem: 'downgrade' } });
    });

    it('reports forged checkpoints, in the database and in the mirror file', async () => {
      const records = await appendSome(3);
      await writeAuditCheckpoint();
      expect(await verify()).toMatchObject({ intact: true, checkpoint: { seq: 3 } });
      const database = mongoose.connection.name;
      // Someone without the key claims a longer chain (or re-signs a cut one): a bad signature.
      const bogus = signCheckpoint(
        { database, seq: 40, checksum: records[2].checksum, at: new Date() },
        'wrong-key-wrong-key-wrong-key-wrong-key',
      );
      await AuditCheckpointModel.collection.insertOne({ ...bogus });
      let status = await verify();
      expect(status).toMatchObject({
        intact: false,
        checkpoint: { seq: 3 },
        invalidCheckpoints: [{ source: 'database', seq: 40, reason: expect.stringContaining('signature') }],
      });
      expect(status.tailCut).toBeUndefined();

      await AuditCheckpointModel.deleteMany({ seq: 40 });
      const file = JSON.parse(await readFile(mirror, 'utf8'));
      await writeFile(mirror, JSON.stringify({ ...file, seq: 2 }));
      status = await verify();
      expect(status).toMatchObject({
        intact: false,
        invalidCheckpoints: [{ source: 'file', seq: 2, reason: expect.stringContaining('signature') }],
      });
      await writeFile(mirror, 'not json');
      expect((await verify()).invalidCheckpoints).toEqual([
        { source: 'file', seq: null, at: null, reason: expect.stringContaining('signature') },
      ]);
    });

    it('keeps checkpoints idempotent when many writers checkpoint at once', async () => {
      await appendSome(2);
      const results = await Promise.all(Array.from({ length: 12 }, () => writeAuditCheckpoint()));
      expect(results.filter((r) => r.status === 'written')).toHaveLength(1);
      expect(results.every((r) => r.status === 'written' || r.status === 'exists')).toBe(true);
      expect(await AuditCheckpointModel.countDocuments({ seq: 2 })).toBe(1);
      expect(JSON.parse(await readFile(mirror, 'utf8'))).toMatchObject({ seq: 2 });
      expect(await verify()).toMatchObject({ intact: true, checkpoint: { seq: 2 } });
    });

    it('does not sign a head whose own link does not verify', async () => {
      await appendSome(2);
      await AuditRecordModel.updateOne({ seq: 2 }, { $set: { user: 'mallory' } });
      expect(await writeAuditCheckpoint()).toEqual({ status: 'head-invalid', seq: 2 });
      expect(await AuditCheckpointModel.countDocuments()).toBe(0);
    });

    it('checkpoints on start, on every tick and on stop', async () => {
      const errors: unknown[] = [];
      const checkpointer = startAuditCheckpointer({ intervalMs: 100, onError: (e) => errors.push(e) });
      try {
        await appendSome(2);
        const deadline = Date.now() + 30_000;
        while (!(await AuditCheckpointModel.exists({ seq: 2 }))) {
          if (Date.now() > deadline) throw new Error('no checkpoint of seq 2 within 30 s');
          await new Promise((r) => setTimeout(r, 100));
        }
        await appendAudit(entry(99));
      } finally {
        await checkpointer.stop();
      }
      // stop() wrote the last head, whatever the ticks did.
      expect(await AuditCheckpointModel.exists({ seq: 3 })).not.toBeNull();
      expect(errors).toEqual([]);
    });

    it('refuses to append, checkpoint or verify without a key', async () => {
      configureAuditKey(undefined);
      await expect(appendAudit(entry(1))).rejects.toThrow(/audit key not configured/);
      await expect(writeAuditCheckpoint()).rejects.toThrow(/audit key not configured/);
      await expect(verifyAuditChain()).rejects.toThrow(/audit key not configured/);
      expect(await AuditRecordModel.countDocuments()).toBe(0);
      expect(() => configureAuditKey('short')).toThrow(/at least 32/);
    });

    it('redacts secrets in audit details before they are stored and checksummed', async () => {
      const secretToken = 'fh_' + 'S'.repeat(43);
      const record = await appendAudit({
        ...entry(1),
        details: {
          authorization: `Bearer ${secretToken}`,
          apiKey: 'sk-live-123456',
          webhook: { 'x-foghorn-secret': 'hush', note: `rotated ${secretToken}` },
          kept: 'visible',
        },
      });
      expect(record.details).toEqual({
        authorization: REDACTED,
        apiKey: REDACTED,
        webhook: { 'x-foghorn-secret': REDACTED, note: `rotated ${REDACTED}` },
        kept: 'visible',
      });
      const stored = await AuditRecordModel.findOne({ id: record.id }).lean();
      expect(stored!.details).toEqual(record.details);
      const listed = await api.call('GET', '/audit');
      for (const secret of [secretToken, 'sk-live-123456', 'hush']) expect(listed.text).not.toContain(secret);
      expect(await verify()).toMatchObject({ intact: true });
    });

    it('generates one audit key under the data dir, mode 600, even for processes starting at once', async () => {
      const dataDir = path.join(dir, 'data');
      const config = parseConfig({ FOGHORN_DATA_DIR: dataDir });
      const results = await Promise.all(Array.from({ length: 6 }, () => ensureAuditKey(config)));
      const file = path.join(dataDir, 'audit-key');
      expect(results.every((r) => r.source === file)).toBe(true);
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      expect((await readdir(dataDir)).sort()).toEqual(['audit-key']); // no temporary file left behind
      const key = (await readFile(file, 'utf8')).trim();
      expect(key.length).toBeGreaterThanOrEqual(32);
      // The store now writes with that key: verifying under it alone finds an intact chain.
      await appendSome(2);
      configureAuditKey(key);
      expect(await verify()).toMatchObject({ intact: true, keyedRecords: 2 });

      // A process that finds keyed records but no key must not invent one.
      const elsewhere = parseConfig({ FOGHORN_DATA_DIR: path.join(dir, 'other') });
      await expect(ensureAuditKey(elsewhere)).rejects.toThrow(/FOGHORN_AUDIT_KEY/);
      await expect(stat(path.join(dir, 'other', 'audit-key'))).rejects.toThrow();
      // Nor may a process with another key join the chain (another host's generated key, a typo).
      await expect(ensureAuditKey(parseConfig({ FOGHORN_AUDIT_KEY: TEST_AUDIT_KEY }))).rejects.toThrow(
        /started with another audit key/,
      );
      // After a rotation the old key is retired, not forgotten: the chain is still ours.
      const rotated = parseConfig({ FOGHORN_AUDIT_KEY: TEST_AUDIT_KEY, FOGHORN_AUDIT_RETIRED_KEYS: key });
      expect(await ensureAuditKey(rotated)).toEqual({ source: 'FOGHORN_AUDIT_KEY' });
      await appendSome(1);
      expect(await verify()).toMatchObject({ intact: true, keyedRecords: 3, checkpoint: { seq: 0 } });
      // The genesis checkpoint signed by the first key is the chain's claim, and is verified like any other.
      expect(await AuditCheckpointModel.countDocuments({ seq: 0 })).toBe(1);
    });

    it('documents the verification fields in the OpenAPI document', async () => {
      const doc = (await api.call('GET', '/api/v1/openapi.json', { token: null })).body;
      const [, verifyPath] = Object.entries(doc.paths).find(([p]) => p.endsWith('/audit/verify'))!;
      const text = JSON.stringify(verifyPath);
      for (const field of ['tailCut', 'missing', 'missingRecords', 'checkpoint', 'invalidCheckpoints', 'problem'])
        expect(text).toContain(`"${field}"`);
    });
  });
});
