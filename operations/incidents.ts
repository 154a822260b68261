import { WorkflowExecutionAlreadyStartedError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { ApplicationFailure, WorkflowIdReusePolicy } from '@temporalio/common';
import { DurationError, parseDuration } from '../domain/duration';
import { ApiError } from '../domain/errors';
import type { Signal } from '../domain/incident';
import { getIncident, openOrJoin, type IncidentRecord } from '../store/incidents';
import { incidentWorkflow, type IncidentWorkflowInput } from '../workflows/incident';
import {
  acknowledgeUpdate,
  CONFLICT,
  correlateSignal,
  resolveUpdate,
  snoozeUpdate,
  type AcknowledgeRequest,
  type Actor,
  type ResolveRequest,
  type SnoozeRequest,
} from '../workflows/incident-messages';
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
export const SYSTEM_ACTOR: Actor = { user: 'system', role: 'system', sourceIP: 'internal', userAgent: 'foghorn' };

/** Opens an incident (starting its workflow) or joins the open one (signalling it). */
export async function ingestSignal(
  ops: IncidentOps,
  signal: Signal,
): Promise<{ created: boolean; incident: IncidentRecord }> {
  const { created, incident } = await openOrJoin(signal);
  if (created) {
    try {
      await ops.client.workflow.start(incidentWorkflow, workflowOptions(ops, incident));
    } catch (err) {
      // A joiner's signal-with-start got there first: same workflow, same arguments.
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
  } else {
    // With-start: the creator may not have started the workflow yet.
    await ops.client.workflow.signalWithStart(incidentWorkflow, {
      ...workflowOptions(ops, incident),
      signal: correlateSignal,
      signalArgs: [
        {
          signalType: signal.signalType,
          ...(signal.severity && { severity: signal.severity }),
          description: signal.description,
          source: signal.detectionSource,
          labels: signal.labels,
          at: new Date().toISOString(),
        },
      ],
    });
  }
  return { created, incident };
}

/** One workflow per incident, id = incident name, never reused, findable by its attributes. */
function workflowOptions(ops: IncidentOps, incident: IncidentRecord) {
  return {
    workflowId: incident.name,
    taskQueue: ops.taskQueue,
    workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    args: [
      { name: incident.name, namespace: incident.namespace, resource: incident.resource, severity: incident.severity },
    ] as [IncidentWorkflowInput],
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
async function update<T>(incident: IncidentRecord, run: () => Promise<T>): Promise<T> {
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
  await update(incident, () =>
    ops.client.workflow.getHandle(incident.name).executeUpdate(acknowledgeUpdate, { args: [request] }),
  );
  return (await getIncident(incident.name))!;
}

const SNOOZE_MAX_MS = 24 * 60 * 60 * 1000;

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
  await update(incident, () =>
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
  const resolved = await update(incident, () =>
    ops.client.workflow.getHandle(incident.name).executeUpdate(resolveUpdate, { args: [request] }),
  );
  return { resolved, incident: (await getIncident(incident.name))! };
}
