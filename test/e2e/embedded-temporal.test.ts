import { Client, Connection } from '@temporalio/client';
import { existsSync, mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import path from 'path';
import { startEmbeddedTemporal, type EmbeddedTemporal } from '../../cli/embedded/temporal';
import { freePort } from '../harness/ports';

/**
 * The embedded Temporal dev server keeps its SQLite file in write-ahead-log mode (one append and
 * one fsync per transaction instead of a rollback journal's several writes and syncs: Temporal's
 * writes bound a remediation burst, docs/decisions.md "Embedded servers"), without giving up
 * durability: what it acknowledged survives a kill -9.
 */
describe('the embedded Temporal dev server on a file (e2e)', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'foghorn-temporal-'));
  const dbFile = path.join(dir, 'temporal.db');
  let temporal: EmbeddedTemporal | undefined;
  afterAll(async () => {
    await temporal?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const started = async <T>(port: number, use: (client: Client) => Promise<T>): Promise<T> => {
    const connection = await Connection.connect({ address: `127.0.0.1:${port}` });
    try {
      return await use(new Client({ connection }));
    } finally {
      await connection.close();
    }
  };

  it('writes ahead to a log, and keeps a workflow start acknowledged before kill -9', async () => {
    const port = await freePort();
    temporal = await startEmbeddedTemporal({ port, dbFile });
    expect(existsSync(`${dbFile}-wal`)).toBe(true);

    await started(port, (client) =>
      client.workflow.start('waitsForAWorker', { taskQueue: 'nobody-polls', workflowId: 'acknowledged', args: [] }),
    );
    const exited = new Promise((resolve) => temporal!.child.once('exit', resolve));
    temporal.child.kill('SIGKILL');
    await exited;

    temporal = await startEmbeddedTemporal({ port, dbFile });
    const status = await started(
      port,
      async (client) => (await client.workflow.getHandle('acknowledged').describe()).status,
    );
    expect(status.name).toBe('RUNNING');
  });
});
