/**
 * Audit export of a large log (issue 12 §3) on the embedded stack (`foghorn dev`, H2 backend):
 * N records (default 100,000) are appended as one valid keyed chain, then exported
 *   - synchronously (the ceiling raised by the test-only option, in a process of its own:
 *     bench/audit-export-server.ts), as CSV and as JSON: time to the last byte, bytes, and the
 *     process's resident memory before and at its peak (VmHWM) — flat memory means the peak
 *     does not grow with N;
 *   - as a job through `foghorn dev` (202 → download): time until the file is complete, the
 *     download's time, and the dev process's peak resident memory.
 * Every file is checked: row count, and the JSON chain with verify-file's code.
 * Usage: npx ts-node --transpile-only bench/audit-export.ts [records=100000]
 */
import './compiled';
import { spawn } from 'child_process';
import { mkdtempSync, readFileSync, rmSync } from 'fs';
import { loadavg, tmpdir } from 'os';
import path from 'path';
import { verifyExportFile } from '../contracts/audit';
import { connectMongo, disconnectMongo } from '../store/connection';
import { seedAuditChain } from '../test/fixtures/audit-chain';
import { devEnv, startDev, stopDev, waitReady } from '../test/harness/dev-process';

const RECORDS = Number(process.argv[2] ?? 100_000);
const KEY = 'bench-audit-key-0123456789abcdef0123456789';
const MB = 1024 * 1024;

/** Resident and peak resident memory of a process, in MiB (Linux /proc). */
function memory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)![1]);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

async function download(url: string, token: string): Promise<{ status: number; text: string; ms: number }> {
  const started = performance.now();
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  const text = await res.text();
  return { status: res.status, text, ms: performance.now() - started };
}

function check(format: string, text: string): string {
  if (format === 'csv') {
    const rows = text.split('\r\n').length - 2;
    if (rows !== RECORDS) throw new Error(`CSV has ${rows} rows, expected ${RECORDS}`);
    return `${rows} rows`;
  }
  const report = verifyExportFile(JSON.parse(text), [KEY]);
  if (!report.intact || report.totalRecords !== RECORDS) throw new Error(`JSON: ${JSON.stringify(report.problems)}`);
  return `${report.totalRecords} records, chain and seal verified`;
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'foghorn-bench-export-'));
  const env: NodeJS.ProcessEnv = {
    ...(await devEnv(dataDir)),
    FOGHORN_AUDIT_KEY: KEY,
    FOGHORN_LLM_BASE_URL: '',
    KUBECONFIG: '',
  };
  const dev = await startDev(env);
  const mongoUri = `mongodb://127.0.0.1:${env.FOGHORN_MONGO_PORT}/foghorn`;
  let server: ReturnType<typeof spawn> | undefined;
  try {
    await waitReady(dev.api);
    await connectMongo(mongoUri);
    let started = performance.now();
    await seedAuditChain(RECORDS, { key: KEY, entry: (i) => ({ user: 'bench', resource: `r-${i}` }) });
    console.log(`seeded ${RECORDS} records in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    console.log(`load average at start: ${loadavg()[0].toFixed(2)} (2 cores)`);

    server = spawn(
      process.execPath,
      ['-r', 'ts-node/register/transpile-only', path.join(__dirname, 'audit-export-server.ts'), mongoUri, '10000000'],
      { env: { ...process.env, FOGHORN_AUDIT_KEY: KEY }, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const port = await new Promise<string>((resolve, reject) => {
      server!.stdout!.on('data', (d: Buffer) => {
        const m = /listening (\d+)/.exec(String(d));
        if (m) resolve(m[1]!);
      });
      server!.once('exit', (code) => reject(new Error(`export server exited ${code}`)));
    });
    const base = `http://127.0.0.1:${port}/api/v1`;
    // The standalone server needs a token of its own: the dev process's admin token works (same store).
    console.log('\nsynchronous (streamed from a cursor):');
    for (const format of ['csv', 'json']) {
      const before = memory(server.pid!);
      const res = await download(`${base}/audit/export?user=bench&format=${format}`, dev.token);
      if (res.status !== 200) throw new Error(`sync ${format}: HTTP ${res.status} ${res.text.slice(0, 200)}`);
      const after = memory(server.pid!);
      console.log(
        `  ${format.padEnd(4)} ${(res.ms / 1000).toFixed(1).padStart(5)} s  ${(res.text.length / MB).toFixed(1).padStart(6)} MiB` +
          `  ${(RECORDS / (res.ms / 1000)).toFixed(0).padStart(6)} records/s  RSS before ${before.rss.toFixed(0)} MiB, peak ${after.peak.toFixed(0)} MiB` +
          `  (${check(format, res.text)})`,
      );
    }

    console.log('\nasynchronous (job → GridFS → download):');
    for (const format of ['csv', 'json']) {
      started = performance.now();
      const job = await fetch(`${dev.api}/audit/export?user=bench&format=${format}`, {
        headers: { authorization: `Bearer ${dev.token}` },
      });
      const body = (await job.json()) as { metadata: { jobId: string } };
      if (job.status !== 202) throw new Error(`async ${format}: HTTP ${job.status}`);
      let res = await download(`${dev.api}/audit/export/download/${body.metadata.jobId}`, dev.token);
      while (res.status === 202) {
        await new Promise((r) => setTimeout(r, 250));
        res = await download(`${dev.api}/audit/export/download/${body.metadata.jobId}`, dev.token);
      }
      const total = performance.now() - started;
      if (res.status !== 200) throw new Error(`download ${format}: HTTP ${res.status}`);
      console.log(
        `  ${format.padEnd(4)} ${(total / 1000).toFixed(1).padStart(5)} s to a downloaded file (download ${(res.ms / 1000).toFixed(1)} s)` +
          `  ${(res.text.length / MB).toFixed(1).padStart(6)} MiB  foghorn dev peak RSS ${memory(dev.child.pid!).peak.toFixed(0)} MiB` +
          `  (${check(format, res.text)})`,
      );
    }
    console.log(`\nload average at end: ${loadavg()[0].toFixed(2)}`);
  } finally {
    server?.kill('SIGKILL');
    await disconnectMongo();
    await stopDev(dev);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
