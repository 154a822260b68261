import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Severity } from '../domain/incident';
import { recoveredIncidentRecord, type IncidentRecord, type OrphanedRun } from '../domain/incident-record';
import type { LiveState } from '../domain/incident-requests';
import { clearDedupEntry, getIncident } from '../store/incidents';
import {
  existingIncidents,
  insertIncidentIfAbsent,
  oldDedupEntries,
  quietOpenIncidents,
  updateIfState,
} from '../store/reconcile';
import { liveStateQuery } from '../workflows/incident-messages';
import { INCIDENT, NAMESPACE, RESOURCE, SEVERITY } from '../workflows/search-attributes';
import { startIncidentRun, tellQueuedSignals, type IncidentOps } from './incidents';
import { incidentsWithStaleSignals } from '../store/signal-inbox';

/**
 * The reconciler's repairs (docs/reliability.md §2 and §4). MongoDB and Temporal each own
 * some facts; a crash between two writes can leave them disagreeing. Each function finds one kind
 * of disagreement and repairs it from the owner of the fact, idempotently: running it twice, or
 * in two workers at once, repairs once. Only things quiet for `graceMs` are looked at, so work
 * still in progress (an ingest between its record and its workflow start) is never "repaired".
 */
export interface ReconcileOptions extends IncidentOps {
  /** How long a state must have been still before it counts as stuck. */
  graceMs: number;
  /** Records read per page; a run goes through all of them, page by page. */
  pageSize?: number;
  /** Called once per item looked at (the activity heartbeats). */
  progress?: () => void;
  now?: Date;
}

export type RepairKind =
  | 'incident-workflow-started'
  | 'incident-workflow-restarted'
  | 'incident-record-refreshed'
  | 'incident-record-resolved'
  | 'incident-record-recreated'
  | 'dedup-entry-removed'
  | 'incident-signals-told'
  | 'chat-message-handed-over';

export interface Repair {
  kind: RepairKind;
  subject: string;
  detail: string;
}

const PAGE_SIZE = 200;
/** Workflow states that leave an open incident without a workflow. */
const DEAD = new Set(['NOT_FOUND', 'FAILED', 'TERMINATED', 'TIMED_OUT', 'CANCELLED']);
const since = (o: ReconcileOptions) => new Date((o.now ?? new Date()).getTime() - o.graceMs);

/** Every item of a keyset-paged listing, page after page; `key` gives the next page's cursor. */
async function* pages<T>(
  o: ReconcileOptions,
  page: (after: string, limit: number) => Promise<T[]>,
  key: (item: T) => string,
): AsyncGenerator<T> {
  const limit = o.pageSize ?? PAGE_SIZE;
  for (let after = ''; ;) {
    const items = await page(after, limit);
    for (const item of items) {
      o.progress?.();
      yield item;
    }
    if (items.length < limit) return;
    after = key(items[items.length - 1]);
  }
}

/** What the workflow says, or undefined when it cannot say now (no worker, query timeout). */
async function liveState(client: Client, name: string): Promise<LiveState | undefined> {
  try {
    return await client.workflow.getHandle(name).query(liveStateQuery);
  } catch {
    return undefined;
  }
}

/**
 * Open incident records whose workflow is missing, closed, or disagrees with them:
 * - no workflow (the start failed or was lost): start it, carrying the record's state;
 * - closed unresolved (failed, terminated, timed out, cancelled): a new run, carrying the record's state;
 * - completed (only a resolve completes one) while the record is not Resolved: the record is
 *   stale; it takes the resolution the workflow holds;
 * - running in another state than the record's: the workflow owns the state; the record follows.
 */
export async function reconcileIncidentRecords(o: ReconcileOptions): Promise<Repair[]> {
  const repairs: Repair[] = [];
  const before = since(o);
  for await (const record of pages(
    o,
    (after, limit) => quietOpenIncidents(before, after, limit),
    (r) => r.name,
  )) {
    const handle = o.client.workflow.getHandle(record.name);
    let status: string;
    try {
      status = (await handle.describe()).status.name;
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
      status = 'NOT_FOUND';
    }
    if (DEAD.has(status)) {
      if (await startIncidentRun(o, record))
        repairs.push({
          kind: status === 'NOT_FOUND' ? 'incident-workflow-started' : 'incident-workflow-restarted',
          subject: record.name,
          detail: `open in state ${record.state} but its workflow was ${status === 'NOT_FOUND' ? 'never started' : status.toLowerCase()}`,
        });
      continue;
    }
    const live = await liveState(o.client, record.name);
    if (!live) continue;
    if (live.state === 'Resolved' && status === 'COMPLETED') {
      const resolvedAt = live.resolvedAt ? new Date(live.resolvedAt) : new Date();
      if (
        await updateIfState(record.name, record.state, {
          state: 'Resolved',
          resolvedBy: live.resolvedBy ?? 'system',
          resolvedAt,
        })
      ) {
        await clearDedupEntry(record);
        repairs.push({
          kind: 'incident-record-resolved',
          subject: record.name,
          detail: `workflow resolved it (by ${live.resolvedBy}); the record still said ${record.state}`,
        });
      }
    } else if (status === 'RUNNING' && live.state !== 'Resolved' && live.state !== record.state) {
      const set: Partial<IncidentRecord> = { state: live.state };
      if (live.state === 'Escalated' && !record.escalatedAt) set.escalatedAt = new Date();
      if (await updateIfState(record.name, record.state, set))
        repairs.push({
          kind: 'incident-record-refreshed',
          subject: record.name,
          detail: `record said ${record.state}, its workflow ${live.state}`,
        });
    }
  }
  return repairs;
}

/**
 * Dedup entries that no longer stand for an open incident: their record is Resolved (a crash
 * between the resolve and clearing the entry) or was never written (the ingest died between the
 * entry and the record, so nothing was acknowledged). Left alone, every later signal for the
 * resource would join a closed incident.
 */
export async function reconcileDedupEntries(o: ReconcileOptions): Promise<Repair[]> {
  const repairs: Repair[] = [];
  const before = since(o);
  for await (const entry of pages(
    o,
    (after, limit) => oldDedupEntries(before, after, limit),
    (e) => e.key,
  )) {
    if (entry.state !== undefined && entry.state !== 'Resolved') continue;
    // The record may have appeared since the listing (a slow ingest): look once more.
    const record = await getIncident(entry.incident);
    if (record && record.state !== 'Resolved') continue;
    if (await clearDedupEntry({ name: entry.incident, resourceKey: entry.key }))
      repairs.push({
        kind: 'dedup-entry-removed',
        subject: entry.key,
        detail: record
          ? `pointed at resolved ${entry.incident}`
          : `pointed at ${entry.incident}, which was never recorded`,
      });
  }
  return repairs;
}

/**
 * Signals queued in an incident's inbox longer than the grace period: their hand-over was lost
 * (the accepting process crashed, or gave up while Temporal was down). The workflow is told
 * (started or restarted if it must be), and drains them.
 */
export async function reconcileSignalInbox(o: ReconcileOptions): Promise<Repair[]> {
  const repairs: Repair[] = [];
  for (const name of await incidentsWithStaleSignals(since(o), o.pageSize ?? PAGE_SIZE)) {
    o.progress?.();
    if (await tellQueuedSignals(o, name))
      repairs.push({
        kind: 'incident-signals-told',
        subject: name,
        detail: `signals queued before ${since(o).toISOString()} were not recorded; its workflow was told`,
      });
  }
  return repairs;
}

/**
 * Running incident workflows without a record (MongoDB lost it, or was restored from an older
 * backup): the record is written again from what the workflow knows — its search attributes and
 * its live state — so the incident shows in the API and can be acted on.
 */
export async function reconcileOrphanWorkflows(o: ReconcileOptions): Promise<Repair[]> {
  const repairs: Repair[] = [];
  const started = since(o).toISOString();
  let chunk: OrphanedRun[] = [];
  const check = async () => {
    const known = await existingIncidents(chunk.map((w) => w.name));
    for (const wf of chunk.filter((w) => !known.has(w.name))) {
      const live = await liveState(o.client, wf.name);
      if (!live || live.state === 'Resolved' || !wf.namespace || !wf.resource) continue;
      if (await insertIncidentIfAbsent(recoveredIncidentRecord(wf, live, new Date())))
        repairs.push({
          kind: 'incident-record-recreated',
          subject: wf.name,
          detail: `workflow in state ${live.state} had no record; rebuilt from the workflow`,
        });
    }
    chunk = [];
  };
  for await (const wf of o.client.workflow.list({
    query: `WorkflowType = 'incidentWorkflow' AND ExecutionStatus = 'Running' AND StartTime < '${started}'`,
  })) {
    o.progress?.();
    const get = (key: typeof INCIDENT) => String(wf.typedSearchAttributes.get(key) ?? '');
    chunk.push({
      name: wf.workflowId,
      namespace: get(NAMESPACE),
      resource: get(RESOURCE),
      severity: (get(SEVERITY) || 'medium') as Severity,
      startedAt: wf.startTime,
    });
    if (chunk.length >= (o.pageSize ?? PAGE_SIZE)) await check();
  }
  await check();
  return repairs;
}
