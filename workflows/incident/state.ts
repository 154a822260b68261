import { upsertSearchAttributes } from '@temporalio/workflow';
import type { IncidentActivities, ResolveInput } from '../../activities/incidents';
import type { IncidentState, Severity } from '../../domain/incident';
import type { CorrelatedSignal, LiveState, ResolveRequest } from '../../domain/incident-requests';
import type { PlanState } from '../../domain/remediation';
import type { PlanInbox } from '../remediation';
import { INCIDENT, INCIDENT_STATE, NAMESPACE, REMEDIATION_STATE, RESOURCE, SEVERITY } from '../search-attributes';
import { incidentStore } from './proxies';

export interface IncidentWorkflowInput {
  name: string;
  namespace: string;
  resource: string;
  severity: Severity;
  /** Carried across continue-as-new (and into a new run of a workflow that died); absent on the first run. */
  carried?: {
    live: LiveState;
    pending: CorrelatedSignal[];
    signalsRecorded: number;
    /** The escalation ladder (`<name>-escalation`) runs: acknowledge, snooze and resolve are forwarded to it. */
    ladder?: boolean;
  };
}

/** The plan running in this run: what it is told by the incident's handlers. */
export interface RunningPlan {
  name: string;
  inbox: PlanInbox;
  /** It waits for its approval (Pending). */
  waiting?: boolean;
}

/** The remediation budget of this run (budget.ts): from the move to Remediating until automation ends. */
export interface RemediationBudget {
  ms: number;
  /** RFC 3339: what each plan is told (PlanInbox.budgetEndsAt). */
  endsAt: string;
  /** The attempt being made, of how many. */
  attempt: number;
  maxAttempts: number;
  /** Automation ended (verified, gave up, or the incident was resolved): the budget no longer counts. */
  over: boolean;
  /** Its timer, and what it does when the budget runs out: awaited before anything that follows remediation. */
  watching: Promise<void>;
}

/** One run of an incident's workflow: everything its handlers and phases share. */
export interface IncidentRun {
  readonly input: IncidentWorkflowInput;
  readonly name: string;
  /** What the `liveState` query and the updates' validators read. */
  readonly live: LiveState;
  /** Correlated signals sent one by one (to an incident being resolved), not recorded yet. */
  readonly pending: CorrelatedSignal[];
  /** How many correlated signals the incident has recorded. */
  signalsRecorded: number;
  /** The inbox (store/signal-inbox.ts) may hold signals not recorded yet. */
  inboxQueued: boolean;
  /** A first run's triage records the inbox itself: until it answers, nothing else does. */
  triageRecordsInbox: boolean;
  /** The escalation ladder was started: acknowledge, snooze and resolve are told to it. */
  ladderStarted: boolean;
  plan?: RunningPlan;
  /** Absent until the incident moves to Remediating, and for runs recorded before the budget. */
  budget?: RemediationBudget;
  /** A plan's end state, published with the resolve that follows it (one upsert for both). */
  planEnd?: PlanState;
  /** The alert source's resolution while a plan ran: applied if the plan ends without running anything. */
  sourceResolution?: ResolveRequest;
  /** A resolve the workflow decided itself (a verified plan's): its close writes it. */
  closingResolve?: ResolveInput;
}

export function startRun(input: IncidentWorkflowInput): IncidentRun {
  const { carried } = input;
  return {
    input,
    name: input.name,
    live: carried?.live ?? { state: 'Detected', acknowledged: false, correlatedSignals: 0 },
    pending: carried?.pending ?? [],
    signalsRecorded: carried?.signalsRecorded ?? 0,
    // A continued run looks in the inbox once as it starts: signals queued while the run before
    // it closed, or a hand-over lost to a crash, are not missed. A first run's triage does it.
    inboxQueued: !!carried,
    triageRecordsInbox: !carried,
    ladderStarted: carried?.ladder ?? false,
  };
}

export const isResolved = (run: IncidentRun): boolean => run.live.state === 'Resolved';

/** The ladder's workflow id. */
export const ladderId = (run: IncidentRun): string => `${run.name}-escalation`;

/** Publishes the incident's search attributes; `planState`: the state of its plan, published with them. */
export function publish(run: IncidentRun, planState = run.planEnd): void {
  run.planEnd = undefined;
  const { input } = run;
  upsertSearchAttributes([
    { key: INCIDENT, value: run.name },
    { key: INCIDENT_STATE, value: run.live.state },
    { key: SEVERITY, value: input.severity },
    { key: NAMESPACE, value: input.namespace },
    { key: RESOURCE, value: input.resource },
    ...(planState ? [{ key: REMEDIATION_STATE, value: planState }] : []),
  ]);
}

/** Publishes the state of the plan running now, alone. */
export function publishPlanState(state: PlanState): void {
  upsertSearchAttributes([{ key: REMEDIATION_STATE, value: state }]);
}

/** Moves the incident to `state` (persisted first); a resolve that lands meanwhile wins. */
export async function moveTo(
  run: IncidentRun,
  state: IncidentState,
  event?: Parameters<IncidentActivities['setIncidentState']>[0]['event'],
): Promise<void> {
  if (isResolved(run)) return;
  await incidentStore.setIncidentState({ name: run.name, state, at: new Date().toISOString(), event });
  if (isResolved(run)) return;
  run.live.state = state;
  publish(run);
}

/** Resolves from the workflow itself (a verified plan, the source's deferred resolution); the close writes it. */
export function resolveAs(run: IncidentRun, request: ResolveRequest): void {
  if (isResolved(run)) return;
  const at = new Date().toISOString();
  Object.assign(run.live, { state: 'Resolved', resolvedBy: request.actor.user, resolvedAt: at });
  run.closingResolve = { name: run.name, request, at };
  publish(run);
}

export function countRecorded(run: IncidentRun, recorded: number): void {
  run.signalsRecorded += recorded;
  run.live.correlatedSignals = run.signalsRecorded;
}
