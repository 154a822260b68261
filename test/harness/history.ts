import { temporal } from '@temporalio/proto';
import { INCIDENT_STATE, REMEDIATION_STATE } from '../../workflows/search-attributes';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** What the SDK core records in a local activity's marker (the fields the tests read). */
export interface LocalActivityMarker {
  activity_type: string;
  attempt: number;
}

/** The local activities a run recorded, in order: one marker each, whatever its attempts. */
export function localActivityMarkers(events: HistoryEvent[]): LocalActivityMarker[] {
  return events.flatMap((e) => {
    const marker = e.markerRecordedEventAttributes;
    const data = marker?.markerName === 'core_local_activity' ? marker.details?.data?.payloads?.[0]?.data : undefined;
    return data ? [JSON.parse(Buffer.from(data).toString()) as LocalActivityMarker] : [];
  });
}

const { WORKFLOW_TASK_FAILED_CAUSE_UNHANDLED_COMMAND } = temporal.api.enums.v1.WorkflowTaskFailedCause;

/**
 * The workflow tasks a run failed, by their failure's message. Not counted: the server's
 * `UnhandledCommand`, its answer to a task that closes the run (complete or continue-as-new)
 * while a signal or an update arrived. That is Temporal's protocol, not a failure of the
 * workflow's code: the run's next task sees the new event and closes again.
 */
export const failedWorkflowTasks = (events: HistoryEvent[]): string[] =>
  events.flatMap((e) => {
    const failed = e.workflowTaskFailedEventAttributes;
    if (!failed || failed.cause === WORKFLOW_TASK_FAILED_CAUSE_UNHANDLED_COMMAND) return [];
    return [failed.failure?.message ?? String(failed.cause)];
  });

/** The activities a run scheduled, in order (attempts are not events of their own). */
export const scheduledActivities = (events: HistoryEvent[]): string[] =>
  events.flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []);

/** The activities among them that keep a plan's records (as local activities they leave markers instead). */
export const planRecordActivities = (events: HistoryEvent[]): string[] =>
  scheduledActivities(events).filter((a) =>
    ['setPlanState', 'recordStep', 'recordVerification', 'finishPlan'].includes(a),
  );

type IndexedFields = Record<string, temporal.api.common.v1.IPayload> | null | undefined;

/** A state as search attributes carry it: at its start (`events[0]`) or in an upsert. */
function stateIn(key: string, fields: IndexedFields): string | undefined {
  const data = fields?.[key]?.data;
  return data ? (JSON.parse(Buffer.from(data).toString()) as string) : undefined;
}

/** The state (search attribute `key`) a run started with, and the states it upserted, in order. */
function states(key: string, events: HistoryEvent[]): { started?: string; upserted: string[] } {
  return {
    started: stateIn(key, events[0]?.workflowExecutionStartedEventAttributes?.searchAttributes?.indexedFields),
    upserted: events.flatMap(
      (e) => stateIn(key, e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields) ?? [],
    ),
  };
}

/** The plan state a run started with, and the states it upserted, in order. */
export const remediationStates = (events: HistoryEvent[]) => states(REMEDIATION_STATE.name, events);
/** The incident state a run started with, and the states it upserted, in order. */
export const incidentStates = (events: HistoryEvent[]) => states(INCIDENT_STATE.name, events);
