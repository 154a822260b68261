import type { Severity, SignalType } from './vocabulary';

/**
 * Incident risk score (DESIGN §6): how urgently an incident needs attention, 0–100.
 *
 *   signal weight + 10 per extra correlated signal + severity bonus, capped at 100.
 *
 * Pure and integer-valued so the API, the workflows and the approval engine all agree on it.
 */

// A Record (not a switch) so adding a signal type without a weight is a compile error.
const SIGNAL_WEIGHT: Readonly<Record<SignalType, number>> = {
  OOMKilled: 40,
  HighErrorRate: 30,
  CrashLoopBackOff: 25,
  DeploymentFailing: 25,
  HighLatency: 20,
  PodNotReady: 20,
  HighCPU: 15,
  HighMemory: 15,
  ImagePullBackOff: 10,
  DiskPressure: 10,
  NetworkUnavailable: 10,
  Custom: 10,
};

const SEVERITY_BONUS: Readonly<Record<Severity, number>> = {
  critical: 40,
  high: 25,
  medium: 10,
  low: 0,
};

/** Points added for each signal that joined the incident after the first one. */
export const CORRELATED_SIGNAL_POINTS = 10;
export const MAX_RISK_SCORE = 100;

/** The base weight of a signal type (10 for anything without a dedicated weight). */
export function signalWeight(signalType: SignalType): number {
  return SIGNAL_WEIGHT[signalType] ?? 10;
}

/**
 * Risk score 0–100. `correlatedSignals` counts the signals joined after the first (0 for a
 * fresh incident); negative or fractional counts are treated as their non-negative floor (NaN as 0).
 */
export function riskScore(signalType: SignalType, severity: Severity | undefined, correlatedSignals: number): number {
  const extra = Number.isNaN(correlatedSignals) ? 0 : Math.max(0, Math.floor(correlatedSignals));
  const bonus = severity === undefined ? 0 : (SEVERITY_BONUS[severity] ?? 0);
  return Math.min(MAX_RISK_SCORE, signalWeight(signalType) + CORRELATED_SIGNAL_POINTS * extra + bonus);
}

/** The severity of an incident whose source gave none: ≥80 critical, ≥60 high, ≥30 medium, else low. */
export function severityFromRisk(score: number): Severity {
  if (score >= 80) return 'critical';
  if (score >= 60) return 'high';
  if (score >= 30) return 'medium';
  return 'low';
}
