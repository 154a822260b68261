/**
 * The API alone, with the synchronous export ceiling raised (a test-only option), for
 * bench/audit-export.ts to measure a streamed export of any size in a process of its own.
 * Usage (by the benchmark): node -r ts-node/register/transpile-only bench/audit-export-server.ts <mongoUri> <syncLimit>
 * Prints `listening <port>` once it serves.
 */
import type { AddressInfo } from 'net';
import { createApp } from '../api/app';
import { createLogger } from '../api/observability';
import { configureAuditKey } from '../store/audit';
import { connectMongo } from '../store/connection';

async function main(): Promise<void> {
  const [uri, limit] = process.argv.slice(2);
  await connectMongo(uri!);
  configureAuditKey(process.env.FOGHORN_AUDIT_KEY);
  const app = createApp({
    basePath: '/api/v1',
    rateLimitPerMinute: 1_000_000,
    logger: createLogger('warn'),
    taskQueue: 'foghorn',
    auditExportSyncLimit: Number(limit),
  });
  const server = app.listen(0, '127.0.0.1', () => console.log(`listening ${(server.address() as AddressInfo).port}`));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
