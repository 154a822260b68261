import { Counter, IncidentModel } from './models';

/**
 * Data migrations, run as a process connects. Each runs until it has once finished (its marker,
 * a document in `counters`, says so); each is idempotent, so processes starting together, or a
 * crash half-way, do no harm.
 */
const MIGRATIONS: { id: string; run: () => Promise<void> }[] = [
  {
    // Incidents recorded before the count (issue 14): their array held every joined signal.
    id: 'migration-correlated-signal-count',
    run: async () => {
      const stale = await IncidentModel.find(
        { correlatedSignalCount: { $exists: false } },
        { _id: 0, name: 1, correlatedSignals: 1 },
      ).lean<{ name: string; correlatedSignals?: unknown[] }[]>();
      for (const { name, correlatedSignals } of stale)
        await IncidentModel.updateOne(
          { name, correlatedSignalCount: { $exists: false } }, // never over a count recorded since
          { $set: { correlatedSignalCount: correlatedSignals?.length ?? 0 } },
        );
    },
  },
];

export async function migrateStore(): Promise<void> {
  for (const m of MIGRATIONS) {
    if (await Counter.exists({ _id: m.id })) continue;
    await m.run();
    await Counter.updateOne({ _id: m.id }, { $set: { seq: 1 } }, { upsert: true });
  }
}
