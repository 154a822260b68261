import { mkdtempSync, rmSync } from 'fs';
import { Double, MongoClient, type Db, type Filter } from 'mongodb';
import { tmpdir } from 'os';
import path from 'path';
import { startEmbeddedMongo, type EmbeddedMongo } from '../../cli/embedded/mongo';

/**
 * The embedded server serves a query that pins a unique index's keys beside other conditions
 * from that index (tools/mongo-launcher, Planner), matches plain string equality and sorts pages
 * on its own (Executor). Whatever path a query takes, its answer must be the one the library's
 * general path gives: each query here is checked against the documents filtered in memory, or
 * against the same query sent down the library's path.
 */
describe.each(['memory', 'h2'] as const)('query planning on the embedded server (%s backend)', (backend) => {
  let dir: string;
  let server: EmbeddedMongo;
  let client: MongoClient;
  let db: Db;
  const open = async () => {
    server = await startEmbeddedMongo({
      database: 'planning',
      ...(backend === 'h2' && { h2File: path.join(dir, 'mongo.h2') }),
    });
    client = await MongoClient.connect(server.uri, { serverSelectionTimeoutMS: 10_000 });
    db = client.db('planning');
  };
  const close = async () => {
    await client.close();
    await server.stop();
  };
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'foghorn-planning-'));
    await open();
  });
  afterAll(async () => {
    await close();
    rmSync(dir, { recursive: true, force: true });
  });

  interface Message {
    _id: string;
    messageId: string;
    chatId: string;
    status: 'accepted' | 'queued' | 'done';
    n: number;
  }
  const all: Message[] = Array.from({ length: 60 }, (_, n) => ({
    _id: `m${n}`,
    messageId: `msg-${n}`,
    chatId: `chat-${n % 4}`,
    status: (['accepted', 'queued', 'done'] as const)[n % 3],
    n,
  }));
  const matching = (keep: (m: Message) => boolean) => all.filter(keep).map((m) => m.n);
  const found = async (filter: Filter<Message>) =>
    (await db.collection<Message>('messages').find(filter).sort({ n: 1 }).toArray()).map((m) => m.n);

  it('answers pinned queries as a scan would', async () => {
    const messages = db.collection<Message>('messages');
    await messages.createIndex({ messageId: 1 }, { unique: true });
    await messages.insertMany(all);
    const some = ['msg-1', 'msg-2', 'msg-3', 'msg-4', 'msg-44', 'msg-nope'];
    expect(await found({ messageId: { $in: some }, status: 'accepted' })).toEqual(
      matching((m) => some.includes(m.messageId) && m.status === 'accepted'),
    );
    expect(await found({ messageId: 'msg-7', status: { $ne: 'done' } })).toEqual([7]);
    expect(await found({ messageId: 'msg-8', status: { $ne: 'done' } })).toEqual([]); // 8 is done
    expect(await found({ _id: 'm9', chatId: 'chat-1' })).toEqual([9]);
    expect(await found({ _id: 'm9', chatId: 'chat-2' })).toEqual([]);
    // Not pins: the library's own path.
    expect(await found({ messageId: { $gt: 'msg-58' }, status: 'accepted' })).toEqual(
      matching((m) => m.messageId > 'msg-58' && m.status === 'accepted'),
    );
    expect(await found({ chatId: 'chat-3', status: 'done' })).toEqual(
      matching((m) => m.chatId === 'chat-3' && m.status === 'done'),
    );
  });

  it('updates and deletes only what the whole filter matches', async () => {
    const messages = db.collection<Message>('messages');
    const ids = ['msg-10', 'msg-11', 'msg-12', 'msg-13'];
    const updated = await messages.updateMany(
      { messageId: { $in: ids }, status: 'accepted' },
      { $set: { status: 'queued' } },
    );
    expect(updated.modifiedCount).toBe(
      ids.filter((id) => all.find((m) => m.messageId === id)!.status === 'accepted').length,
    );
    for (const m of all) if (ids.includes(m.messageId) && m.status === 'accepted') m.status = 'queued';
    expect((await messages.deleteOne({ _id: 'm20', chatId: 'chat-1' })).deletedCount).toBe(0); // m20 is chat-0
    expect((await messages.deleteOne({ _id: 'm21', chatId: 'chat-1' })).deletedCount).toBe(1);
    all.splice(
      all.findIndex((m) => m._id === 'm21'),
      1,
    );
    expect(await found({})).toEqual(matching(() => true));
    expect(await found({ status: 'queued' })).toEqual(matching((m) => m.status === 'queued'));
  });

  it('plans the same way after a restart (reopening what is stored)', async () => {
    await close();
    await open();
    expect(await found({ messageId: { $in: ['msg-10', 'msg-21', 'msg-30'] }, status: 'queued' })).toEqual(
      backend === 'h2'
        ? matching((m) => ['msg-10', 'msg-21', 'msg-30'].includes(m.messageId) && m.status === 'queued')
        : [],
    );
  });

  describe('sorted pages and counts', () => {
    interface Item {
      _id: number;
      tier?: unknown;
      zone?: unknown;
      at?: unknown;
      nested?: { rank: unknown };
    }
    // Values of every kind where a plain string filter or a sort meets them: arrays holding the
    // string, null, absent, numbers, documents, ties (the same `at` for several documents).
    const tiers: unknown[] = ['gold', 'silver', ['gold', 'bronze'], null, undefined, 7, { tier: 'gold' }, 'Gold'];
    const items: Item[] = Array.from({ length: 120 }, (_, i) => ({
      _id: i,
      ...(tiers[i % tiers.length] !== undefined && { tier: tiers[i % tiers.length] }),
      zone: ['eu', 'us', ['eu', 'us'], 'ap'][i % 4],
      ...(i % 9 !== 0 && { at: i % 5 === 0 ? 'late' : new Date(Date.UTC(2026, 0, 1) + (i % 17) * 60_000) }),
      nested: { rank: i % 6 === 0 ? [i % 4, 9] : i % 4 },
    }));
    const filters: Filter<Item>[] = [
      {},
      { tier: 'gold' },
      { tier: 'gold', zone: 'eu' },
      { zone: 'us' },
      { tier: 'none' },
    ];
    const sorts: Record<string, 1 | -1>[] = [
      { at: -1, _id: -1 },
      { at: 1 },
      { tier: 1, at: -1 },
      { 'nested.rank': -1 },
    ];

    it('answers as the library does, for every filter, sort, skip and limit', async () => {
      const coll = db.collection<Item>('items');
      await coll.insertMany(items);
      for (const filter of filters) {
        // `$and` sends the filter down the library's matcher; no limit, down its sort.
        const library = { $and: [filter] } as Filter<Item>;
        for (const sort of sorts) {
          const all = (await coll.find(library).sort(sort).toArray()).map((d) => d._id);
          for (const [skip, limit] of [
            [0, 10],
            [5, 7],
            [0, 500],
            [110, 20],
          ]) {
            const page = await coll.find(filter).sort(sort).skip(skip).limit(limit).toArray();
            expect({ filter, sort, skip, ids: page.map((d) => d._id) }).toEqual({
              filter,
              sort,
              skip,
              ids: all.slice(skip, skip + limit),
            });
          }
        }
        expect(await coll.countDocuments(filter)).toBe((await coll.find(library).toArray()).length);
        expect(await coll.countDocuments({ ...filter, _id: { $lt: 60 } })).toBe(
          (await coll.find({ $and: [filter, { _id: { $lt: 60 } }] }).toArray()).length,
        );
      }
      expect(await db.collection('nothing-here').countDocuments({ tier: 'gold' })).toBe(0);
    });

    it('matches a plain string as MongoDB does: itself or an array holding it, never null, absent or another type', async () => {
      const ids = async (filter: Filter<Item>) =>
        (await db.collection<Item>('items').find(filter).sort({ _id: 1 }).toArray()).map((d) => d._id);
      const holds = (v: unknown, s: string) => v === s || (Array.isArray(v) && v.includes(s));
      expect(await ids({ tier: 'gold' })).toEqual(items.filter((d) => holds(d.tier, 'gold')).map((d) => d._id));
      expect(await ids({ tier: 'gold', zone: 'us' })).toEqual(
        items.filter((d) => holds(d.tier, 'gold') && holds(d.zone, 'us')).map((d) => d._id),
      );
    });
  });
  describe('pages walked from declared indexes', () => {
    interface Case {
      _id: number;
      team?: unknown;
      rank?: unknown;
      at?: unknown;
    }
    const minute = (n: number) => new Date(Date.UTC(2026, 0, 1) + n * 60_000);
    // Ties everywhere (17 instants, a double 1 and int32 1s), mixed types under a sort key, absent and null.
    const cases: Case[] = Array.from({ length: 150 }, (_, i) => ({
      _id: i,
      ...(i % 11 !== 0 && { team: i % 13 === 0 ? null : ['a', 'b', 'c'][i % 3] }),
      rank: i % 8 === 0 ? new Double(1) : i % 4, // a double 1 beside int32 1s: equal keys
      ...(i % 9 !== 0 && { at: i % 7 === 0 ? 'late' : minute(i % 17) }),
    }));
    const filters: Filter<Case>[] = [
      {},
      { team: 'a' },
      { team: 'a', rank: 2 },
      { team: 'b', rank: 1 }, // pins int32 1s and the double 1 alike
      { team: 'b', at: { $ne: 'late' } },
      { team: 'zzz' },
      { rank: 1 },
      // Ranges on the key after the pinned ones narrow the walk (and the count) to a window.
      { at: { $gte: minute(3), $lt: minute(12) } },
      { team: 'a', at: { $gt: minute(2), $lte: minute(9) } },
      { at: { $gte: minute(10) } },
      { at: { $lte: minute(4), $ne: minute(2) } },
      { team: 'b', at: { $lt: 'late' } }, // a string bound on a key that holds dates too
      { at: { $gte: minute(12), $lte: minute(3) } }, // an empty window
      { team: 'c', rank: { $gte: 1, $lt: 3 } }, // the int32 1s and the double 1 within
    ];
    const sorts: Record<string, 1 | -1>[] = [
      { at: -1, _id: -1 }, // the index's order
      { at: 1, _id: 1 }, // reversed
      { at: -1 }, // {team, at} pinned; {at: 1} reversed, ties in natural order
      { at: 1 },
      { rank: 1, at: 1 },
      { rank: -1, at: -1 },
      { at: -1, rank: 1 }, // an index's order, then `rank` within equal keys
      { rank: 1, at: 1, _id: -1 },
      { _id: 1 }, // no index of this shape: the library's path
    ];
    const expectLibraryAnswers = async () => {
      const coll = db.collection<Case>('cases');
      for (const filter of filters) {
        const library = { $and: [filter] } as Filter<Case>; // no top-level key to pin, no limit: the library's
        for (const sort of sorts) {
          const all = (await coll.find(library).sort(sort).toArray()).map((d) => d._id);
          const pages: [number, number][] = [
            [0, 10],
            [5, 7],
            [0, 500],
            [140, 20],
            [0, 0], // no limit: pinned ranges are walked whole
          ];
          for (const [skip, limit] of pages) {
            const page = await coll.find(filter).sort(sort).skip(skip).limit(limit).toArray();
            expect({ filter, sort, skip, limit, ids: page.map((d) => d._id) }).toEqual({
              filter,
              sort,
              skip,
              limit,
              ids: limit > 0 ? all.slice(skip, skip + limit) : all.slice(skip),
            });
          }
        }
        expect({ filter, count: await coll.countDocuments(filter) }).toEqual({
          filter,
          count: (await coll.find(library).toArray()).length,
        });
      }
    };

    it('answers as the library does, for every filter, sort, skip and limit', async () => {
      const coll = db.collection<Case>('cases');
      await coll.insertMany(cases.slice(0, 100)); // indexed as the index is built
      await coll.createIndex({ at: -1, _id: -1 });
      await coll.createIndex({ team: 1, at: -1 });
      await coll.createIndex({ team: 1, rank: 1, at: 1 });
      await coll.createIndex({ at: 1 });
      await coll.createIndex({ rank: 1 }, { sparse: true }); // never walked: it leaves documents out
      await coll.insertMany(cases.slice(100)); // indexed as inserted
      await expectLibraryAnswers();
    });

    it('keeps its order through updates, deletes and replacements', async () => {
      const coll = db.collection<Case>('cases');
      await coll.updateMany({ _id: { $lt: 30 } }, { $set: { team: 'c' } });
      await coll.updateMany({ _id: { $gte: 30, $lt: 60 } }, { $unset: { at: '' } });
      await coll.updateOne({ _id: 60 }, { $set: { at: new Date(Date.UTC(2030, 0, 1)), rank: 2 } });
      await coll.replaceOne({ _id: 61 }, { team: 'a', rank: 1, at: new Date(Date.UTC(2020, 0, 1)) });
      await coll.findOneAndUpdate({ _id: 62 }, { $set: { team: 'b' } });
      await coll.deleteMany({ _id: { $gte: 120, $lt: 130 } });
      await coll.findOneAndDelete({ _id: 131 });
      await coll.insertOne({ _id: 500, team: 'a', rank: 2, at: new Date(Date.UTC(2026, 0, 1)) });
      await expectLibraryAnswers();
    });

    it('steps aside while a document holds an array under a key, and resumes once it is gone', async () => {
      const coll = db.collection<Case>('cases');
      await coll.insertOne({ _id: 900, team: ['a', 'b'], rank: [1, 3], at: [new Date(Date.UTC(2026, 0, 1)), 'late'] });
      await expectLibraryAnswers();
      expect(await coll.find({ team: 'a' }).sort({ at: -1 }).limit(500).toArray()).toContainEqual(
        expect.objectContaining({ _id: 900 }),
      );
      await coll.deleteOne({ _id: 900 });
      await expectLibraryAnswers();
    });

    it('is rebuilt from what is stored when the server restarts', async () => {
      await close();
      await open();
      if (backend === 'h2') await expectLibraryAnswers();
      else expect(await db.collection('cases').countDocuments({})).toBe(0);
    });
  });
});
