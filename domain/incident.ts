import { z } from 'zod';
import { dnsLabelSchema } from './kube-names';
import { RESOURCE_KINDS, severitySchema, signalTypeSchema, type Severity, type SignalType } from './vocabulary';

/** Incident states and moves (DESIGN §6). Nothing leaves Resolved. */
export const INCIDENT_STATES = ['Detected', 'Analyzing', 'Remediating', 'Resolved', 'Escalated', 'Failed'] as const;
export type IncidentState = (typeof INCIDENT_STATES)[number];
export const incidentStateSchema = z.enum(INCIDENT_STATES);

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

/** `<Kind>/<name>` with a Kubernetes kind we know. */
export const resourceRefSchema = z
  .string()
  .regex(/^[A-Z][A-Za-z]+\/[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'must look like Deployment/checkout-api')
  .refine((r) => (RESOURCE_KINDS as readonly string[]).includes(r.split('/')[0]), {
    message: `kind must be one of ${RESOURCE_KINDS.join(', ')}`,
  });
export const namespaceSchema = dnsLabelSchema;
/** A registered cluster's name (`local` by default): part of the dedup key. */
export const clusterSchema = dnsLabelSchema;
export const labelsSchema = z.record(z.string().max(317), z.string().max(1024));

/** One detected anomaly: what POST /incidents and the alert mapping both produce. */
export const signalSchema = z
  .object({
    resource: resourceRefSchema,
    namespace: namespaceSchema.default('default'),
    signalType: signalTypeSchema,
    severity: severitySchema.optional(),
    description: z.string().max(4000).default(''),
    cluster: clusterSchema.default('local'),
    labels: labelsSchema.default({}),
    // Required by the store: a blank one is refused here, for every caller (API, alerts, agent).
    detectionSource: z.string().max(200).regex(/\S/, 'must not be blank').trim().default('api'),
    /** When the problem began at its source (Alertmanager's `startsAt`): the start of MTTD. */
    startedAt: z.string().datetime({ offset: true, message: 'must be an RFC 3339 timestamp' }).optional(),
  })
  .strict();
export type Signal = z.output<typeof signalSchema>;
export type SignalInput = z.input<typeof signalSchema>;

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
