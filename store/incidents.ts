import type { Signal, TimelineEvent } from '../domain/incident';
import { resourceKey } from '../domain/incident';
import {
  CORRELATED_SIGNALS_KEPT,
  detectionEvent,
  newIncidentRecord,
  type IncidentRecord,
} from '../domain/incident-record';
import { isDuplicateKey, refusedDocuments } from './connection';
import { DedupEntryModel, IncidentModel, TimelineEventModel } from './models';
import { GroupInsert } from './group-insert';
import { allocateName } from './names';
import { findPage, type Page } from './pagination';

export type { IncidentRecord } from '../domain/incident-record';

const NO_ID = { _id: 0 } as const;
/** What a joining signal reads of the open incident: all but the inline signals (the count stays). */
const JOIN_FIELDS = { _id: 0, correlatedSignals: 0 } as const;

const JOIN_WAIT_MS = 25;
const JOIN_TRIES = 200;
/**
 * A dedup entry whose incident record is still missing this long after the entry was written
 * is an orphan: its creator crashed between the two writes (the record is written right after).
 */
export const ORPHAN_ENTRY_AFTER_MS = 30_000;

/** The dedup entry names an incident whose record has not appeared yet: try again shortly. */
export class IncidentPendingError extends Error {
  override readonly name = 'IncidentPendingError';
  constructor(
    readonly key: string,
    readonly incident: string,
  ) {
    super(`incident ${incident} for ${key} is still being written`);
  }
}

/**
 * Opens an incident for a signal, or finds the open one for its resource (DESIGN §6). The unique
 * dedup entry decides: of any number of concurrent signals for one resource exactly one creates
 * the incident; the others get `created: false` and that incident (to correlate through its
 * workflow). The creator writes the entry first, so a joiner may briefly wait for the record; an
 * entry whose record never came (its creator crashed in between) is removed after
 * ORPHAN_ENTRY_AFTER_MS and the signal opens a new incident. Throws IncidentPendingError when
 * the record is late but the entry too young to call an orphan. A joined incident is read without
 * its inline `correlatedSignals` (signalCount reads its count).
 */
export async function openOrJoin(
  signal: Signal,
  at: Date = new Date(),
): Promise<{ created: boolean; incident: IncidentRecord }> {
  const key = resourceKey(signal);
  let pending = '';
  for (let attempt = 0; attempt < JOIN_TRIES; attempt++) {
    const entry = await DedupEntryModel.findById(key).lean();
    if (entry) {
      // Without the inline signals: a duplicate in a storm reads a small document (it needs none).
      const incident = await IncidentModel.findOne({ name: entry.incident }, JOIN_FIELDS).lean<IncidentRecord>();
      if (incident) return { created: false, incident };
      if (Date.now() - new Date(entry.createdAt).getTime() > ORPHAN_ENTRY_AFTER_MS) {
        // Conditional: only this orphan, never an entry someone wrote since we read.
        await clearDedupEntry({ name: entry.incident, resourceKey: key });
        continue;
      }
      pending = entry.incident;
      await new Promise((r) => setTimeout(r, JOIN_WAIT_MS)); // its creator is still writing it
      continue;
    }
    const name = await allocateName('INC', at);
    try {
      await DedupEntryModel.create({ _id: key, incident: name, createdAt: at });
    } catch (err) {
      if (isDuplicateKey(err)) continue; // someone else opened it first: join theirs
      throw err;
    }
    const incident = newIncidentRecord(name, signal, at);
    // The event first: a crash between the two leaves an unseen event, never a visible incident
    // whose timeline lacks its Detection.
    await appendTimeline(name, [{ key: `${name}/detection`, event: detectionEvent(signal, incident.severity, at) }]);
    await IncidentModel.create(incident);
    return { created: true, incident };
  }
  throw new IncidentPendingError(key, pending);
}

/** The open incident of a resource key (its dedup entry), if any. */
export async function findOpenIncident(key: string): Promise<IncidentRecord | undefined> {
  const entry = await DedupEntryModel.findById(key).lean();
  return entry ? getIncident(entry.incident) : undefined;
}

/**
 * Clears the dedup entry of a resolved incident so the next signal opens a new one. Conditional:
 * only an entry that still names this incident. True when it removed one.
 */
export async function clearDedupEntry(incident: Pick<IncidentRecord, 'name' | 'resourceKey'>): Promise<boolean> {
  const { deletedCount } = await DedupEntryModel.deleteOne({ _id: incident.resourceKey, incident: incident.name });
  return deletedCount > 0;
}

/**
 * Appends events once each: the key makes a retried activity a no-op (the events it already
 * stored are refused as duplicates, the rest go in). An invalid event throws before anything is
 * written. Concurrent appends, of any incidents, share one insert (`timelineInserts`).
 */
export async function appendTimeline(incident: string, events: { key: string; event: TimelineEvent }[]): Promise<void> {
  if (events.length === 0) return;
  const docs = events.map(({ key, event }) => new TimelineEventModel({ incident, key, ...event }));
  await Promise.all(docs.map((doc) => doc.validate()));
  const refused = (await timelineInserts.add(docs.map((doc) => doc.toObject()))).find((r) => r !== null);
  if (refused) throw refused;
}

/**
 * Timeline inserts, group-committed: a burst of remediations appends hundreds of events at once,
 * and an insert each was the store's largest count of writes (docs/decisions.md, "Performance and
 * capacity"). Unordered, so a duplicate key refuses its event alone; each caller hears of its own.
 * Documents come validated by appendTimeline, hence `lean`.
 */
const timelineInserts = new GroupInsert<object, Error | null>(async (docs) => {
  const results: (Error | null)[] = docs.map(() => null);
  try {
    await TimelineEventModel.insertMany(docs, { ordered: false, lean: true });
  } catch (err) {
    for (const e of refusedDocuments(err)) if (e.code !== 11000) results[e.index] = new Error(e.errmsg);
  }
  return results;
}, 500);

export async function getIncident(name: string): Promise<IncidentRecord | undefined> {
  return (await IncidentModel.findOne({ name }, NO_ID).lean<IncidentRecord>()) ?? undefined;
}

/** Applies `set` unless the incident is already Resolved (nothing leaves Resolved). */
export async function updateIncident(
  name: string,
  set: Partial<IncidentRecord>,
  opts: { allowResolved?: boolean } = {},
): Promise<IncidentRecord | undefined> {
  const filter: Record<string, unknown> = opts.allowResolved ? { name } : { name, state: { $ne: 'Resolved' } };
  return (
    (await IncidentModel.findOneAndUpdate(
      filter,
      { $set: { ...set, lastUpdated: set.lastUpdated ?? new Date() } },
      {
        returnDocument: 'after',
        projection: NO_ID,
      },
    ).lean<IncidentRecord>()) ?? undefined
  );
}

export async function getTimeline(incident: string): Promise<TimelineEvent[]> {
  return TimelineEventModel.find({ incident }, { _id: 0, incident: 0, key: 0 })
    .sort({ timestamp: 1, _id: 1 })
    .lean<TimelineEvent[]>();
}

export function countTimeline(incident: string): Promise<number> {
  return TimelineEventModel.countDocuments({ incident });
}

export interface IncidentFilter {
  severity?: string;
  /** One state, or any of several. */
  state?: string | readonly string[];
  namespace?: string;
  resource?: string;
  since?: Date;
  cluster?: string;
  /** `alertmanager`, `kubernetes-watcher`, … */
  detectionSource?: string;
}

/** One page, newest first; `fields` (a list view's) narrows each record to those. */
export function listIncidents<K extends keyof IncidentRecord = keyof IncidentRecord>(
  filter: IncidentFilter,
  page: number,
  pageSize: number,
  fields?: readonly K[],
): Promise<Page<Pick<IncidentRecord, K>>> {
  const query: Record<string, unknown> = {};
  for (const key of ['severity', 'namespace', 'resource', 'cluster', 'detectionSource'] as const)
    if (filter[key]) query[key] = filter[key];
  if (typeof filter.state === 'string' && filter.state) query.state = filter.state;
  else if (Array.isArray(filter.state)) query.state = { $in: filter.state };
  if (filter.since) query.detectedAt = { $gte: filter.since };
  return findPage<Pick<IncidentRecord, K>>(IncidentModel, query, { detectedAt: -1, name: -1 }, page, pageSize, fields);
}

/**
 * Other open incidents in the namespace detected within `windowMs` of `at` (cascade analysis).
 * Sorted in the index's whole order (ties by name), so the embedded store walks only the window.
 */
export function relatedOpenIncidents(
  incident: Pick<IncidentRecord, 'name' | 'namespace' | 'detectedAt'>,
  windowMs: number,
) {
  return IncidentModel.find(
    {
      namespace: incident.namespace,
      name: { $ne: incident.name },
      state: { $ne: 'Resolved' },
      detectedAt: {
        $gte: new Date(incident.detectedAt.getTime() - windowMs),
        $lte: new Date(incident.detectedAt.getTime() + windowMs),
      },
    },
    { _id: 0, name: 1, resource: 1, signalType: 1, state: 1, detectedAt: 1 },
  )
    .sort({ detectedAt: 1, name: 1 })
    .limit(20)
    .lean<Pick<IncidentRecord, 'name' | 'resource' | 'signalType' | 'state' | 'detectedAt'>[]>();
}

/**
 * Appends correlated signals (the record keeps the newest CORRELATED_SIGNALS_KEPT inline) and sets
 * the count and the recomputed fields, only if nobody appended since the caller read `known`
 * signals (the workflow records signals one batch at a time).
 */
export async function appendCorrelatedSignals(
  name: string,
  known: number,
  signals: IncidentRecord['correlatedSignals'],
  set: Partial<Pick<IncidentRecord, 'riskScore' | 'severity' | 'lastUpdated' | 'lastSignalKey'>>,
): Promise<void> {
  await IncidentModel.updateOne(
    {
      name,
      $or: [
        { correlatedSignalCount: known },
        // Records from before the count: the array held every signal.
        { correlatedSignalCount: { $exists: false }, correlatedSignals: { $size: known } },
      ],
    },
    {
      $push: { correlatedSignals: { $each: signals, $slice: -CORRELATED_SIGNALS_KEPT } },
      $set: { ...set, correlatedSignalCount: known + signals.length },
    },
  );
}

/** Links the incident to its postmortem (after resolution, so not through updateIncident). */
export async function setPostmortemRef(name: string, postmortem: string): Promise<void> {
  await IncidentModel.updateOne({ name }, { $set: { postmortem } });
}

/** Incidents open at `at`, whatever their state now: detected by then and not resolved by then. */
export function countOpenAt(at: Date): Promise<number> {
  // null also matches a missing field
  return IncidentModel.countDocuments({
    detectedAt: { $lte: at },
    $or: [{ resolvedAt: null }, { resolvedAt: { $gt: at } }],
  });
}
