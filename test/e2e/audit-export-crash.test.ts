import { mkdtempSync, rmSync } from 'fs';
import mongoose from 'mongoose';
import { tmpdir } from 'os';
import path from 'path';
import { verifyExportFile } from '../../contracts/audit';
import { getExportJob } from '../../store/audit-exports';
import { connectMongo, disconnectMongo } from '../../store/connection';
import { seedAuditChain } from '../fixtures/audit-chain';
import { TEST_AUDIT_KEY } from '../harness/mongo';
import { killAll, survivors, until } from '../harness/processes';
import { useSplitStack, type SplitStack } from '../harness/split-stack';

/**
 * kill -9 of the worker in the middle of an audit export job (issue 12 §3), end to end: the
 * Temporal dev server in real time, `foghorn api` and `foghorn worker` as processes. The next
 * worker resumes after the last committed batch: the file holds every record exactly once and
 * its chain verifies; no part of the dead attempt is left behind.
 */

jest.setTimeout(10 * 60_000);

const RECORDS = 50_000;

let stack: SplitStack;
let dataDir: string;

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'foghorn-export-crash-'));
  stack = await useSplitStack(dataDir, {
    FOGHORN_AUDIT_KEY: TEST_AUDIT_KEY,
    FOGHORN_LLM_BASE_URL: '',
    FOGHORN_STT: '',
    FOGHORN_WEBHOOK_HOME_CHANNEL: '',
  });
  await connectMongo(stack.mongoUri);
  await seedAuditChain(RECORDS, { entry: (i) => ({ user: 'bulk', resource: `r-${i}` }) });
}, 600_000);

afterAll(async () => {
  try {
    await disconnectMongo();
    await stack?.stop();
  } finally {
    await killAll();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
  expect(await survivors()).toEqual([]);
}, 180_000);

it('a worker killed mid-export: the job completes with every record once, resuming from its last batch', async () => {
  const res = await stack.call('GET', '/audit/export?user=bulk');
  expect(res.status).toBe(202);
  const jobId: string = res.body.metadata.jobId;

  await until(
    'a committed batch',
    async () => ((await getExportJob(jobId))?.parts.length ?? 0) >= 1,
    300_000,
    stack.output,
  );
  await stack.crashWorker();
  const atKill = (await getExportJob(jobId))!;
  expect(atKill.state).toBe('processing'); // killed mid-export, not after it
  await stack.startWorker();

  await until(
    'the job completed',
    async () => (await getExportJob(jobId))?.state === 'completed',
    300_000,
    stack.output,
  );
  const job = (await getExportJob(jobId))!;
  // The batches committed before the kill were kept, not rewritten by the next attempt.
  expect(job.parts.slice(0, atKill.parts.length)).toEqual(atKill.parts);
  expect(job.parts.some((p) => !p.endsWith('-a1'))).toBe(true);
  const files = await mongoose.connection
    .db!.collection('audit_exports.files')
    .find({ 'metadata.jobId': jobId })
    .toArray();
  expect(files.map((f) => String(f._id)).sort()).toEqual([job.head, ...job.parts, job.tail].sort());

  const download = await fetch(`${stack.api}/audit/export/download/${jobId}`, {
    headers: { authorization: `Bearer ${stack.token}` },
  });
  expect(download.status).toBe(200);
  const file = (await download.json()) as { records: { resource: string; seq: number }[] };
  expect(file.records).toHaveLength(RECORDS);
  expect(new Set(file.records.map((r) => r.resource)).size).toBe(RECORDS);
  for (let i = 1; i < file.records.length; i++) expect(file.records[i].seq).toBe(file.records[i - 1].seq + 1);
  expect(verifyExportFile(file, [TEST_AUDIT_KEY])).toMatchObject({
    intact: true,
    totalRecords: RECORDS,
    verifiedRecords: RECORDS,
    sealValid: true,
  });
});
