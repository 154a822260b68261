import { resourceKey, type IncidentState, type Severity, type Signal, type TimelineEvent } from './incident';
import type { LiveState } from './incident-requests';
import { riskScore, severityFromRisk } from './risk';

/** An incident as stored (lean); store/incidents.ts persists it, the API renders it. */
export type IncidentRecord = {
  name: string;
  namespace: string;
  cluster: string;
  resource: string;
  resourceKey: string;
  signalType: Signal['signalType'];
  severity: NonNullable<Signal['severity']>;
  severitySource: 'source' | 'risk';
  description: string;
  labels: Record<string, string>;
  detectionSource: string;
  correlationId: string;
  runbook: string;
  escalationPolicy: string;
  state: IncidentState;
  riskScore: number;
  correlatedSignals: {
    signalType: string;
    severity?: string;
    description: string;
    source: string;
    labels: Record<string, string>;
    at: Date;
  }[];
  /**
   * How many signals joined, all told. `correlatedSignals` keeps only the newest
   * CORRELATED_SIGNALS_KEPT (a storm must not grow one document without bound); the timeline keeps
   * every one. Absent on records written before the count existed: see signalCount.
   */
  correlatedSignalCount?: number;
  /**
   * The queue id of the newest inbox signal counted: a drain that finds it in its batch counts on
   * after it, whatever index its caller passed (see recordSignals in activities/incidents.ts).
   */
  lastSignalKey?: string;
  analysisResult: { rootCause: string; recommendation: string; confidence: number; relatedEvents: string[] };
  insight: string;
  /** When the insight was written (the end of the analysis phase). */
  analyzedAt?: Date;
  acknowledged: boolean;
  acknowledgedBy?: string;
  acknowledgedAt?: Date;
  acknowledgeMessage?: string;
  snoozed: boolean;
  snoozedBy?: string;
  snoozedAt?: Date;
  snoozeUntil?: Date;
  snoozeReason?: string;
  assignedTo: string;
  /** When the problem began at its source, when the source said (absent: unknown). */
  signalStartedAt?: Date;
  detectedAt: Date;
  createdAt: Date;
  lastUpdated: Date;
  escalatedAt?: Date;
  remediationAttempts: number;
  resolvedAt?: Date;
  resolution?: string;
  resolvedBy?: string;
  annotations: Record<string, string>;
  postmortem: string;
};

/** The newest correlated signals a record keeps inline (the timeline keeps all of them). */
export const CORRELATED_SIGNALS_KEPT = 100;

/** Signals joined to the incident, on records from before and after the count was kept. */
export const signalCount = (r: { correlatedSignals?: readonly unknown[]; correlatedSignalCount?: number }): number =>
  r.correlatedSignalCount ?? r.correlatedSignals?.length ?? 0;

/** What no new record has yet: no runbook, analysis, assignee, remediation or postmortem (fresh objects each time). */
function nothingYet() {
  return {
    runbook: '',
    escalationPolicy: 'default',
    correlatedSignals: [],
    correlatedSignalCount: 0,
    analysisResult: { rootCause: '', recommendation: '', confidence: 0, relatedEvents: [] },
    insight: '',
    assignedTo: '',
    remediationAttempts: 0,
    annotations: {},
    postmortem: '',
  } satisfies Partial<IncidentRecord>;
}

/** The record of an incident a signal opens (DESIGN §6): severity from the source, else from the risk score. */
export function newIncidentRecord(name: string, signal: Signal, at: Date): IncidentRecord {
  const key = resourceKey(signal);
  const score = riskScore(signal.signalType, signal.severity, 0);
  return {
    ...nothingYet(),
    name,
    namespace: signal.namespace,
    cluster: signal.cluster,
    resource: signal.resource,
    resourceKey: key,
    signalType: signal.signalType,
    severity: signal.severity ?? severityFromRisk(score),
    severitySource: signal.severity ? 'source' : 'risk',
    description: signal.description,
    labels: signal.labels,
    detectionSource: signal.detectionSource,
    correlationId: key,
    state: 'Detected',
    riskScore: score,
    acknowledged: false,
    snoozed: false,
    ...(signal.startedAt && { signalStartedAt: new Date(signal.startedAt) }),
    detectedAt: at,
    createdAt: at,
    lastUpdated: at,
  };
}

/** The timeline event that opens an incident. */
export function detectionEvent(signal: Signal, severity: string, at: Date): TimelineEvent {
  return {
    timestamp: at,
    type: 'Detection',
    source: signal.detectionSource === 'alertmanager' ? 'alertmanager' : 'detector',
    message: `${signal.signalType} detected on ${signal.resource} in ${signal.namespace}${signal.description ? `: ${signal.description}` : ''}`,
    severity: severity as TimelineEvent['severity'],
    details: { signalType: signal.signalType, cluster: signal.cluster, detectionSource: signal.detectionSource },
  };
}

/** What a running incident workflow still knows when its record was lost (the reconciler's view). */
export interface OrphanedRun {
  name: string;
  namespace: string;
  resource: string;
  severity: Severity;
  startedAt: Date;
}

/** A record rebuilt from a workflow: what it knows, and empty fields for what only the lost record held. */
export function recoveredIncidentRecord(run: OrphanedRun, live: LiveState, now: Date): IncidentRecord {
  const cluster = 'local';
  const key = resourceKey({ cluster, namespace: run.namespace, resource: run.resource });
  return {
    ...nothingYet(),
    name: run.name,
    namespace: run.namespace,
    cluster,
    resource: run.resource,
    resourceKey: key,
    signalType: 'Custom',
    severity: run.severity,
    severitySource: 'source',
    description: 'Record rebuilt by the reconciler from the incident workflow; the original signal details were lost',
    labels: {},
    detectionSource: 'reconciler',
    correlationId: key,
    state: live.state,
    riskScore: 0,
    acknowledged: live.acknowledged,
    ...(live.acknowledgedBy && { acknowledgedBy: live.acknowledgedBy }),
    ...(live.acknowledgedAt && { acknowledgedAt: new Date(live.acknowledgedAt) }),
    snoozed: Boolean(live.snoozeUntil),
    ...(live.snoozeUntil && { snoozeUntil: new Date(live.snoozeUntil) }),
    detectedAt: run.startedAt,
    createdAt: now,
    lastUpdated: now,
  };
}
