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
import type { Signal } from '../domain/incident';
import {
  clearDedupEntry,
  getIncident,
  IncidentPendingError,
  openOrJoin,
  type IncidentRecord,
} from '../store/incidents';
import { incidentWorkflow, type IncidentWorkflowInput } from '../workflows/incident';
import { acknowledgeUpdate, correlateSignal, resolveUpdate, snoozeUpdate } from '../workflows/incident-messages';
import {
  CONFLICT,
  SNOOZE_MAX_MS,
  type AcknowledgeRequest,
  type CorrelatedSignal,
  type ResolveRequest,
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
}

export const MANUAL_RESOLUTION = 'Manually resolved via dashboard';
export const SOURCE_RESOLUTION = 'Resolved at source';

/**
 * 503 `Service unavailable` + Retry-After for an ingest that could not reach Temporal. When the
 * incident record was written first, `incident` names it: it stays, and a retried signal joins it
 * through signal-with-start, which starts its workflow (as does the reconciler).
 */
export class IngestUnavailableError extends ApiError {
  constructor(
    details: string,
    readonly incident?: IncidentRecord,
    readonly created = false,
  ) {
    super(503, 'Service unavailable', details, { 'Retry-After': String(RETRY_AFTER_SECONDS) });
  }
}

const temporalDown = (err: unknown) => err instanceof ServiceError;
const signalUndelivered = (incident: IncidentRecord) =>
  new IngestUnavailableError(
    `the signal for incident ${incident.name} could not be delivered (Temporal is unreachable); retry`,
    incident,
  );

/** Bounds the stale-dedup repairs of one ingest (each repair makes the next pass open or join). */
const INGEST_PASSES = 3;

/**
 * Opens an incident (starting its workflow) or joins the open one (signalling it). Never a 500
 * for states a crash or an outage leaves behind:
 * - Temporal unreachable → IngestUnavailableError (503); a record already written stays.
 * - the dedup entry names a resolved incident: a workflow still winding down gets the signal
 *   (recorded as arrived after resolution); none is ever started for it.
 * - the dedup entry names an incident whose workflow has closed: when that incident is resolved
 *   (its record says so, or its workflow completed, which only a resolve leads to) the entry is
 *   stale — it is cleared, conditionally, and the signal opens a new incident; when the workflow
 *   died unresolved (terminated, failed, timed out) a new run of it starts with the signal,
 *   carrying the state its record holds.
 */
export async function ingestSignal(
  ops: IncidentOps,
  signal: Signal,
): Promise<{ created: boolean; incident: IncidentRecord }> {
  for (let pass = 1; ; pass++) {
    let opened: { created: boolean; incident: IncidentRecord };
    try {
      opened = await openOrJoin(signal);
    } catch (err) {
      if (err instanceof IncidentPendingError)
        throw new IngestUnavailableError(`incident ${err.incident} for this resource is still being created`);
      throw err;
    }
    const { created, incident } = opened;
    if (created) {
      try {
        await ops.client.workflow.start(incidentWorkflow, workflowOptions(ops, incident));
      } catch (err) {
        // A joiner's signal-with-start got there first: same workflow, same arguments.
        if (err instanceof WorkflowExecutionAlreadyStartedError) return opened;
        if (temporalDown(err))
          throw new IngestUnavailableError(
            `incident ${incident.name} was recorded but its workflow could not be started (Temporal is unreachable); retry: the retried signal joins it and starts its workflow`,
            incident,
            true,
          );
        throw err;
      }
      return opened;
    }
    if (incident.state === 'Resolved') {
      // Never start a workflow for a resolved incident. Still winding down: the signal is
      // recorded as arrived after resolution. Closed (or gone): the entry is stale.
      try {
        await ops.client.workflow.getHandle(incident.name).signal(correlateSignal, correlated(signal));
        return opened;
      } catch (err) {
        if (temporalDown(err)) throw signalUndelivered(incident);
        if (!(err instanceof WorkflowNotFoundError)) throw err;
      }
      await clearDedupEntry(incident);
      if (pass >= INGEST_PASSES)
        throw new IngestUnavailableError(`the open incident of this resource changed while the signal was ingested`);
      continue;
    }
    try {
      // With-start: the creator may not have started the workflow yet.
      await ops.client.workflow.signalWithStart(incidentWorkflow, {
        ...workflowOptions(ops, incident),
        signal: correlateSignal,
        signalArgs: [correlated(signal)],
      });
      return opened;
    } catch (err) {
      if (temporalDown(err)) throw signalUndelivered(incident);
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
    // The incident's workflow has closed, yet its dedup entry still names it.
    const repaired = await closedIncidentWorkflow(ops, incident, signal);
    if (repaired) return { created: false, incident: repaired };
    if (pass >= INGEST_PASSES)
      throw new IngestUnavailableError(`the open incident of this resource changed while the signal was ingested`);
  }
}

const correlated = (signal: Signal): CorrelatedSignal => ({
  signalType: signal.signalType,
  ...(signal.severity && { severity: signal.severity }),
  description: signal.description,
  source: signal.detectionSource,
  labels: signal.labels,
  at: new Date().toISOString(),
});

/**
 * Signal-with-start found the incident's workflow closed. Either clears the stale dedup entry
 * (undefined: the caller ingests again and opens a new incident) or restarts the workflow of an
 * incident that died unresolved, with the signal (that incident, joined).
 */
async function closedIncidentWorkflow(
  ops: IncidentOps,
  incident: IncidentRecord,
  signal: Signal,
): Promise<IncidentRecord | undefined> {
  const fresh = await getIncident(incident.name);
  let status: string;
  try {
    status = (await ops.client.workflow.getHandle(incident.name).describe()).status.name;
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
    return undefined; // gone from Temporal's retention meanwhile: ingest again
  }
  if (status === 'RUNNING') return undefined; // a new run appeared meanwhile: ingest again
  if (!fresh || fresh.state === 'Resolved' || status === 'COMPLETED') {
    // Resolved (a crash between the resolve and clearing the entry, or a record the crash left
    // stale): the entry is stale and the next signal opens a new incident, as after any resolve.
    await clearDedupEntry(incident);
    return undefined;
  }
  try {
    await ops.client.workflow.signalWithStart(incidentWorkflow, {
      ...workflowOptions(ops, fresh),
      // Only over a run that failed, was terminated or timed out: never a completed one.
      workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
      signal: correlateSignal,
      signalArgs: [correlated(signal)],
    });
  } catch (err) {
    if (temporalDown(err))
      throw new IngestUnavailableError(
        `incident ${fresh.name} has no running workflow and Temporal is unreachable; retry`,
      );
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    return undefined; // someone restarted or finished it first: ingest again
  }
  return fresh;
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
        correlatedSignals: incident.correlatedSignals.length,
      },
      pending: [],
      signalsSeen: incident.correlatedSignals.length,
      pastTriage: true,
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
      { key: INCIDENT_STATE, value: incident.state },
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
  const resolved = await update(ops, incident, () =>
    ops.client.workflow.getHandle(incident.name).executeUpdate(resolveUpdate, { args: [request] }),
  );
  return { resolved, incident: (await getIncident(incident.name))! };
}
