import { formatDuration } from '../domain/duration';
import { splitResource, type TimelineEvent } from '../domain/incident';
import { API_VERSION } from '../domain/schemas';
import type { IncidentRecord } from '../store/incidents';

/** JSON shapes of incidents and insights, field for field as the spec names them. */
export const iso = (d?: Date | null) => (d ? new Date(d).toISOString() : undefined);

/** Whole seconds: `age` is for people; sub-second digits are noise. */
const age = (since: Date, now: Date) =>
  formatDuration(Math.max(0, Math.floor((now.getTime() - since.getTime()) / 1000) * 1000));

export function incidentListItem(i: IncidentRecord, now = new Date()) {
  return {
    name: i.name,
    namespace: i.namespace,
    severity: i.severity,
    state: i.state,
    resource: i.resource,
    description: i.description,
    riskScore: i.riskScore,
    detectedAt: iso(i.detectedAt),
    ...(i.resolvedAt && { resolvedAt: iso(i.resolvedAt) }),
    age: age(i.detectedAt, now),
    ...(i.assignedTo && { assignedTo: i.assignedTo }),
    labels: i.labels ?? {},
  };
}

export function incidentDetail(i: IncidentRecord, timelineCount: number) {
  return {
    apiVersion: API_VERSION,
    kind: 'Incident',
    metadata: { name: i.name, namespace: i.namespace, createdAt: iso(i.createdAt), labels: i.labels ?? {} },
    spec: {
      resource: i.resource,
      severity: i.severity,
      description: i.description,
      detectionSource: i.detectionSource,
      correlationId: i.correlationId,
      runbook: i.runbook,
      escalationPolicy: i.escalationPolicy,
      signalType: i.signalType,
      cluster: i.cluster,
    },
    status: {
      state: i.state,
      riskScore: i.riskScore,
      analysisResult: i.analysisResult,
      acknowledged: i.acknowledged,
      assignedTo: i.assignedTo,
      detectedAt: iso(i.detectedAt),
      lastUpdated: iso(i.lastUpdated),
      timelineCount,
      correlatedSignals: i.correlatedSignals.length,
      ...(i.snoozeUntil && { snoozed: i.snoozed, snoozeUntil: iso(i.snoozeUntil) }),
      ...(i.escalatedAt && { escalatedAt: iso(i.escalatedAt) }),
      ...(i.resolvedAt && { resolvedAt: iso(i.resolvedAt), resolution: i.resolution }),
      ...(i.insight && { insight: i.insight }),
      ...(i.postmortem && { postmortem: i.postmortem }),
    },
  };
}

export function incidentAfterResolve(i: IncidentRecord) {
  const { kind, name } = splitResource(i.resource);
  return {
    apiVersion: API_VERSION,
    kind: 'Incident',
    metadata: { name: i.name, namespace: i.namespace, annotations: i.annotations },
    spec: { resourceRef: { kind, name, namespace: i.namespace }, severity: i.severity, signalType: i.signalType },
    status: {
      state: i.state,
      resolution: i.resolution ?? '',
      resolvedAt: iso(i.resolvedAt),
      detectedAt: iso(i.detectedAt),
      remediationAttempts: i.remediationAttempts,
      ...(i.escalatedAt && { escalatedAt: iso(i.escalatedAt) }),
    },
  };
}

export function incidentAfterSnooze(i: IncidentRecord) {
  return {
    apiVersion: API_VERSION,
    kind: 'Incident',
    metadata: { name: i.name, namespace: i.namespace },
    status: {
      state: i.state,
      snoozed: i.snoozed,
      snoozedBy: i.snoozedBy,
      snoozedAt: iso(i.snoozedAt),
      snoozeUntil: iso(i.snoozeUntil),
      snoozeReason: i.snoozeReason ?? '',
    },
  };
}

export function incidentAfterAcknowledge(i: IncidentRecord) {
  return {
    apiVersion: API_VERSION,
    kind: 'Incident',
    metadata: { name: i.name, namespace: i.namespace },
    status: {
      state: i.state,
      acknowledged: i.acknowledged,
      acknowledgedBy: i.acknowledgedBy,
      acknowledgedAt: iso(i.acknowledgedAt),
      message: i.acknowledgeMessage ?? '',
    },
  };
}

export function timelineView(i: IncidentRecord, events: TimelineEvent[]) {
  return {
    apiVersion: API_VERSION,
    kind: 'IncidentTimeline',
    metadata: { name: i.name, namespace: i.namespace, eventCount: events.length },
    events: events.map((e) => ({
      timestamp: iso(e.timestamp),
      type: e.type,
      source: e.source,
      message: e.message,
      ...(e.severity && { severity: e.severity }),
      ...(e.details && { details: e.details }),
    })),
  };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the lean insight document
export function insightView(d: any) {
  return {
    name: d.name,
    namespace: d.namespace,
    issueRef: d.issueRef,
    provider: d.provider,
    model: d.model,
    analysis: d.analysis,
    confidence: d.confidence,
    recommendations: d.recommendations,
    suggestedActions: d.suggestedActions,
    logAnalysis: d.logAnalysis,
    gitOpsContext: d.gitOpsContext,
    cascadeAnalysis: d.cascadeAnalysis,
    blastRadiusPrediction: d.blastRadiusPrediction,
    generatedAt: iso(d.generatedAt),
    creationTimestamp: iso(d.creationTimestamp),
  };
}
