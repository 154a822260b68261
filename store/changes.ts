import type { Model } from 'mongoose';
import type { AvailabilitySample, Change, RevisionHealth, RevisionState } from '../domain/changes';
import { AvailabilityModel, ChangeModel, RevisionModel } from './models';
import { findPage, type Page } from './pagination';

/**
 * The change record, revision health and availability samples (domain/changes.ts), written by
 * the cluster watcher and read by evidence, rollback and postmortems. Every write is an
 * idempotent upsert by a deterministic key: a watcher that relists after a hand-over writes
 * nothing twice. MongoDB-wire servers ignore TTL indexes, so retention is an explicit prune.
 */

const NO_ID = { _id: 0 } as const;

export type ChangeRecord = Change & { recordedAt: Date };

/** Records changes not yet recorded (by id); returns how many were new. */
export async function recordChanges(changes: Change[], now = new Date()): Promise<number> {
  if (changes.length === 0) return 0;
  const result = await ChangeModel.bulkWrite(
    changes.map((c) => ({
      updateOne: {
        filter: { id: c.id },
        update: { $setOnInsert: { ...c, recordedAt: now } },
        upsert: true,
      },
    })),
    { ordered: false },
  );
  return result.upsertedCount;
}

export interface ChangeFilter {
  cluster?: string;
  namespace?: string;
  /** `<Kind>/<name>`: the changed object, or a workload the change concerns. */
  resource?: string;
  since?: Date;
}

function changeQuery(f: ChangeFilter): Record<string, unknown> {
  const q: Record<string, unknown> = {};
  if (f.cluster) q.cluster = f.cluster;
  if (f.namespace !== undefined) q.namespace = f.namespace;
  if (f.resource) q.$or = [{ resource: f.resource }, { workloads: f.resource }];
  if (f.since) q.at = { $gte: f.since };
  return q;
}

/** One page of changes, newest first. */
export function listChanges(filter: ChangeFilter, page: number, pageSize: number): Promise<Page<ChangeRecord>> {
  return findPage<ChangeRecord>(ChangeModel, changeQuery(filter), { at: -1, id: -1 }, page, pageSize, NO_ID);
}

/**
 * The changes that concern a workload (itself, what it mounts, the nodes it runs on) between
 * `from` and `to`, newest first, at most `limit`.
 */
export function changesConcerning(
  cluster: string,
  namespace: string,
  workload: string,
  nodes: string[],
  from: Date,
  to: Date,
  limit = 50,
): Promise<ChangeRecord[]> {
  return ChangeModel.find(
    {
      cluster,
      at: { $gte: from, $lte: to },
      $or: [
        { namespace, resource: workload },
        { namespace, workloads: workload },
        ...(nodes.length > 0 ? [{ namespace: '', resource: { $in: nodes.map((n) => `Node/${n}`) } }] : []),
      ],
    },
    NO_ID,
  )
    .sort({ at: -1, id: -1 })
    .limit(limit)
    .lean<ChangeRecord[]>();
}

/** The newest Scale and Config change of each object of a cluster (the watcher's resume base). */
export async function latestScaleAndConfig(cluster: string, limit = 20_000): Promise<ChangeRecord[]> {
  const rows = await ChangeModel.find({ cluster, type: { $in: ['Scale', 'Config'] } }, NO_ID)
    .sort({ at: -1, id: -1 })
    .limit(limit)
    .lean<ChangeRecord[]>();
  const newest = new Map<string, ChangeRecord>();
  for (const r of rows) if (!newest.has(`${r.namespace}/${r.resource}`)) newest.set(`${r.namespace}/${r.resource}`, r);
  return [...newest.values()];
}

export async function getChange(id: string): Promise<ChangeRecord | undefined> {
  return (await ChangeModel.findOne({ id }, NO_ID).lean<ChangeRecord>()) ?? undefined;
}

/** The oldest documents of a cluster past `maxCount` (by `field`, newest kept); returns how many went. */
async function capCount(
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any of this file's models
  model: Model<any>,
  cluster: string,
  field: 'at',
  maxCount: number,
): Promise<number> {
  if ((await model.countDocuments({ cluster })) <= maxCount) return 0;
  const cut = await model
    .find({ cluster }, { [field]: 1, _id: 0 })
    .sort({ [field]: -1 })
    .skip(maxCount)
    .limit(1)
    .lean<Record<string, Date>[]>();
  return cut[0] ? (await model.deleteMany({ cluster, [field]: { $lte: cut[0][field] } })).deletedCount : 0;
}

/**
 * Retention of one cluster's record: changes and availability samples older than `before`, then
 * the oldest past `maxCount`; revision verdicts older than `before`, except each Deployment's
 * newest healthy revision (the rollback target outlives the retention). Returns the changes removed.
 */
export async function pruneChanges(cluster: string, before: Date, maxCount: number): Promise<number> {
  const removed = (await ChangeModel.deleteMany({ cluster, at: { $lt: before } })).deletedCount;
  await AvailabilityModel.deleteMany({ cluster, at: { $lt: before } });
  await RevisionModel.deleteMany({ cluster, firstSeenAt: { $lt: before }, state: { $ne: 'Healthy' } });
  const oldHealthy = await RevisionModel.find(
    { cluster, state: 'Healthy', firstSeenAt: { $lt: before } },
    { _id: 0, namespace: 1, resource: 1 },
  ).lean<{ namespace: string; resource: string }[]>();
  for (const key of new Map(oldHealthy.map((r) => [`${r.namespace}/${r.resource}`, r])).values()) {
    const newest = await RevisionModel.findOne({ cluster, ...key, state: 'Healthy' }, { _id: 0, revision: 1 })
      .sort({ revision: -1 })
      .lean<{ revision: number }>();
    if (newest)
      await RevisionModel.deleteMany({
        cluster,
        ...key,
        state: 'Healthy',
        firstSeenAt: { $lt: before },
        revision: { $lt: newest.revision },
      });
  }
  const capped = await capCount(ChangeModel, cluster, 'at', maxCount);
  await capCount(AvailabilityModel, cluster, 'at', maxCount);
  return removed + capped;
}

// ---------------------------------------------------------------------------------------------
// Revision health
// ---------------------------------------------------------------------------------------------

/** Which verdicts a new observation may replace: a proven verdict is never taken back by a weaker one. */
const REPLACES: Record<RevisionState, RevisionState[]> = {
  Unobserved: ['Unobserved'],
  Progressing: ['Unobserved', 'Progressing'],
  Failed: ['Unobserved', 'Progressing'],
  // A revision that failed (a pull that later worked) and then stayed available is healthy.
  Healthy: ['Unobserved', 'Progressing', 'Failed'],
};

/** Records what was seen of a revision; a state moves only forward (REPLACES). */
export async function recordRevision(h: RevisionHealth): Promise<void> {
  const key = { cluster: h.cluster, namespace: h.namespace, resource: h.resource, revision: h.revision };
  const { state, healthyAt, failure, firstSeenAt, ...rest } = h;
  await RevisionModel.updateOne(key, { $setOnInsert: { ...rest, state: 'Unobserved', firstSeenAt } }, { upsert: true });
  await RevisionModel.updateOne(
    { ...key, state: { $in: REPLACES[state] } },
    {
      $set: {
        state,
        replicaSet: h.replicaSet,
        templateHash: h.templateHash,
        images: h.images,
        ...(healthyAt && { healthyAt }),
        ...(failure && { failure }),
      },
    },
  );
}

/** Every recorded revision of a Deployment, newest first. */
export function revisionsOf(cluster: string, namespace: string, resource: string): Promise<RevisionHealth[]> {
  return RevisionModel.find({ cluster, namespace, resource }, NO_ID).sort({ revision: -1 }).lean<RevisionHealth[]>();
}

// ---------------------------------------------------------------------------------------------
// Availability
// ---------------------------------------------------------------------------------------------

export async function recordAvailability(samples: AvailabilitySample[]): Promise<void> {
  if (samples.length === 0) return;
  await AvailabilityModel.bulkWrite(
    samples.map((s) => ({
      updateOne: {
        filter: { cluster: s.cluster, namespace: s.namespace, resource: s.resource, at: s.at },
        update: { $setOnInsert: s },
        upsert: true,
      },
    })),
    { ordered: false },
  );
}

/** A Deployment's samples in [from, to], preceded by the last one before `from` (the state at `from`). */
export async function availabilityBetween(
  cluster: string,
  namespace: string,
  resource: string,
  from: Date,
  to: Date,
): Promise<AvailabilitySample[]> {
  const key = { cluster, namespace, resource };
  const [before, during] = await Promise.all([
    AvailabilityModel.find({ ...key, at: { $lt: from } }, NO_ID)
      .sort({ at: -1 })
      .limit(1)
      .lean<AvailabilitySample[]>(),
    AvailabilityModel.find({ ...key, at: { $gte: from, $lte: to } }, NO_ID)
      .sort({ at: 1 })
      .limit(5000)
      .lean<AvailabilitySample[]>(),
  ]);
  return [...before, ...during];
}

/** The health of the revisions these changes name (one query). */
export function revisionsNamed(
  changes: { cluster: string; namespace: string; resource: string; revision?: number }[],
): Promise<RevisionHealth[]> {
  const named = changes.filter((c) => c.revision !== undefined);
  if (named.length === 0) return Promise.resolve([]);
  return RevisionModel.find(
    {
      $or: named.map((c) => ({
        cluster: c.cluster,
        namespace: c.namespace,
        resource: c.resource,
        revision: c.revision,
      })),
    },
    NO_ID,
  ).lean<RevisionHealth[]>();
}
