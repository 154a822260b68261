import { Schema, model } from 'mongoose';
import { INCIDENT_STATES } from '../../domain/incident';

const correlatedSignalSchema = new Schema(
  {
    signalType: String,
    severity: String,
    description: String,
    source: String,
    labels: { type: Schema.Types.Mixed, default: {} },
    at: Date,
  },
  { _id: false },
);

/**
 * One incident. Created by ingestion in state Detected; every later change is written by the
 * incident workflow's activities (DESIGN §2), so the workflow is the only writer after birth.
 */
const incidentSchema = new Schema(
  {
    name: { type: String, required: true, unique: true },
    namespace: { type: String, required: true },
    cluster: { type: String, required: true },
    resource: { type: String, required: true },
    resourceKey: { type: String, required: true },
    signalType: { type: String, required: true },
    severity: { type: String, required: true },
    /** `source` when the signal named it, `risk` when it was derived from the risk score. */
    severitySource: { type: String, required: true },
    description: { type: String, default: '' },
    labels: { type: Schema.Types.Mixed, default: {} },
    detectionSource: { type: String, required: true },
    correlationId: { type: String, required: true },
    runbook: { type: String, default: '' },
    escalationPolicy: { type: String, default: 'default' },
    state: { type: String, required: true, enum: INCIDENT_STATES },
    riskScore: { type: Number, required: true },
    /** The newest CORRELATED_SIGNALS_KEPT only; the count and the timeline hold all of them. */
    correlatedSignals: { type: [correlatedSignalSchema], default: [] },
    correlatedSignalCount: { type: Number, default: 0 },
    lastSignalKey: { type: String },
    analysisResult: {
      rootCause: { type: String, default: '' },
      recommendation: { type: String, default: '' },
      confidence: { type: Number, default: 0 },
      relatedEvents: { type: [String], default: [] },
    },
    insight: { type: String, default: '' },
    analyzedAt: Date,
    acknowledged: { type: Boolean, default: false },
    acknowledgedBy: String,
    acknowledgedAt: Date,
    acknowledgeMessage: String,
    snoozed: { type: Boolean, default: false },
    snoozedBy: String,
    snoozedAt: Date,
    snoozeUntil: Date,
    snoozeReason: String,
    assignedTo: { type: String, default: '' },
    signalStartedAt: Date,
    detectedAt: { type: Date, required: true },
    createdAt: { type: Date, required: true },
    lastUpdated: { type: Date, required: true },
    escalatedAt: Date,
    remediationAttempts: { type: Number, default: 0 },
    resolvedAt: Date,
    resolution: String,
    resolvedBy: String,
    annotations: { type: Schema.Types.Mixed, default: {} },
    postmortem: { type: String, default: '' },
  },
  { versionKey: false, minimize: false },
);
// List queries: newest first, optionally filtered (DESIGN §4); the name breaks ties.
incidentSchema.index({ detectedAt: -1, name: -1 });
incidentSchema.index({ namespace: 1, detectedAt: -1, name: -1 });
incidentSchema.index({ state: 1, detectedAt: -1, name: -1 });
incidentSchema.index({ severity: 1, detectedAt: -1, name: -1 });
incidentSchema.index({ resource: 1, detectedAt: -1, name: -1 });
// A postmortem's trending count: the resource's incidents in the window before detection.
incidentSchema.index({ resourceKey: 1, detectedAt: -1 });

export const IncidentModel = model('Incident', incidentSchema, 'incidents');

/** One open incident per resource key; the unique `_id` folds concurrent duplicate signals. */
export const DedupEntryModel = model(
  'DedupEntry',
  new Schema(
    {
      _id: { type: String, required: true },
      incident: { type: String, required: true },
      createdAt: { type: Date, required: true },
    },
    { versionKey: false },
  ),
  'dedup_entries',
);

/**
 * Signals accepted for an open incident and not yet recorded on it: a duplicate alert costs one
 * insert here (durable before the sender's 202). The incident workflow drains them in order
 * into its timeline and count, told by a coalesced signal (operations/incident-handover.ts);
 * `_id` (an ObjectId) orders them.
 */
const signalInboxSchema = new Schema(
  {
    incident: { type: String, required: true },
    signal: { type: correlatedSignalSchema, required: true },
  },
  { versionKey: false, minimize: false },
);
signalInboxSchema.index({ incident: 1, _id: 1 });
export const SignalInboxModel = model('SignalInbox', signalInboxSchema, 'signal_inbox');

/** Timeline events, one document each; `key` makes activity retries write an event once. */
const timelineEventSchema = new Schema(
  {
    incident: { type: String, required: true },
    key: { type: String, required: true, unique: true },
    timestamp: { type: Date, required: true },
    type: { type: String, required: true },
    source: { type: String, required: true },
    message: { type: String, default: '' },
    severity: String,
    details: Schema.Types.Mixed,
  },
  { versionKey: false, minimize: false },
);
timelineEventSchema.index({ incident: 1, timestamp: 1, _id: 1 });
export const TimelineEventModel = model('TimelineEvent', timelineEventSchema, 'timeline_events');
