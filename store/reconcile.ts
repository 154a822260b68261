import type { IncidentState } from '../domain/incident';
import { DedupEntryModel, IncidentModel, ReconcilerStat } from './models';
import type { IncidentRecord } from './incidents';

/**
 * The reconciler's reads and writes (operations/reconcile.ts). Every write is conditional on
 * what was read, so a repair never overwrites a change that happened in between.
 */

const NO_ID = { _id: 0 } as const;

/** A page of open incidents not touched since `before`, by name after `after`. */
export function quietOpenIncidents(before: Date, after: string, limit: number): Promise<IncidentRecord[]> {
  return IncidentModel.find({ state: { $ne: 'Resolved' }, lastUpdated: { $lt: before }, name: { $gt: after } }, NO_ID)
    .sort({ name: 1 })
    .limit(limit)
    .lean<IncidentRecord[]>();
}

/** A page of dedup entries written before `before` (by key after `after`), with their incident's state. */
export async function oldDedupEntries(
  before: Date,
  after: string,
  limit: number,
): Promise<{ key: string; incident: string; state?: IncidentState }[]> {
  const entries = await DedupEntryModel.find({ createdAt: { $lt: before }, _id: { $gt: after } })
    .sort({ _id: 1 })
    .limit(limit)
    .lean<{ _id: string; incident: string }[]>();
  const records = await IncidentModel.find(
    { name: { $in: entries.map((e) => e.incident) } },
    { _id: 0, name: 1, state: 1 },
  ).lean<{ name: string; state: IncidentState }[]>();
  const state = new Map(records.map((r) => [r.name, r.state]));
  return entries.map((e) => ({ key: e._id, incident: e.incident, state: state.get(e.incident) }));
}

/** Which of `names` have an incident record. */
export async function existingIncidents(names: string[]): Promise<Set<string>> {
  const found = await IncidentModel.find({ name: { $in: names } }, { _id: 0, name: 1 }).lean<{ name: string }[]>();
  return new Set(found.map((r) => r.name));
}

/** Sets fields on an incident only while its state is still `expected`. */
export async function updateIfState(
  name: string,
  expected: IncidentState,
  set: Partial<IncidentRecord>,
): Promise<boolean> {
  const res = await IncidentModel.updateOne({ name, state: expected }, { $set: { ...set, lastUpdated: new Date() } });
  return res.modifiedCount === 1;
}

/** Writes a record that was lost, unless one exists by now. */
export async function insertIncidentIfAbsent(record: IncidentRecord): Promise<boolean> {
  const res = await IncidentModel.updateOne({ name: record.name }, { $setOnInsert: record }, { upsert: true });
  return res.upsertedCount === 1;
}

/** Adds repairs to the running totals that /metrics reports. */
export async function countRepairs(counts: Record<string, number>, at = new Date()): Promise<void> {
  for (const [kind, n] of Object.entries(counts)) {
    if (n > 0)
      await ReconcilerStat.updateOne({ _id: kind }, { $inc: { count: n }, $set: { lastAt: at } }, { upsert: true });
  }
}

export async function repairTotals(): Promise<Record<string, number>> {
  const stats = await ReconcilerStat.find().lean<{ _id: string; count: number }[]>();
  return Object.fromEntries(stats.map((s) => [s._id, s.count]));
}
