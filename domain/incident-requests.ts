import type { IncidentState, SignalType } from './incident';
import type { Role } from './roles';

/**
 * The payloads of the incident workflow's updates, signal and query. They live in domain/ so
 * activities, operations and the API share them without importing workflow code; the message
 * definitions themselves stay in workflows/incident-messages.ts.
 */

/** Who asked, as the audit log records it (the token's user, never a name from the body). */
export interface Actor {
  user: string;
  role: Role;
  sourceIP: string;
  userAgent: string;
}

export interface AcknowledgeRequest {
  acknowledgedBy: string;
  message: string;
  actor: Actor;
}

/** Inbox signals recorded per drain (store/signal-inbox.ts): by the incident workflow and its close. */
export const INBOX_BATCH = 500;

/**
 * How often a new incident's triage, while a model analyses it, records the signals that joined
 * meanwhile: the model may take up to its 75 s budget, and an operator watching a storm should
 * see the duplicates join within seconds, not after the triage.
 */
export const TRIAGE_DRAIN_EVERY_MS = 5_000;

/** The longest snooze (DESIGN §4): checked by the API and the agent, and again by the workflow. */
export const SNOOZE_MAX_MS = 24 * 60 * 60 * 1000;

export interface SnoozeRequest {
  /** Go duration text as given, and its length in ms (validated by the API and again here). */
  duration: string;
  durationMs: number;
  reason: string;
  snoozedBy: string;
  actor: Actor;
}

export interface ResolveRequest {
  resolution: string;
  actor: Actor;
  /** True when the alert source resolved it (Alertmanager), false for a person. */
  atSource: boolean;
  /** True when Foghorn's own remediation fixed it (resolver `system`, not a manual resolution). */
  automatic?: boolean;
}

/** Foghorn itself, as the audit log and the resolver annotation name it. */
export const SYSTEM_ACTOR: Actor = { user: 'system', role: 'system', sourceIP: 'internal', userAgent: 'foghorn' };

export interface CorrelatedSignal {
  signalType: SignalType;
  severity?: string;
  description: string;
  source: string;
  labels: Record<string, string>;
  at: string;
}

/**
 * Tells the incident workflow that signals wait in its inbox (store/signal-inbox.ts): coalesced,
 * at most one per incident per second, so `count` may stand for many. The newest one's type and
 * time are told to a running remediation plan (a new signal fails its verification).
 */
export interface SignalsQueued {
  count: number;
  signalType: SignalType;
  at: string;
}

/** What the workflow knows right now; the query answers with it. */
export interface LiveState {
  state: IncidentState;
  acknowledged: boolean;
  acknowledgedBy?: string;
  acknowledgedAt?: string;
  snoozeUntil?: string;
  resolvedBy?: string;
  resolvedAt?: string;
  correlatedSignals: number;
}

/** Errors the update validators raise; the API maps each type to its HTTP status. */
export const CONFLICT = 'Conflict';
export const INVALID = 'InvalidRequest';
