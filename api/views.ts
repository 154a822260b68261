import { z } from 'zod';
import { evidenceViewSchema } from '../contracts/changes';
import { formatDuration } from '../domain/duration';
import { splitResource, TIMELINE_TYPES, type TimelineEvent } from '../domain/incident';
import { incidentStateSchema } from '../contracts/incidents';
import { signalCount } from '../domain/incident-record';
import { FINAL_PLAN_STATES } from '../domain/remediation';
import { planStateSchema } from '../contracts/remediation';
import { severitySchema, signalTypeSchema } from '../contracts/vocabulary';
import { API_VERSION } from '../domain/envelope';
import { listSchema } from '../contracts/envelope';
import type { IncidentRecord } from '../store/incidents';
import type { PlanRecord } from '../store/remediations';

/** JSON shapes of incidents and insights, field for field as the spec names them. */
export const iso = (d?: Date | null) => (d ? new Date(d).toISOString() : undefined);

/** Whole seconds: `age` is for people; sub-second digits are noise. */
const age = (since: Date, now: Date) =>
  formatDuration(Math.max(0, Math.floor((now.getTime() - since.getTime()) / 1000) * 1000));

/**
 * What GET /incidents reads of each record: the fields incidentListItem renders, and the signal
 * count (never the signals themselves, which only the single incident's GET shows).
 */
export const INCIDENT_LIST_FIELDS = [
  'name',
  'namespace',
  'severity',
  'state',
  'resource',
  'description',
  'riskScore',
  'detectedAt',
  'resolvedAt',
  'assignedTo',
  'labels',
  'correlatedSignalCount',
] as const satisfies readonly (keyof IncidentRecord)[];
export type IncidentListRow = Pick<IncidentRecord, (typeof INCIDENT_LIST_FIELDS)[number]>;

export function incidentListItem(i: IncidentListRow, now = new Date()) {
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

/** The plan still in flight among an incident's plans (oldest first): the latest one not final. */
function activePlan(plans: readonly PlanRecord[]) {
  const p = [...plans].reverse().find((plan) => !FINAL_PLAN_STATES.includes(plan.state));
  return p && { name: p.name, state: p.state, strategy: p.strategy, attempt: p.attempt };
}

/** `plans`: the incident's remediation plans (store/remediations.ts plansOfIncident). */
export function incidentDetail(i: IncidentRecord, timelineCount: number, plans: readonly PlanRecord[] = []) {
  const active = activePlan(plans);
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
      correlatedSignals: signalCount(i),
      remediationAttempts: i.remediationAttempts ?? 0,
      ...(active && { activePlan: active }),
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
    // Dates to RFC 3339 text, as everywhere in the API.
    ...(d.evidence && { evidence: JSON.parse(JSON.stringify(d.evidence)) }),
    generatedAt: iso(d.generatedAt),
    creationTimestamp: iso(d.creationTimestamp),
  };
}

// ---------------------------------------------------------------------------------------------
// Response schemas of the views above (the OpenAPI document; schemathesis checks answers against them)
// ---------------------------------------------------------------------------------------------

const timestamp = z.string().datetime();
const goDuration = z.string().describe('Go time.Duration text, e.g. 1h2m3s');
const stringMap = z.record(z.string());
const singleIncident = { apiVersion: z.literal(API_VERSION), kind: z.literal('Incident') };
const nameAndNamespace = z.object({ name: z.string(), namespace: z.string() });

export const incidentListSchema = listSchema(
  'IncidentList',
  z.object({
    name: z.string(),
    namespace: z.string(),
    severity: severitySchema,
    state: incidentStateSchema,
    resource: z.string(),
    description: z.string(),
    riskScore: z.number().int(),
    detectedAt: timestamp,
    resolvedAt: timestamp.optional(),
    age: goDuration,
    assignedTo: z.string().optional(),
    labels: stringMap,
  }),
);

export const incidentDetailSchema = z.object({
  ...singleIncident,
  metadata: nameAndNamespace.extend({ createdAt: timestamp, labels: stringMap }),
  spec: z.object({
    resource: z.string(),
    severity: severitySchema,
    description: z.string(),
    detectionSource: z.string(),
    correlationId: z.string(),
    runbook: z.string(),
    escalationPolicy: z.string(),
    signalType: signalTypeSchema,
    cluster: z.string(),
  }),
  status: z.object({
    state: incidentStateSchema,
    riskScore: z.number().int(),
    analysisResult: z.object({
      rootCause: z.string(),
      recommendation: z.string(),
      confidence: z.number().min(0).max(1),
      relatedEvents: z.array(z.string()),
    }),
    acknowledged: z.boolean(),
    assignedTo: z.string(),
    detectedAt: timestamp,
    lastUpdated: timestamp,
    timelineCount: z.number().int(),
    correlatedSignals: z.number().int(),
    remediationAttempts: z.number().int().describe('remediation plans started for this incident'),
    activePlan: z
      .object({ name: z.string(), state: planStateSchema, strategy: z.string(), attempt: z.number().int() })
      .optional()
      .describe('the remediation plan in flight (Pending, Executing, Verifying); absent when none is'),
    snoozed: z.boolean().optional(),
    snoozeUntil: timestamp.optional(),
    escalatedAt: timestamp.optional(),
    resolvedAt: timestamp.optional(),
    resolution: z.string().optional(),
    insight: z.string().optional().describe("the AI insight's name"),
    postmortem: z.string().optional().describe("the postmortem's name"),
  }),
});

export const incidentAfterResolveSchema = z.object({
  ...singleIncident,
  metadata: nameAndNamespace.extend({ annotations: stringMap }),
  spec: z.object({
    resourceRef: z.object({ kind: z.string(), name: z.string(), namespace: z.string() }),
    severity: severitySchema,
    signalType: signalTypeSchema,
  }),
  status: z.object({
    state: incidentStateSchema,
    resolution: z.string(),
    resolvedAt: timestamp,
    detectedAt: timestamp,
    remediationAttempts: z.number().int(),
    escalatedAt: timestamp.optional(),
  }),
});

export const incidentAfterSnoozeSchema = z.object({
  ...singleIncident,
  metadata: nameAndNamespace,
  status: z.object({
    state: incidentStateSchema,
    snoozed: z.boolean(),
    snoozedBy: z.string(),
    snoozedAt: timestamp,
    snoozeUntil: timestamp,
    snoozeReason: z.string(),
  }),
});

export const incidentAfterAcknowledgeSchema = z.object({
  ...singleIncident,
  metadata: nameAndNamespace,
  status: z.object({
    state: incidentStateSchema,
    acknowledged: z.boolean(),
    acknowledgedBy: z.string(),
    acknowledgedAt: timestamp,
    message: z.string(),
  }),
});

export const timelineSchema = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal('IncidentTimeline'),
  metadata: nameAndNamespace.extend({ eventCount: z.number().int() }),
  events: z.array(
    z.object({
      timestamp,
      type: z.enum(TIMELINE_TYPES),
      source: z.string(),
      message: z.string(),
      severity: severitySchema.optional(),
      details: z.record(z.unknown()).optional(),
    }),
  ),
});

export const insightListSchema = listSchema(
  'AIInsightList',
  z.object({
    name: z.string(),
    namespace: z.string(),
    issueRef: z.string().describe("the incident's name"),
    provider: z.string(),
    model: z.string(),
    analysis: z.string(),
    confidence: z.number().min(0).max(1),
    recommendations: z.array(z.string()),
    suggestedActions: z.array(
      z.object({ name: z.string(), action: z.string(), description: z.string(), params: z.record(z.unknown()) }),
    ),
    logAnalysis: z.string(),
    gitOpsContext: z.string(),
    cascadeAnalysis: z.string(),
    blastRadiusPrediction: z.string(),
    evidence: evidenceViewSchema.optional().describe('what the analysis collected before it concluded'),
    generatedAt: timestamp,
    creationTimestamp: timestamp,
  }),
);
