import { mkdtempSync, rmSync } from 'fs';
import { readFile, stat } from 'fs/promises';
import mongoose from 'mongoose';
import { tmpdir } from 'os';
import path from 'path';
import { devEnv, startDev, stopDev, waitReady, type DevProcess } from '../harness/dev-process';

/**
 * The audit chain as `foghorn dev` runs it: a generated key under the data dir (never printed),
 * a final checkpoint on shutdown, mirrored to the data dir, and a tail cut found after a restart
 * even when the database checkpoints are deleted too.
 */
describe('audit chain under foghorn dev (e2e)', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'foghorn-audit-e2e-'));
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    env = await devEnv(dataDir);
  });
  afterAll(async () => {
    await mongoose.disconnect();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const verify = async (run: DevProcess) => {
    const res = await fetch(`${run.api}/audit/verify`, { headers: { authorization: `Bearer ${run.token}` } });
    expect(res.status).toBe(200);
    return ((await res.json()) as { status: Record<string, unknown> }).status;
  };

  it('checkpoints on shutdown and reports a tail cut after a restart', async () => {
    const first = await startDev(env);
    try {
      await waitReady(first.api);
      for (const user of ['a', 'b', 'c']) {
        const res = await fetch(`${first.api}/tokens`, {
          method: 'POST',
          headers: { authorization: `Bearer ${first.token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ user, role: 'viewer' }),
        });
        expect(res.status).toBe(201); // audited as token.create
      }
    } finally {
      await stopDev(first);
    }

    const keyFile = path.join(dataDir, 'audit-key');
    expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
    const key = (await readFile(keyFile, 'utf8')).trim();
    expect(key.length).toBeGreaterThanOrEqual(32);
    expect(first.output()).not.toContain(key);
    const mirrorFile = path.join(dataDir, 'audit-checkpoint.json');
    expect((await stat(mirrorFile)).mode & 0o777).toBe(0o600);
    const mirror = JSON.parse(await readFile(mirrorFile, 'utf8')) as { seq: number; signature: string };
    expect(mirror.signature).toMatch(/^hmac-sha256:/);

    const second = await startDev(env);
    try {
      await waitReady(second.api);
      const intact = await verify(second);
      expect(intact).toMatchObject({ intact: true, legacyRecords: 0, invalidCheckpoints: [] });
      // The shutdown checkpoint saw every record written before the stop.
      expect(mirror.seq).toBeGreaterThanOrEqual(3);
      expect(intact.checkpoint).toMatchObject({ seq: expect.any(Number) });
      expect((intact.checkpoint as { seq: number }).seq).toBeGreaterThanOrEqual(mirror.seq);

      // Someone with database access (but not the key) deletes the newest record and every checkpoint.
      await mongoose.connect(/MongoDB:\s+(\S+)/.exec(second.output())![1]);
      const db = mongoose.connection.db!;
      const [newest] = await db.collection('audit_records').find().sort({ seq: -1 }).limit(1).toArray();
      await db.collection('audit_records').deleteOne({ _id: newest._id });
      await db.collection('audit_checkpoints').deleteMany({});
      const cut = await verify(second);
      expect(cut).toMatchObject({
        intact: false,
        tailCut: { headSeq: newest.seq - 1, checkpointSeq: newest.seq },
        checkpoint: { seq: newest.seq, source: 'file' },
      });
      expect(JSON.stringify(cut)).not.toContain(key);
    } finally {
      await stopDev(second);
    }
    expect(second.output()).not.toContain((await readFile(keyFile, 'utf8')).trim());
  }, 300_000);
});
