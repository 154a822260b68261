import mongoose from 'mongoose';
import { appendTimeline } from '../../store/incidents';
import { TimelineEventModel } from '../../store/models';
import { enqueueSignals, queuedSignals, type InboxSignal } from '../../store/signal-inbox';
import { useMongo } from '../harness/mongo';
import { signalEvent } from '../harness/timeline';

/** The bulk writes of a storm, against the real MongoDB-wire server. */
describe('bulk writes (real MongoDB-wire server)', () => {
  let mongo: Awaited<ReturnType<typeof useMongo>>;
  beforeAll(async () => {
    mongo = await useMongo();
  });
  afterAll(() => mongo?.stop());

  const event = (i: number) => signalEvent('INC-1', i);

  it('appends a timeline in one insert; a retry that overlaps adds only what is new', async () => {
    await appendTimeline('INC-1', [0, 1, 2].map(event));
    await appendTimeline('INC-1', [1, 2, 3, 4].map(event)); // a retried activity
    const stored = await TimelineEventModel.find({ incident: 'INC-1' }).sort({ timestamp: 1 }).lean();
    expect(stored.map((e) => e.key)).toEqual([0, 1, 2, 3, 4].map((i) => `INC-1/signal/${i}`));
  });

  it('writes nothing of a batch with an invalid event', async () => {
    const invalid = { ...event(9), event: { ...event(9).event, timestamp: new Date('not a date') } };
    await expect(appendTimeline('INC-2', [event(8), invalid])).rejects.toThrow(/timestamp/);
    expect(await TimelineEventModel.countDocuments({ incident: 'INC-2' })).toBe(0);
  });

  it('shares inserts among concurrent appends of many incidents, each refused only its own repeats', async () => {
    await appendTimeline('INC-30', [signalEvent('INC-30', 0)]);
    const inserts: string[] = [];
    mongoose.set('debug', (collection: string, method: string) => {
      if (collection === 'timeline_events' && method === 'insertMany') inserts.push(method);
    });
    try {
      await Promise.all(
        Array.from({ length: 30 }, (_, n) =>
          appendTimeline(
            `INC-${30 + (n % 3)}`,
            [0, 1].map((i) => signalEvent(`INC-${30 + (n % 3)}`, Math.floor(n / 3) * 2 + i)),
          ),
        ),
      );
    } finally {
      mongoose.set('debug', false);
    }
    expect(inserts.length).toBeLessThan(30);
    for (const incident of ['INC-30', 'INC-31', 'INC-32']) {
      const keys = (await TimelineEventModel.find({ incident }).lean()).map((e) => e.key).sort();
      // INC-30's first event was there before: refused as a repeat, it failed nobody.
      expect(keys).toEqual(Array.from({ length: 20 }, (_, i) => `${incident}/signal/${i}`).sort());
    }
  });

  it('queues concurrent callers’ signals, each caller’s in order, none lost', async () => {
    const signal = (caller: number, i: number): InboxSignal => ({
      signalType: 'OOMKilled',
      description: `${caller}/${i}`,
      source: 'alertmanager',
      labels: {},
      at: new Date(),
    });
    await Promise.all(
      Array.from({ length: 40 }, (_, caller) =>
        enqueueSignals(
          `INC-${caller % 4}`,
          [0, 1, 2].map((i) => signal(caller, i)),
        ),
      ),
    );
    for (let incident = 0; incident < 4; incident++) {
      const queued = (await queuedSignals(`INC-${incident}`, 1000)).map((q) => q.signal.description);
      expect(queued).toHaveLength(30);
      for (let caller = incident; caller < 40; caller += 4) {
        const mine = queued.filter((d) => d.startsWith(`${caller}/`));
        expect(mine).toEqual([`${caller}/0`, `${caller}/1`, `${caller}/2`]);
      }
    }
  });
});
