import mongoose from 'mongoose';
import { openOrJoin } from '../../store/incidents';
import { migrateStore } from '../../store/migrations';
import { Counter, IncidentModel } from '../../store/models';
import { useMongo } from '../harness/mongo';

/** Records written before a field existed get it once, and a newer count is never overwritten. */
describe('store migrations (real MongoDB-wire server)', () => {
  let mongo: Awaited<ReturnType<typeof useMongo>>;
  beforeAll(async () => {
    mongo = await useMongo();
  });
  afterAll(() => mongo?.stop());

  const signal = (deployment: string) => ({
    resource: `Deployment/${deployment}`,
    namespace: 'shop',
    signalType: 'CrashLoopBackOff' as const,
    description: '',
    cluster: 'local',
    labels: {},
    detectionSource: 'api',
  });
  const joined = (n: number) =>
    Array.from({ length: n }, () => ({
      signalType: 'OOMKilled',
      description: '',
      source: 'api',
      labels: {},
      at: new Date(),
    }));

  it('gives incidents from before correlatedSignalCount their count, once', async () => {
    const old = (await openOrJoin(signal('old'))).incident.name;
    const current = (await openOrJoin(signal('current'))).incident.name;
    const incidents = mongoose.connection.collection('incidents');
    // As the release before the count wrote them: every signal inline, no count.
    await incidents.updateOne(
      { name: old },
      { $set: { correlatedSignals: joined(3) }, $unset: { correlatedSignalCount: '' } },
    );
    await incidents.updateOne(
      { name: current },
      { $set: { correlatedSignals: joined(2), correlatedSignalCount: 250 } },
    );
    await Counter.deleteOne({ _id: 'migration-correlated-signal-count' }); // connecting ran it already

    await migrateStore();
    const count = async (name: string) => (await IncidentModel.findOne({ name }).lean())?.correlatedSignalCount;
    expect(await count(old)).toBe(3);
    expect(await count(current)).toBe(250); // only the newest signals are inline: the count stands

    // Done once: a record missing the count later is not the migration's any more.
    await incidents.updateOne({ name: old }, { $unset: { correlatedSignalCount: '' } });
    await migrateStore();
    expect(await count(old)).toBeUndefined();
  });
});
