import { DurationError, formatDuration, parseDuration } from './duration';
import { SEVERITIES, type Severity } from './vocabulary';

/**
 * Service-level targets per severity (the compliance report's SLAMetrics): how soon a person
 * must respond (acknowledge, or resolve) and how soon the incident must be resolved, counted
 * from detection.
 */
export interface SlaTarget {
  respondMs: number;
  resolveMs: number;
}
export type SlaTargets = Record<Severity, SlaTarget>;

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

export const DEFAULT_SLA_TARGETS: SlaTargets = {
  critical: { respondMs: 5 * MINUTE, resolveMs: 1 * HOUR },
  high: { respondMs: 15 * MINUTE, resolveMs: 4 * HOUR },
  medium: { respondMs: 1 * HOUR, resolveMs: 24 * HOUR },
  low: { respondMs: 4 * HOUR, resolveMs: 72 * HOUR },
};

export class SlaError extends Error {
  override name = 'SlaError';
}

/**
 * `FOGHORN_SLA_TARGETS`: `critical=5m/1h,high=15m/4h` (respond/resolve, Go durations); the
 * severities left out keep their defaults. Respond must not exceed resolve.
 */
export function parseSlaTargets(text: string): SlaTargets {
  const targets: SlaTargets = { ...DEFAULT_SLA_TARGETS };
  for (const entry of text
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)) {
    const m = /^([a-z]+)=([^/\s]+)\/([^/\s]+)$/.exec(entry);
    if (!m)
      throw new SlaError(`${JSON.stringify(entry)}: expected <severity>=<respond>/<resolve>, e.g. critical=5m/1h`);
    const [, severity, respond, resolve] = m as unknown as [string, string, string, string];
    if (!(SEVERITIES as readonly string[]).includes(severity))
      throw new SlaError(`${JSON.stringify(entry)}: severity must be one of ${SEVERITIES.join(', ')}`);
    const duration = (text: string) => {
      try {
        const ms = parseDuration(text);
        if (ms > 0) return ms;
      } catch (err) {
        if (!(err instanceof DurationError)) throw err;
      }
      throw new SlaError(
        `${JSON.stringify(entry)}: ${JSON.stringify(text)} is not a positive duration such as 15m or 4h`,
      );
    };
    const target = { respondMs: duration(respond), resolveMs: duration(resolve) };
    if (target.respondMs > target.resolveMs)
      throw new SlaError(`${JSON.stringify(entry)}: the response target must not exceed the resolution target`);
    targets[severity as Severity] = target;
  }
  return targets;
}

/** The targets as Go durations, for the report. */
export function slaTargetsView(targets: SlaTargets) {
  return Object.fromEntries(
    SEVERITIES.map((s) => [
      s,
      { Respond: formatDuration(targets[s].respondMs), Resolve: formatDuration(targets[s].resolveMs) },
    ]),
  ) as Record<Severity, { Respond: string; Resolve: string }>;
}
