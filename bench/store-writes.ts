/**
 * Raw write throughput of the embedded MongoDB-wire server with the H2 file backend (what
 * `npm start` runs): 1 KB inserts, each acknowledged only once committed and fsynced (issue 8),
 * at 1, 8 and 32 concurrent writers (concurrent writers share commits).
 * Usage: npx ts-node --transpile-only bench/store-writes.ts [writesPerRound=400]
 */
import { mkdtempSync, rmSync } from 'fs';
import { MongoClient } from 'mongodb';
import { tmpdir } from 'os';
import path from 'path';
import { startEmbeddedMongo } from '../cli/embedded/mongo';

const WRITES = Number(process.argv[2] ?? 400);

async function main() {
  const dir = mkdtempSync(path.join(tmpdir(), 'foghorn-bench-h2-'));
  const server = await startEmbeddedMongo({ h2File: path.join(dir, 'mongo.h2'), database: 'bench' });
  const client = await MongoClient.connect(server.uri);
  try {
    const docs = client.db('bench').collection('docs');
    for (let i = 0; i < 200; i++) await docs.insertOne({ pad: 'w'.repeat(1000), i }); // warm-up
    for (const writers of [1, 8, 32]) {
      let next = 0;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: writers }, async () => {
          while (next < WRITES) await docs.insertOne({ pad: 'x'.repeat(1000), n: next++ });
        }),
      );
      const seconds = (performance.now() - started) / 1000;
      console.log(
        `writers=${String(writers).padStart(2)}  ${(WRITES / seconds).toFixed(0).padStart(5)} acknowledged writes/s`,
      );
    }
  } finally {
    await client.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
