import type { Severity, SignalType } from './vocabulary';

/** Incident states and moves (DESIGN §6). Nothing leaves Resolved. */
export const INCIDENT_STATES = ['Detected', 'Analyzing', 'Remediating', 'Resolved', 'Escalated', 'Failed'] as const;
export type IncidentState = (typeof INCIDENT_STATES)[number];

export const TIMELINE_TYPES = [
  'Detection',
  'SignalCorrelated',
  'Analysis',
  'RunbookMatch',
  'RemediationStarted',
  'ActionExecuted',
  'AgenticStep',
  'Verification',
  'RemediationCompleted',
  'RemediationFailed',
  'ApprovalRequired',
  'ApprovalDecided',
  'ApprovalExpired',
  'Escalation',
  'Notification',
  'Acknowledged',
  'Snoozed',
  'Resolved',
  'PostMortemGenerated',
] as const;
export type TimelineType = (typeof TIMELINE_TYPES)[number];

/** `detector`, `alertmanager`, `ai-engine`, … or `user:<name>`. */
export type TimelineSource =
  | 'detector'
  | 'alertmanager'
  | 'api'
  | 'ai-engine'
  | 'remediation-engine'
  | 'approval-engine'
  | 'escalation-engine'
  | 'notifier'
  | `user:${string}`;

export interface TimelineEvent {
  timestamp: Date;
  type: TimelineType;
  source: TimelineSource;
  message: string;
  severity?: Severity;
  details?: Record<string, unknown>;
}

/**
 * One detected anomaly: what POST /incidents, the alert mapping and the cluster watcher all
 * produce (validated by contracts/incidents.ts signalSchema, with its defaults applied).
 */
export interface Signal {
  /** `<Kind>/<name>` with a Kubernetes kind we know. */
  resource: string;
  namespace: string;
  signalType: SignalType;
  severity?: Severity;
  description: string;
  /** A registered cluster's name (`local` by default): part of the dedup key. */
  cluster: string;
  labels: Record<string, string>;
  /** Never blank: the store requires it. */
  detectionSource: string;
  /** When the problem began at its source (Alertmanager's `startsAt`): the start of MTTD. */
  startedAt?: string;
}

/** The limits of a signal's fields (contracts/incidents.ts): longer values are refused, or cut by producers. */
export const SIGNAL_DESCRIPTION_MAX = 4000;
export const SIGNAL_LABEL_KEY_MAX = 317;
export const SIGNAL_LABEL_VALUE_MAX = 1024;

/** Deduplication key: one open incident per `<cluster>/<namespace>/<Kind>/<name>`. */
export function resourceKey(s: Pick<Signal, 'cluster' | 'namespace' | 'resource'>): string {
  return `${s.cluster}/${s.namespace}/${s.resource}`;
}

export function splitResource(resource: string): { kind: string; name: string } {
  const i = resource.indexOf('/');
  return { kind: resource.slice(0, i), name: resource.slice(i + 1) };
}

/**
 * Incidents of one namespace detected this close together are looked at together: the cascade
 * analysis and the postmortem's related incidents.
 */
export const CORRELATION_WINDOW_MS = 10 * 60 * 1000;

export const ACTIVE_STATES: readonly IncidentState[] = ['Detected', 'Analyzing', 'Remediating', 'Escalated', 'Failed'];
export type { Severity, SignalType };
