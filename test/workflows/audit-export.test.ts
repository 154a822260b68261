import { mkdtemp, rm, writeFile } from 'fs/promises';
import mongoose from 'mongoose';
import { tmpdir } from 'os';
import path from 'path';
import { getExportJob } from '../../store/audit-exports';
import { seedAuditChain } from '../fixtures/audit-chain';
import { TEST_AUDIT_KEY } from '../harness/mongo';
import { runCli } from '../harness/processes';
import { useStack } from '../harness/stack';

/**
 * The asynchronous audit export (issue 12 §1) on the time-skipping test server: 10,001 records
 * are a 202 job whose workflow writes the file to GridFS; the download is 202 while it runs,
 * 200 with every record once when done (the chain verifies offline), 410 after 24h, when the
 * workflow has deleted the file. Time moves only when the test calls `s.wf.env.sleep`.
 */

jest.setTimeout(300_000);

let s: Awaited<ReturnType<typeof useStack>>;
let dir: string;

beforeAll(async () => {
  s = await useStack();
  dir = await mkdtemp(path.join(tmpdir(), 'foghorn-export-job-'));
  await seedAuditChain(10_001, { entry: (i) => ({ user: 'bulk', resource: `r-${i}` }) });
});

afterAll(async () => {
  await s?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The job's file, once its workflow has completed it. */
async function downloadWhenCompleted(jobId: string) {
  await s.eventually(
    () => getExportJob(jobId),
    (job) => job?.state === 'completed',
    120_000,
  );
  return s.call('GET', `/audit/export/download/${jobId}`);
}

const exportFiles = (jobId: string) =>
  mongoose.connection.db!.collection('audit_exports.files').countDocuments({ 'metadata.jobId': jobId });

// Before the 24h skip below: the workflow's clock jumps with it, the API's does not.
it('a CSV job writes the header once and one row per record', async () => {
  const res = await s.call('GET', '/audit/export?user=bulk&format=csv');
  expect(res.status).toBe(202);
  const jobId = res.body.metadata.jobId;
  const done = await downloadWhenCompleted(jobId);
  expect(done.status).toBe(200);
  expect(done.headers.get('content-type')).toMatch(/^text\/csv/);
  const lines = done.text.split('\r\n');
  expect(lines[0]).toBe('id,timestamp,action,user,role,resource,resourceType,namespace,sourceIP,checksum');
  expect(lines).toHaveLength(1 + 10_001 + 1);
  expect(lines.filter((l) => l.startsWith('id,'))).toHaveLength(1);
});

it('10,001 records: 202 job → 202 while processing → 200 with all 10,001 records, verified offline → 410 after 24h', async () => {
  let jobId = '';
  // While no worker runs, the job can only be processing.
  await s.restartWorker(async () => {
    const res = await s.call('GET', '/audit/export?user=bulk&format=json');
    expect(res.status).toBe(202);
    jobId = res.body.metadata.jobId;
    expect(jobId).toMatch(/^export-\d{8}-\d{3,}$/);
    expect(res.body).toEqual({
      apiVersion: 'v1',
      kind: 'AuditExportJob',
      metadata: { jobId },
      status: {
        state: 'processing',
        estimatedRecords: 10_001,
        downloadUrl: `/api/v1/audit/export/download/${jobId}`,
        expiresAt: expect.any(String),
        exportedRecords: 0,
      },
    });
    const ttl = Date.parse(res.body.status.expiresAt) - Date.now();
    expect(ttl).toBeGreaterThan(23.9 * 3_600_000);
    expect(ttl).toBeLessThanOrEqual(24 * 3_600_000);
    const pending = await s.call('GET', `/audit/export/download/${jobId}`);
    expect(pending.status).toBe(202);
    expect(pending.body.status.state).toBe('processing');
  });

  const done = await downloadWhenCompleted(jobId);
  expect(done.status).toBe(200);
  expect(done.headers.get('content-disposition')).toMatch(/^attachment; filename="audit-export-\d{8}\.json"$/);
  expect(done.body.metadata).toMatchObject({ totalRecords: 10_001, jobId, filters: { user: 'bulk' } });
  const records = done.body.records as { resource: string; seq: number }[];
  expect(records).toHaveLength(10_001);
  // Every record once, in chain order: r-0 … r-10000.
  expect(new Set(records.map((r) => r.resource)).size).toBe(10_001);
  expect(records[0].resource).toBe('r-0');
  expect(records[10_000].resource).toBe('r-10000');
  for (let i = 1; i < records.length; i++) expect(records[i].seq).toBe(records[i - 1].seq + 1);

  const file = path.join(dir, 'job.json');
  await writeFile(file, done.text);
  const verified = await runCli(['audit', 'verify-file', file], {
    FOGHORN_AUDIT_KEY: TEST_AUDIT_KEY,
    FOGHORN_DATA_DIR: dir,
  });
  expect(verified.output).toContain('intact');
  expect(verified.code).toBe(0);

  const tampered = JSON.parse(done.text);
  tampered.records[5_000].action = 'incident.resolve';
  await writeFile(file, JSON.stringify(tampered));
  const caught = await runCli(['audit', 'verify-file', file], {
    FOGHORN_AUDIT_KEY: TEST_AUDIT_KEY,
    FOGHORN_DATA_DIR: dir,
  });
  expect(caught.code).toBe(1);
  expect(caught.output).toContain('row 5001');

  expect(await exportFiles(jobId)).toBeGreaterThan(0);
  await s.wf.env.sleep('24h');
  await s.eventually(
    () => s.call('GET', `/audit/export/download/${jobId}`),
    (r) => r.status === 410,
    60_000,
  );
  const gone = await s.call('GET', `/audit/export/download/${jobId}`);
  expect(gone.body.error).toMatchObject({ code: 410, message: 'Export expired' });
  expect(await exportFiles(jobId)).toBe(0);
});

it('the exports are audited with the job id and the record count', async () => {
  const list = await s.call('GET', '/audit?action=audit.export');
  const jobs = list.body.items.filter((r: { details: { mode: string } }) => r.details.mode === 'async');
  expect(jobs).toHaveLength(2);
  expect(jobs[0]).toMatchObject({
    user: 'admin-user',
    resource: expect.stringMatching(/^export-/),
    details: { records: 10_001, format: 'json' }, // newest first
  });
});
