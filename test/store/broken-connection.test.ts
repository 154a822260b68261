import { createConnection, createServer, type Server, type Socket } from 'net';
import type { AddressInfo } from 'net';
import { startEmbeddedMongo, type EmbeddedMongo } from '../../cli/embedded/mongo';
import { connectMongo, disconnectMongo } from '../../store/connection';
import { appendTimeline } from '../../store/incidents';
import { TimelineEventModel } from '../../store/models';
import { signalEvent } from '../harness/timeline';

/**
 * A connection that breaks in the middle of a bulk write must fail the write: the driver reports
 * it as a bulk error without write errors, which once passed for "every document a duplicate"
 * (a drain then dequeued signals whose timeline was never written). A TCP proxy between Mongoose
 * and the real MongoDB-wire server cuts the connection the moment the insert goes through it.
 */
describe('a bulk write cut off by the network', () => {
  let mongo: EmbeddedMongo;
  let proxy: Server;
  /** Set: the next client chunk carrying this text closes both ends instead of going through. */
  let cutOn: string | undefined;
  let cuts = 0;

  beforeAll(async () => {
    mongo = await startEmbeddedMongo({ database: 'broken-connection' });
    const target = new URL(mongo.uri.replace('mongodb://', 'http://'));
    const sockets = new Set<Socket>();
    proxy = createServer((client) => {
      const server = createConnection(Number(target.port), target.hostname);
      for (const s of [client, server]) {
        sockets.add(s);
        s.on('error', () => undefined).on('close', () => sockets.delete(s));
      }
      client.on('data', (chunk) => {
        if (cutOn && chunk.includes(cutOn)) {
          cutOn = undefined;
          cuts++;
          client.destroy();
          server.destroy();
          return;
        }
        server.write(chunk);
      });
      server.pipe(client);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    await connectMongo(`mongodb://127.0.0.1:${(proxy.address() as AddressInfo).port}/broken-connection`);
  });
  afterAll(async () => {
    await disconnectMongo();
    await new Promise((resolve) => proxy.close(resolve));
    await mongo.stop();
  });

  const event = (i: number) => signalEvent('INC-9', i);

  it('fails the append, and a retry writes it', async () => {
    await appendTimeline('INC-9', [event(0)]);
    cutOn = 'timeline_events';
    await expect(appendTimeline('INC-9', [event(0), event(1), event(2)])).rejects.toThrow();
    expect(cuts).toBe(1);
    // The retried activity: what the cut insert may or may not have stored goes in once.
    await appendTimeline('INC-9', [event(0), event(1), event(2)]);
    const stored = await TimelineEventModel.find({ incident: 'INC-9' }).sort({ timestamp: 1 }).lean();
    expect(stored.map((e) => e.key)).toEqual([0, 1, 2].map((i) => `INC-9/signal/${i}`));
  });
});
