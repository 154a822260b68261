import { copyFileSync, mkdtempSync, rmSync } from 'fs';
import { Binary, Decimal128, Double, Int32, Long, MongoClient, ObjectId } from 'mongodb';
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
  /** kill -9 of the store the moment the last answer arrived, and the client dropped. */
  const crash = async (client: MongoClient) => {
    server!.child.kill('SIGKILL');
    await new Promise((r) => server!.child.once('exit', r));
    await client.close(true).catch(() => undefined);
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
    await crash(first.client);

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

  it('reads back exactly what it wrote: text in any script, nesting, arrays, large documents, unique keys', async () => {
    await server?.stop(); // the test before leaves its store running on the same file
    const first = await open();
    const notes = first.db.collection('notes');
    await notes.createIndex({ title: 1, lang: 1 }, { unique: true });
    const raw = { promoteValues: false, promoteLongs: false } as const;
    // Written page by page from one reused buffer per thread: ASCII and not, empty, grown past
    // its first size and past the size it is kept at, arrays of documents inside documents.
    const note = (i: number) => ({
      _id: `n${i}`,
      title: ['plain', 'café', 'ünïcödé ✓', '日本語のタイトル', 'emoji 🚨🔥', ''][i % 6] + ` #${i}`,
      lang: i % 2 ? 'fr' : 'ja',
      body: i === 7 ? 'x'.repeat(2 * 1024 * 1024) : i === 8 ? 'é'.repeat(5000) : `line ${i}\n\ttabbed\u0001`,
      steps: [{ name: 'ünï', args: ['a', new Int32(i), null, ['nested', { deep: 'é' }]] }, 'tail'],
      meta: { 'clé é': 'valeur', empty: {}, none: [] },
      n: new Int32(i),
    });
    for (let i = 0; i < 40; i++) await notes.insertOne(note(i) as never);
    await notes.updateOne({ _id: 'n3' as never }, { $set: { 'meta.clé é': 'après ✓' } });
    await crash(first.client);

    const second = await open(first.port);
    try {
      const back = second.db.collection('notes');
      const all = await back.find({}, raw).sort({ n: 1 }).toArray();
      expect(all).toHaveLength(40);
      all.forEach((doc, i) =>
        expect(doc).toEqual(i === 3 ? { ...note(3), meta: { ...note(3).meta, 'clé é': 'après ✓' } } : note(i)),
      );
      expect(await back.findOne({ title: '日本語のタイトル #3', lang: 'fr' })).toMatchObject({ _id: 'n3' });
      await expect(back.insertOne({ title: 'emoji 🚨🔥 #4', lang: 'ja' })).rejects.toThrow(/duplicate key/i);
      await back.insertOne({ title: 'emoji 🚨🔥 #4', lang: 'fr' });
    } finally {
      await second.client.close();
    }
  }, 120_000);
});

/**
 * A store file written before documents, ids and unique-index keys were kept as BSON
 * (test/fixtures/store-before-bson.h2, written by the launcher of e4997da: `things` as `written`
 * describes, `t39` deleted, unique on `key` and on `group`+`rank`; `counters`; `events` with
 * ObjectId ids, unique on `seq`). Its documents read back exactly, its unique indexes are rebuilt
 * in value order and still refuse duplicates, and what is written now survives kill -9.
 */
describe('embedded store file from before BSON documents', () => {
  let dir: string;
  let server: EmbeddedMongo | undefined;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'foghorn-h2-legacy-'));
    copyFileSync(path.join(__dirname, '../fixtures/store-before-bson.h2'), path.join(dir, 'store.h2'));
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const open = async (port = 0) => {
    server = await startEmbeddedMongo({ port, h2File: path.join(dir, 'store.h2'), database: 'legacy' });
    const client = await MongoClient.connect(server.uri, { serverSelectionTimeoutMS: 10_000 });
    return { client, things: client.db('legacy').collection('things'), port: Number(new URL(server.uri).port) };
  };
  /** As the fixture wrote it: every BSON type Foghorn stores, and some it does not. */
  const written = (i: number) => ({
    _id: `t${i}`,
    key: `k${i}`,
    group: `g${i % 4}`,
    rank: new Int32(i),
    n: new Int32(i),
    big: Long.fromString('9007199254740993'),
    f: new Double(i + 0.5),
    when: new Date(Date.UTC(2026, 0, 1, 0, 0, i)),
    oid: new ObjectId(`65a1b2c3d4e5f60718293a${String(i).padStart(2, '0')}`),
    tags: ['a', new Int32(i), { deep: true }],
    nested: { x: null, y: false },
    bin: new Binary(Buffer.from([1, 2, 3, i])),
    dec: Decimal128.fromString('1.10'),
  });
  const raw = { promoteValues: false, promoteLongs: false } as const;

  it('reads the old documents, rebuilds the unique indexes and keeps new writes across kill -9', async () => {
    const first = await open();
    let addedEvent: ObjectId | undefined;
    const expectAllThere = async (things: typeof first.things) => {
      const back = await things
        .find({ _id: { $nin: ['t0', 't39'] } as never }, raw)
        .sort({ rank: 1 })
        .toArray();
      expect(back.map((d) => d._id)).toEqual(Array.from({ length: 38 }, (_, i) => `t${i + 1}`));
      for (const doc of back) expect(doc).toEqual(written(Number(doc.rank.valueOf())));
      // The rebuilt indexes answer lookups and still refuse duplicates, single and compound.
      expect(await things.findOne({ key: 'k17' })).toMatchObject({ _id: 't17' });
      expect(await things.findOne({ group: 'g2', rank: 6 })).toMatchObject({ _id: 't6' });
      await expect(things.insertOne({ ...written(3), _id: 'dup-key' as never })).rejects.toThrow(/duplicate key/i);
      await expect(things.insertOne({ _id: 'dup-pair' as never, key: 'new', group: 'g1', rank: 5 })).rejects.toThrow(
        /duplicate key/i,
      );
      await expect(things.insertOne({ _id: 't2' as never })).rejects.toThrow(/duplicate key/i);
      // Documents whose ids are ObjectIds (what Foghorn's records have): found by id and by index.
      const events = things.db.collection('events');
      const eventId = (i: number) => new ObjectId(`65a1b2c3d4e5f60718293b${String(i).padStart(2, '0')}`);
      expect(
        (
          await events
            .find({ seq: { $lt: 30 } })
            .sort({ seq: 1 })
            .toArray()
        ).map((e) => [e._id.toHexString(), e.seq]),
      ).toEqual(Array.from({ length: 30 }, (_, i) => [eventId(i).toHexString(), i]));
      expect(await events.findOne({ _id: eventId(12) })).toEqual({ _id: eventId(12), seq: 12 });
      expect(await events.findOne({ seq: 21 })).toEqual({ _id: eventId(21), seq: 21 });
      await expect(events.insertOne({ _id: eventId(3), seq: 99 })).rejects.toThrow(/duplicate key/i);
      await expect(events.insertOne({ seq: 4 })).rejects.toThrow(/duplicate key/i);
    };
    try {
      await expectAllThere(first.things);
      // The key the fixture deleted is free; old documents are rewritten in the new form.
      await first.things.insertOne({ ...written(39) } as never);
      await first.things.updateOne({ _id: 't0' as never }, { $set: { touched: true } });
      addedEvent = (await first.things.db.collection('events').insertOne({ seq: 30 })).insertedId;
    } finally {
      server!.child.kill('SIGKILL');
      await new Promise((r) => server!.child.once('exit', r));
      await first.client.close(true).catch(() => undefined);
    }

    const second = await open(first.port);
    try {
      await expectAllThere(second.things);
      expect(await second.things.findOne({ _id: 't0' as never }, raw)).toEqual({ ...written(0), touched: true });
      expect(await second.things.findOne({ key: 'k39' }, raw)).toEqual(written(39));
      const added = await second.things.db.collection('events').findOne({ seq: 30 });
      expect(added?._id).toEqual(addedEvent);
      expect(
        await second.client
          .db('legacy')
          .collection('counters')
          .findOne({ _id: 'seq' as never }),
      ).toEqual({
        _id: 'seq',
        value: 7,
      });
      // A dropped unique index is gone with its map: the key is free, and stays free after a restart.
      await second.things.dropIndex('key_1');
      await second.things.insertOne({ _id: 'same-key' as never, key: 'k5', group: 'x', rank: 1 });
    } finally {
      server!.child.kill('SIGKILL');
      await new Promise((r) => server!.child.once('exit', r));
      await second.client.close(true).catch(() => undefined);
    }

    const third = await open(first.port);
    try {
      expect((await third.things.indexes()).map((i) => i.name)).not.toContain('key_1');
      expect(await third.things.countDocuments({ key: 'k5' })).toBe(2);
      await third.things.insertOne({ _id: 'same-key-again' as never, key: 'k5', group: 'x', rank: 2 });
      // Rebuilt from the documents, not from a map left behind: the duplicates now refuse it.
      await expect(third.things.createIndex({ key: 1 }, { unique: true })).rejects.toThrow(/duplicate key/i);
    } finally {
      await third.client.close();
    }
  }, 120_000);
});
