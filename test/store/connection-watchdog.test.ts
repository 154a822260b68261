import { freePort } from '../harness/ports';
import { startEmbeddedMongo, type EmbeddedMongo } from '../../cli/embedded/mongo';
import { connectMongo, disconnectMongo, mongoReady, watchMongo } from '../../store/connection';
import { IncidentModel } from '../../store/models';
import mongoose from 'mongoose';

/**
 * A long-running process whose connection stays down while the server answers new connections
 * gets a new one (store/connection.ts, watchMongo); while the server is down it waits for the
 * driver. Closing the process's client stands in for a driver that stopped recovering.
 */
describe('watchMongo (real MongoDB-wire server)', () => {
  let mongo: EmbeddedMongo;
  beforeAll(async () => {
    mongo = await startEmbeddedMongo({ database: 'watchdog' });
  });
  afterEach(() => disconnectMongo());
  afterAll(() => mongo.stop());

  const until = async (what: string, check: () => boolean, timeoutMs = 20_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  it('reconnects a process whose connection stays down while the server answers', async () => {
    await connectMongo(mongo.uri);
    const replaced: number[] = [];
    watchMongo(mongo.uri, (downMs) => replaced.push(downMs), { everyMs: 100, stuckAfterMs: 1_000 });
    await mongoose.connection.close(); // down for good, as far as this client goes
    expect(mongoReady()).toBe(false);
    await until('reconnected', () => replaced.length > 0 && mongoReady());
    expect(replaced).toHaveLength(1);
    expect(replaced[0]).toBeGreaterThanOrEqual(1_000);
    expect(await IncidentModel.countDocuments({})).toBe(0); // the store works through the new client
  });

  it('leaves the connection to the driver while the server does not answer', async () => {
    await connectMongo(mongo.uri);
    const replaced: number[] = [];
    const nowhere = `mongodb://127.0.0.1:${await freePort()}/watchdog`;
    watchMongo(nowhere, (downMs) => replaced.push(downMs), { everyMs: 100, stuckAfterMs: 300 });
    await mongoose.connection.close();
    await new Promise((r) => setTimeout(r, 3_000)); // several probes, all refused
    expect(replaced).toEqual([]);
    expect(mongoReady()).toBe(false);
  });
});
