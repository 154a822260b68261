import { freePort } from '../harness/ports';
import { startEmbeddedMongo, type EmbeddedMongo } from '../../cli/embedded/mongo';
import { connectMongo, disconnectMongo, mongoReady, watchMongo } from '../../store/connection';
import { IncidentModel } from '../../store/models';
import mongoose from 'mongoose';

/**
 * A long-running process hears when its connection is lost (with the driver's reason) and when it
 * is back. One whose connection stays down while the server answers new connections gets a new
 * one (store/connection.ts, watchMongo); while the server is down it waits for the driver.
 * Closing the process's client stands in for a driver that stopped recovering.
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
    watchMongo(mongo.uri, { replaced: (downMs) => replaced.push(downMs) }, { everyMs: 100, stuckAfterMs: 1_000 });
    await mongoose.connection.close(); // down for good, as far as this client goes
    expect(mongoReady()).toBe(false);
    await until('reconnected', () => replaced.length > 0 && mongoReady());
    expect(replaced).toHaveLength(1);
    expect(replaced[0]).toBeGreaterThanOrEqual(1_000);
    expect(await IncidentModel.countDocuments({})).toBe(0); // the store works through the new client
  });

  it("reports a lost connection with the driver's reason, and its return", async () => {
    const port = await freePort();
    let server = await startEmbeddedMongo({ database: 'watchdog', port });
    try {
      await connectMongo(server.uri);
      const lost: string[] = [];
      const back: number[] = [];
      watchMongo(server.uri, { lost: (reason) => lost.push(reason), back: (downMs) => back.push(downMs) });
      await server.stop();
      await until('lost', () => lost.length > 0);
      expect(mongoReady()).toBe(false);
      expect(lost[0]).toMatch(/^Mongo\w*Error: /); // the driver's error, by name and message
      server = await startEmbeddedMongo({ database: 'watchdog', port });
      await until('back', () => back.length > 0, 60_000); // at the driver's next heartbeat (10 s)
      expect(mongoReady()).toBe(true);
      expect(lost).toHaveLength(1);
      expect(back[0]).toBeGreaterThan(0);
      expect(await IncidentModel.countDocuments({})).toBe(0);
    } finally {
      await server.stop();
    }
  });

  it('leaves the connection to the driver while the server does not answer', async () => {
    await connectMongo(mongo.uri);
    const replaced: number[] = [];
    const nowhere = `mongodb://127.0.0.1:${await freePort()}/watchdog`;
    watchMongo(nowhere, { replaced: (downMs) => replaced.push(downMs) }, { everyMs: 100, stuckAfterMs: 300 });
    await mongoose.connection.close();
    await new Promise((r) => setTimeout(r, 3_000)); // several probes, all refused
    expect(replaced).toEqual([]);
    expect(mongoReady()).toBe(false);
  });
});
