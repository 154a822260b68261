import { mkdtempSync, readFileSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import path from 'path';
import { startEmbeddedMongo, type EmbeddedMongo } from '../../cli/embedded/mongo';
import { connectMongo, disconnectMongo } from '../../store/connection';
import { getIncident } from '../../store/incidents';

/**
 * FOGHORN_STORE_COMMAND_COUNTS (diagnostics for the benchmarks): a process counts the commands
 * it sends the store, by command and collection, and leaves them in `<dir>/<pid>.json`.
 */
let server: EmbeddedMongo;
let dir: string;

beforeAll(async () => {
  server = await startEmbeddedMongo({ database: 'command-counts' });
  dir = mkdtempSync(path.join(tmpdir(), 'foghorn-command-counts-'));
});

afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

it('counts each command by command and collection, and writes them when the connection closes', async () => {
  await connectMongo(server.uri, { countCommandsIn: dir });
  const file = path.join(dir, `${process.pid}.json`);
  const read = () => JSON.parse(readFileSync(file, 'utf8')) as Record<string, number>;
  const before = await new Promise<Record<string, number>>((r) => setTimeout(() => r(read()), 1_500));
  await getIncident('INC-20261201-001');
  await getIncident('INC-20261201-002');
  await disconnectMongo();
  const after = read();
  expect((after['find incidents'] ?? 0) - (before['find incidents'] ?? 0)).toBeGreaterThanOrEqual(2);
  // Connecting created the indexes: counted like any other command.
  expect(after['createIndexes incidents']).toBeGreaterThanOrEqual(1);
});

it('counts nothing unless asked: a connection without it leaves the last counts as they were', async () => {
  const file = path.join(dir, `${process.pid}.json`);
  const written = readFileSync(file, 'utf8');
  await connectMongo(server.uri);
  await getIncident('INC-20261201-001');
  await new Promise((r) => setTimeout(r, 1_500)); // longer than a counting process writes
  await disconnectMongo();
  expect(readFileSync(file, 'utf8')).toBe(written);
});
