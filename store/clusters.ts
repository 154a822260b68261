import type { ClusterPhase, ClusterTier } from '../domain/cluster';
import { ACTIVE_STATES } from '../domain/incident';
import { isDuplicateKey } from './connection';
import { ClusterModel, IncidentModel } from './models';
import { findPage } from './pagination';
import { activePlansByCluster } from './remediations';

/** What the health activity last saw (resource figures are Kubernetes quantity strings). */
export interface ClusterStatusRecord {
  phase: ClusterPhase;
  connected: boolean;
  lastHealthCheck?: Date;
  kubernetesVersion: string;
  nodeCount: number;
  readyNodeCount: number;
  namespaceCount: number;
  resourceUsage?: { cpuCapacity: string; cpuUsed: string; memoryCapacity: string; memoryUsed: string };
  message: string;
}

export interface ClusterRecord {
  name: string;
  namespace: string;
  displayName: string;
  tier: ClusterTier;
  region: string;
  kubeconfigSecret: string;
  source: 'registered' | 'environment';
  createdAt: Date;
  status: ClusterStatusRecord;
}

/** A registration plus the counts read from other collections at read time. */
export interface ClusterWithCounts extends ClusterRecord {
  activeIssues: number;
  activeRemediations: number;
}

const NEW_STATUS: ClusterStatusRecord = {
  phase: 'Pending',
  connected: false,
  kubernetesVersion: '',
  nodeCount: 0,
  readyNodeCount: 0,
  namespaceCount: 0,
  message: '',
};

export type NewCluster = Omit<ClusterRecord, 'status' | 'createdAt'>;

/** Inserts a registration; `existing` when the name is taken (in any namespace). */
export async function createCluster(
  input: NewCluster,
  now = new Date(),
): Promise<{ created: true; cluster: ClusterRecord } | { created: false; existing: ClusterRecord | undefined }> {
  const cluster: ClusterRecord = { ...input, createdAt: now, status: { ...NEW_STATUS } };
  try {
    await ClusterModel.create(cluster);
    return { created: true, cluster };
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
    return { created: false, existing: await getCluster(input.name) };
  }
}

/** The local cluster's record, created once (idempotent upsert; a registered `local` wins). */
export async function ensureEnvironmentCluster(input: NewCluster, now = new Date()): Promise<void> {
  try {
    await ClusterModel.updateOne(
      { name: input.name },
      { $setOnInsert: { ...input, createdAt: now, status: NEW_STATUS } },
      { upsert: true },
    );
  } catch (err) {
    if (!isDuplicateKey(err)) throw err; // a concurrent start created it
  }
}

export async function getCluster(name: string): Promise<ClusterRecord | undefined> {
  return (await ClusterModel.findOne({ name }, { _id: 0 }).lean<ClusterRecord>()) ?? undefined;
}

export async function deleteCluster(name: string): Promise<ClusterRecord | undefined> {
  return (await ClusterModel.findOneAndDelete({ name }, { projection: { _id: 0 } }).lean<ClusterRecord>()) ?? undefined;
}

/** Every registration's name (worker start makes sure each has its workflows). */
export async function listClusterNames(): Promise<string[]> {
  const docs = await ClusterModel.find({}, { _id: 0, name: 1 }).sort({ name: 1 }).lean<{ name: string }[]>();
  return docs.map((d) => d.name);
}

/**
 * Written by the health activity after each check: the fields given replace the stored ones
 * (a failed check updates phase and time only, so the last known figures stay).
 */
export async function updateClusterStatus(name: string, status: Partial<ClusterStatusRecord>): Promise<boolean> {
  const $set = Object.fromEntries(Object.entries(status).map(([k, v]) => [`status.${k}`, v]));
  const res = await ClusterModel.updateOne({ name }, { $set });
  return res.matchedCount > 0;
}

/** Open incidents and remediation plans in flight (Pending, Executing, Verifying) per cluster. */
async function countsFor(names: string[]): Promise<Map<string, { issues: number; remediations: number }>> {
  const counts = new Map(names.map((n) => [n, { issues: 0, remediations: 0 }]));
  if (names.length === 0) return counts;
  const [open, plans] = await Promise.all([
    IncidentModel.find({ cluster: { $in: names }, state: { $in: ACTIVE_STATES } }, { _id: 0, cluster: 1 }).lean<
      { cluster: string }[]
    >(),
    activePlansByCluster(names),
  ]);
  for (const { cluster } of open) {
    const c = counts.get(cluster);
    if (c) c.issues += 1;
  }
  for (const [cluster, n] of plans) {
    const c = counts.get(cluster);
    if (c) c.remediations = n;
  }
  return counts;
}

function withCounts(records: ClusterRecord[], counts: Awaited<ReturnType<typeof countsFor>>): ClusterWithCounts[] {
  return records.map((r) => ({
    ...r,
    activeIssues: counts.get(r.name)?.issues ?? 0,
    activeRemediations: counts.get(r.name)?.remediations ?? 0,
  }));
}

export async function getClusterWithCounts(name: string): Promise<ClusterWithCounts | undefined> {
  const record = await getCluster(name);
  if (!record) return undefined;
  return withCounts([record], await countsFor([name]))[0];
}

/** One page of registrations, sorted by name, optionally of one tier. */
export async function listClusters(
  filter: { tier?: ClusterTier },
  page: number,
  pageSize: number,
): Promise<{ items: ClusterWithCounts[]; totalCount: number }> {
  const query: Record<string, unknown> = {};
  if (filter.tier !== undefined) query.tier = filter.tier;
  const { items, totalCount } = await findPage<ClusterRecord>(ClusterModel, query, { name: 1 }, page, pageSize, {
    _id: 0,
  });
  return { items: withCounts(items, await countsFor(items.map((c) => c.name))), totalCount };
}
