import { mkdtempSync, rmSync } from 'fs';
import { MongoClient } from 'mongodb';
import { tmpdir } from 'os';
import path from 'path';
import { startEmbeddedMongo, type EmbeddedMongo } from '../../cli/embedded/mongo';

/**
 * The embedded MongoDB-wire server with the H2 file backend (what `npm start` runs): every write
 * it acknowledges is on disk, so a kill -9 right after the answers loses none of them.
 */
describe('embedded store durability (H2 backend, kill -9)', () => {
  let dir: string;
  let server: EmbeddedMongo | undefined;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'foghorn-h2-'));
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const open = async (port = 0) => {
    server = await startEmbeddedMongo({ port, h2File: path.join(dir, 'mongo.h2'), database: 'durable' });
    const client = await MongoClient.connect(server.uri, { serverSelectionTimeoutMS: 10_000 });
    return { client, db: client.db('durable'), port: Number(new URL(server.uri).port) };
  };

  it('keeps every acknowledged insert, update, upsert counter and delete across kill -9', async () => {
    const first = await open();
    const docs = first.db.collection('docs');
    const counters = first.db.collection('counters');
    await docs.createIndex({ key: 1 }, { unique: true });
    // Concurrent writers of every kind, then kill -9 the moment the last answer arrives.
    await Promise.all(
      Array.from({ length: 8 }, async (_, w) => {
        for (let i = 0; i < 25; i++) {
          await docs.insertOne({ key: `w${w}-${i}`, n: i });
          await counters.findOneAndUpdate({ _id: 'day' as never }, { $inc: { seq: 1 } }, { upsert: true });
          if (i % 5 === 0) await docs.updateOne({ key: `w${w}-${i}` }, { $set: { touched: true } });
          if (i % 10 === 9) await docs.deleteOne({ key: `w${w}-${i}` });
        }
      }),
    );
    server!.child.kill('SIGKILL');
    await new Promise((r) => server!.child.once('exit', r));
    await first.client.close(true).catch(() => undefined);

    const second = await open(first.port);
    try {
      const back = second.db.collection('docs');
      expect(await back.countDocuments()).toBe(8 * 25 - 8 * 2);
      expect(await back.countDocuments({ touched: true })).toBe(8 * 5);
      expect(await second.db.collection('counters').findOne({ _id: 'day' as never })).toMatchObject({ seq: 200 });
      // The unique index came back consistent with the documents: a deleted key can be reused,
      // a kept one cannot.
      await back.insertOne({ key: 'w0-9', n: 9 });
      await expect(back.insertOne({ key: 'w0-0', n: 0 })).rejects.toThrow(/duplicate key/i);
    } finally {
      await second.client.close();
    }
  }, 120_000);
});
