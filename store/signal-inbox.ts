import { Types } from 'mongoose';
import type { IncidentRecord } from '../domain/incident-record';
import { GroupInsert } from './group-insert';
import { SignalInboxModel } from './models';

export type InboxSignal = IncidentRecord['correlatedSignals'][number];

export interface QueuedSignal {
  id: string;
  signal: InboxSignal;
}

// Validated by the caller's schema: no Mongoose documents to build.
const inboxInserts = new GroupInsert<{ incident: string; signal: InboxSignal }>(async (docs) => {
  await SignalInboxModel.insertMany(docs, { ordered: true, lean: true });
});

/**
 * Queues signals for an incident (ordered: they are recorded in this order); resolves once they
 * are stored. Concurrent callers share inserts: a storm of duplicates is a few commands a round trip.
 */
export async function enqueueSignals(incident: string, signals: InboxSignal[]): Promise<void> {
  await inboxInserts.add(signals.map((signal) => ({ incident, signal })));
}

/** The oldest `limit` queued signals of an incident, in the order they were queued. */
export async function queuedSignals(incident: string, limit: number): Promise<QueuedSignal[]> {
  const docs = await SignalInboxModel.find({ incident })
    .sort({ _id: 1 })
    .limit(limit)
    .lean<{ _id: Types.ObjectId; signal: InboxSignal }[]>();
  return docs.map((d) => ({ id: d._id.toHexString(), signal: d.signal }));
}

/** Removes recorded signals (idempotent: a retry removes what is left). */
export async function dequeueSignals(ids: string[]): Promise<void> {
  if (ids.length > 0) await SignalInboxModel.deleteMany({ _id: { $in: ids.map((id) => new Types.ObjectId(id)) } });
}

/**
 * Incidents with a signal queued before `before`: their hand-over was lost (a crash, an outage)
 * and nothing has drained them since. Up to `limit` names, oldest queue first, read from at most
 * SCAN_PER_NAME × `limit` signals (a huge queue of one incident hides the others only until
 * its workflow drains it).
 */
export async function incidentsWithStaleSignals(before: Date, limit: number): Promise<string[]> {
  // An ObjectId holds its time to the second: the second `before` falls in counts as before it.
  const cutoff = Types.ObjectId.createFromTime(Math.ceil(before.getTime() / 1000));
  const docs = await SignalInboxModel.find({ _id: { $lt: cutoff } }, { incident: 1 })
    .sort({ _id: 1 })
    .limit(limit * SCAN_PER_NAME)
    .lean<{ incident: string }[]>();
  return [...new Set(docs.map((d) => d.incident))].slice(0, limit);
}

const SCAN_PER_NAME = 20;
