import {
  ServiceError,
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  type Client,
} from '@temporalio/client';
import { ApplicationFailure, WorkflowIdReusePolicy } from '@temporalio/common';
import { DurationError, parseDuration } from '../domain/duration';
import { ApiError, RETRY_AFTER_SECONDS, unavailable } from '../domain/errors';
import { resourceKey, type Severity, type Signal } from '../domain/incident';
import { signalCount } from '../domain/incident-record';
import {
  clearDedupEntry,
  getIncident,
  IncidentPendingError,
  openOrJoin,
  type IncidentRecord,
} from '../store/incidents';
import { incidentWorkflow, type IncidentWorkflowInput } from '../workflows/incident';
import {
  acknowledgeUpdate,
  correlateSignal,
  resolveUpdate,
  signalsQueuedSignal,
  snoozeUpdate,
} from '../workflows/incident-messages';
import { dequeueSignals, enqueueSignals, queuedSignals } from '../store/signal-inbox';
import { handOverFor, IncidentHandOver, type IncidentCalls } from './incident-handover';
import { joinReads } from './join-reads';
import {
  CONFLICT,
  SNOOZE_MAX_MS,
  type AcknowledgeRequest,
  type CorrelatedSignal,
  type ResolveRequest,
  type SignalsQueued,
  type SnoozeRequest,
} from '../domain/incident-requests';
import { INCIDENT, INCIDENT_STATE, NAMESPACE, RESOURCE, SEVERITY } from '../workflows/search-attributes';

/**
 * Incident operations over the Temporal client, shared by the API and the chat gateway so both
 * take the same path: the store decides dedup, the workflow owns every change after birth.
 */
export interface IncidentOps {
  client: Client;
  taskQueue: string;
  /** Where failed hand-overs to Temporal are reported (the process's logger). */
  logger?: { warn(details: object, message: string): void };
}

export const MANUAL_RESOLUTION = 'Manually resolved via dashboard';
export const SOURCE_RESOLUTION = 'Resolved at source';

/**
 * 503 `Service unavailable` + Retry-After for an ingest that could not be made durable, or (a
 * signal for a resolved incident) could not reach Temporal.
 */
export class IngestUnavailableError extends ApiError {
  constructor(details: string) {
    super(503, 'Service unavailable', details, { 'Retry-After': String(RETRY_AFTER_SECONDS) });
  }
}

const temporalDown = (err: unknown) => err instanceof ServiceError;
const signalUndelivered = (incident: IncidentRecord) =>
  new IngestUnavailableError(
    `the signal for incident ${incident.name} could not be delivered (Temporal is unreachable); retry`,
  );

/** Bounds the stale-dedup repairs of one ingest (each repair makes the next pass open or join). */
const INGEST_PASSES = 3;

export type Ingested = { created: boolean; incident: IncidentRecord };

/** Opens or joins the incident of one signal: `ingestSignals` with one. */
export async function ingestSignal(ops: IncidentOps, signal: Signal): Promise<Ingested> {
  return (await ingestSignals(ops, [signal]))[0];
}

/**
 * Ingests signals of one resource key, in order, in bulk (DESIGN §6, issue 14). The first opens
 * the resource's incident or finds the open one; every signal that joins an open incident is
 * queued in its inbox, all of them in one insert. The answer waits for the store only: the
 * workflow is started, and told of queued signals, by the hand-over (incident-handover.ts).
 * Never a 500 for states a crash or an outage leaves behind:
 * - the dedup entry names a resolved incident: a workflow still winding down gets the signal
 *   (recorded as arrived after resolution); none is ever started for it; closed (or gone), the
 *   entry is stale: it is cleared, conditionally, and the signal opens a new incident;
 * - the dedup entry names an open incident whose workflow has closed: the hand-over finds out
 *   and repairs it (closedIncidentWorkflow).
 */
export async function ingestSignals(ops: IncidentOps, signals: Signal[]): Promise<Ingested[]> {
  if (signals.length === 0) return [];
  const key = resourceKey(signals[0]);
  for (let pass = 1; ; pass++) {
    let opened: Ingested;
    try {
      opened = await joinReads.openOrJoin(key, () => openOrJoin(signals[0]));
    } catch (err) {
      if (err instanceof IncidentPendingError)
        throw new IngestUnavailableError(`incident ${err.incident} for this resource is still being created`);
      throw err;
    }
    const { created, incident } = opened;
    const joined = { created: false, incident };
    if (created) {
      handOver(ops).started(incident);
      const rest = signals.slice(1);
      await queue(ops, incident, rest);
      return [opened, ...rest.map(() => joined)];
    }
    if (incident.state !== 'Resolved') {
      await queue(ops, incident, signals);
      return signals.map(() => joined);
    }
    // Never start a workflow for a resolved incident. Still winding down: the signal is
    // recorded as arrived after resolution. Closed (or gone): the entry is stale.
    try {
      await ops.client.workflow.getHandle(incident.name).signal(correlateSignal, correlated(signals[0]));
      return [opened, ...(await ingestSignals(ops, signals.slice(1)))];
    } catch (err) {
      if (temporalDown(err)) throw signalUndelivered(incident);
      if (!(err instanceof WorkflowNotFoundError)) throw err;
    }
    await forgetDedupEntry(incident);
    if (pass >= INGEST_PASSES)
      throw new IngestUnavailableError(`the open incident of this resource changed while the signal was ingested`);
  }
}

/** Clears a stale dedup entry (conditionally); signals waiting for a read of it read again. */
async function forgetDedupEntry(incident: IncidentRecord): Promise<void> {
  joinReads.forget(incident.resourceKey);
  await clearDedupEntry(incident);
}

/** Queues signals in the open incident's inbox (one insert, durable), then hands them over. */
async function queue(ops: IncidentOps, incident: IncidentRecord, signals: Signal[]): Promise<void> {
  if (signals.length === 0) return;
  const joined = signals.map(correlated);
  await enqueueSignals(
    incident.name,
    joined.map((s) => ({ ...s, at: new Date(s.at) })),
  );
  handOver(ops).queued(incident, joined);
}

const correlated = (signal: Signal): CorrelatedSignal => ({
  signalType: signal.signalType,
  ...(signal.severity && { severity: signal.severity }),
  description: signal.description,
  source: signal.detectionSource,
  labels: signal.labels,
  at: new Date().toISOString(),
});

/** The process's hand-over for this client and task queue. */
export function handOver(ops: IncidentOps): IncidentHandOver {
  return handOverFor(
    ops.client,
    ops.taskQueue,
    () =>
      new IncidentHandOver(ops.client, incidentCalls(ops), {
        onError: (incident, err, retryInMs) =>
          ops.logger?.warn(
            { incident, error: (err as Error).message ?? String(err), ...(retryInMs !== undefined && { retryInMs }) },
            retryInMs === undefined
              ? 'incident stored but its workflow not told: left to the reconciler'
              : 'incident stored but its workflow not told: retrying',
          ),
      }),
  );
}

/** What the hand-over does with Temporal. */
function incidentCalls(ops: IncidentOps): IncidentCalls {
  return {
    async start(incident) {
      try {
        await ops.client.workflow.start(incidentWorkflow, workflowOptions(ops, incident));
      } catch (err) {
        // A joiner's signal-with-start got there first: same workflow, same arguments.
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      }
    },
    async tell(incident, { count, last }) {
      const queued: SignalsQueued = { count, signalType: last.signalType, at: last.at };
      try {
        // With-start: the creator's start may not have happened yet.
        await ops.client.workflow.signalWithStart(incidentWorkflow, {
          ...workflowOptions(ops, incident),
          signal: signalsQueuedSignal,
          signalArgs: [queued],
        });
        return;
      } catch (err) {
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      }
      // The incident's workflow has closed, yet signals were queued for it.
      const repair = await closedIncidentWorkflow(ops, incident, queued);
      if (repair === 'stale') await requeueQueuedSignals(ops, incident);
      if (repair === 'again')
        throw new Error(`the workflow of incident ${incident.name} changed meanwhile; telling it again`);
    },
  };
}

/**
 * Tells an incident's workflow of the signals queued for it: the reconciler's repair of a
 * hand-over lost to a crash or an outage. False when nothing is queued (drained meanwhile).
 */
export async function tellQueuedSignals(ops: IncidentOps, name: string): Promise<boolean> {
  const [incident, queued] = await Promise.all([getIncident(name), queuedSignals(name, 1)]);
  if (!incident || queued.length === 0) return false;
  const { signalType, at } = queued[0].signal;
  await incidentCalls(ops).tell(incident, {
    count: 1,
    last: { signalType: signalType as Signal['signalType'], at: new Date(at).toISOString() },
  });
  return true;
}

/**
 * Signals queued for an incident that turned out resolved and closed (its dedup entry was stale
 * when they came): each is ingested again, as if it came now, and leaves the old inbox.
 */
async function requeueQueuedSignals(ops: IncidentOps, incident: IncidentRecord): Promise<void> {
  for (;;) {
    const queued = await queuedSignals(incident.name, 500);
    if (queued.length === 0) return;
    await ingestSignals(
      ops,
      queued.map(({ signal }) => ({
        resource: incident.resource,
        namespace: incident.namespace,
        cluster: incident.cluster,
        signalType: signal.signalType as Signal['signalType'],
        ...(signal.severity && { severity: signal.severity as Severity }),
        description: signal.description,
        labels: signal.labels,
        detectionSource: signal.source,
      })),
    );
    await dequeueSignals(queued.map((q) => q.id));
  }
}

/**
 * Signal-with-start found the incident's workflow closed. `restarted`: the incident died
 * unresolved (terminated, failed, timed out) and a new run of it started with the signal,
 * carrying the state its record holds. `stale`: the incident is resolved (its record says so, or
 * its workflow completed, which only a resolve leads to), so its dedup entry was stale and is
 * cleared, conditionally: the caller ingests the signals again. `again`: the workflow changed
 * meanwhile (a new run, or gone from retention): the caller tries again.
 */
async function closedIncidentWorkflow(
  ops: IncidentOps,
  incident: IncidentRecord,
  queued: SignalsQueued,
): Promise<'restarted' | 'stale' | 'again'> {
  const fresh = await getIncident(incident.name);
  let status: string;
  try {
    status = (await ops.client.workflow.getHandle(incident.name).describe()).status.name;
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
    return 'again';
  }
  if (status === 'RUNNING') return 'again';
  if (!fresh || fresh.state === 'Resolved' || status === 'COMPLETED') {
    // Resolved (a crash between the resolve and clearing the entry, or a record the crash left
    // stale): the entry is stale and the next signal opens a new incident, as after any resolve.
    await forgetDedupEntry(incident);
    return 'stale';
  }
  try {
    await ops.client.workflow.signalWithStart(incidentWorkflow, {
      ...workflowOptions(ops, fresh),
      // Only over a run that failed, was terminated or timed out: never a completed one.
      workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
      signal: signalsQueuedSignal,
      signalArgs: [queued],
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    return 'again'; // someone restarted or finished it first
  }
  return 'restarted';
}

/**
 * The workflow's input for an incident as its record stands. Past triage (Escalated, Failed,
 * Remediating) it carries the record's state, so a new run of a workflow that died goes on
 * waiting for a person instead of analysing again.
 */
function workflowInput(incident: IncidentRecord): IncidentWorkflowInput {
  const input: IncidentWorkflowInput = {
    name: incident.name,
    namespace: incident.namespace,
    resource: incident.resource,
    severity: incident.severity,
  };
  if (incident.state === 'Detected' || incident.state === 'Analyzing' || incident.state === 'Resolved') return input;
  return {
    ...input,
    carried: {
      live: {
        state: incident.state,
        acknowledged: incident.acknowledged,
        ...(incident.acknowledgedBy && { acknowledgedBy: incident.acknowledgedBy }),
        ...(incident.acknowledgedAt && { acknowledgedAt: new Date(incident.acknowledgedAt).toISOString() }),
        ...(incident.snoozeUntil && { snoozeUntil: new Date(incident.snoozeUntil).toISOString() }),
        correlatedSignals: signalCount(incident),
      },
      pending: [],
      signalsRecorded: signalCount(incident),
      // An escalated incident's ladder outlives a terminated run: the new run keeps telling it.
      ...(incident.state === 'Escalated' && { ladder: true }),
    },
  };
}

/** One workflow per incident, id = incident name, never reused, findable by its attributes. */
function workflowOptions(ops: IncidentOps, incident: IncidentRecord) {
  return {
    workflowId: incident.name,
    taskQueue: ops.taskQueue,
    workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    args: [workflowInput(incident)] as [IncidentWorkflowInput],
    typedSearchAttributes: [
      { key: INCIDENT, value: incident.name },
      // A new incident's run moves it to Analyzing first: said at its start, not upserted by it.
      { key: INCIDENT_STATE, value: incident.state === 'Detected' ? 'Analyzing' : incident.state },
      { key: SEVERITY, value: incident.severity },
      { key: NAMESPACE, value: incident.namespace },
      { key: RESOURCE, value: incident.resource },
    ],
  };
}

/** The incident, or 404 `Incident not found` (also when it lives in another namespace). */
export async function findIncident(name: string, namespace?: string): Promise<IncidentRecord> {
  const incident = await getIncident(name);
  if (!incident || (namespace !== undefined && incident.namespace !== namespace)) {
    throw new ApiError(
      404,
      'Incident not found',
      `incident ${name} does not exist${namespace ? ` in namespace ${namespace}` : ''}`,
    );
  }
  return incident;
}

const alreadyResolved = (i: IncidentRecord) =>
  new ApiError(409, 'Incident already resolved', `resolved by ${i.resolvedBy} at ${i.resolvedAt?.toISOString()}`);

/**
 * Runs an update and maps the validators' refusals to API errors. A Resolved incident is
 * answered from the store: its workflow may already have finished.
 */
async function update<T>(
  ops: IncidentOps,
  incident: IncidentRecord,
  run: () => Promise<T>,
  restarted = false,
): Promise<T> {
  if (incident.state === 'Resolved') throw alreadyResolved(incident);
  try {
    return await run();
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError && err.cause instanceof ApplicationFailure) {
      const failure = err.cause;
      const details = String(failure.details?.[0] ?? '');
      throw new ApiError(failure.type === CONFLICT ? 409 : 400, failure.message, details);
    }
    const fresh = await getIncident(incident.name); // the workflow finished between our read and the update
    if (fresh?.state === 'Resolved') throw alreadyResolved(fresh);
    if (!(err instanceof WorkflowNotFoundError) || !fresh) throw err;
    // Open, but its workflow is closed: it died unresolved (terminated, failed). A new run
    // carrying the record's state takes the update, as the reconciler would have restarted it.
    if (!restarted && (await restartClosedWorkflow(ops, fresh))) return update(ops, fresh, run, true);
    throw unavailable(`the workflow of incident ${fresh.name} is not running; the reconciler repairs it, retry`);
  }
}

/**
 * A new run for an open incident whose workflow closed unresolved (failed, terminated, timed
 * out), carrying its record's state. True when a run is open now; false when the closed run
 * completed (only a resolve completes one: the record is stale, the reconciler's to repair).
 */
async function restartClosedWorkflow(ops: IncidentOps, incident: IncidentRecord): Promise<boolean> {
  if (await startIncidentRun(ops, incident)) return true;
  return (await ops.client.workflow.getHandle(incident.name).describe()).status.name === 'RUNNING';
}

/**
 * Starts a run for an open incident, carrying its record's state, where none runs: never over a
 * completed run (only a resolve completes one). True when this call started it.
 */
export async function startIncidentRun(ops: IncidentOps, incident: IncidentRecord): Promise<boolean> {
  try {
    await ops.client.workflow.start(incidentWorkflow, {
      ...workflowOptions(ops, incident),
      workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
    });
    return true;
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return false;
    throw err;
  }
}

export async function acknowledgeIncident(
  ops: IncidentOps,
  incident: IncidentRecord,
  request: AcknowledgeRequest,
): Promise<IncidentRecord> {
  if (incident.acknowledged) {
    throw new ApiError(
      409,
      'Incident already acknowledged',
      `acknowledged by ${incident.acknowledgedBy} at ${incident.acknowledgedAt?.toISOString()}`,
    );
  }
  await update(ops, incident, () =>
    ops.client.workflow.getHandle(incident.name).executeUpdate(acknowledgeUpdate, { args: [request] }),
  );
  return (await getIncident(incident.name))!;
}

/** Snooze durations: the Go grammar, above zero, at most 24h; anything else is `Invalid duration`. */
export function snoozeDuration(text: string): number {
  let ms: number;
  try {
    ms = parseDuration(text);
  } catch (err) {
    if (err instanceof DurationError)
      throw new ApiError(400, 'Invalid duration', `${text} is not a Go duration such as 30m or 2h30m`);
    throw err;
  }
  if (!(ms > 0 && ms <= SNOOZE_MAX_MS))
    throw new ApiError(400, 'Invalid duration', `${text} must be above 0s and at most 24h`);
  return ms;
}

export async function snoozeIncident(
  ops: IncidentOps,
  incident: IncidentRecord,
  request: SnoozeRequest,
): Promise<IncidentRecord> {
  await update(ops, incident, () =>
    ops.client.workflow.getHandle(incident.name).executeUpdate(snoozeUpdate, { args: [request] }),
  );
  return (await getIncident(incident.name))!;
}

/** Resolves; `resolved: false` when an at-source resolution left an Escalated incident open. */
export async function resolveIncident(
  ops: IncidentOps,
  incident: IncidentRecord,
  request: ResolveRequest,
): Promise<{ resolved: boolean; incident: IncidentRecord }> {
  let resolved: boolean;
  try {
    resolved = await update(ops, incident, () =>
      ops.client.workflow.getHandle(incident.name).executeUpdate(resolveUpdate, { args: [request] }),
    );
  } finally {
    // Also when the answer was lost (it may have landed): no signal joins a read begun before it.
    joinReads.forget(incident.resourceKey);
  }
  return { resolved, incident: (await getIncident(incident.name))! };
}
