import type { BucketPlan } from './mttr';
import { SEVERITIES, type Severity } from './vocabulary';

/**
 * What the analytics endpoints add to the MTTR rules of domain/mttr.ts: the periods the API
 * offers, how a change is stated, and the trend buckets (DESIGN §4).
 */

export const ANALYTICS_PERIODS = ['7d', '30d', '90d', '180d'] as const;
export const TREND_GROUPS = ['day', 'week'] as const;

/** MTTR is also compared with the 90 days before the window: a steadier reference than one period. */
export const BASELINE_PERIOD = '90d';

export const PHASE_DESCRIPTIONS = {
  detection: 'From the moment the signal started at its source (e.g. Alertmanager startsAt) to the incident',
  analysis: 'From the incident to its AI insight',
  approval: 'From an approval request to its decision (approved or rejected)',
  remediation: 'From the start of a remediation plan to its verified completion',
} as const;

/**
 * How much shorter MTTR is than `referenceMs`, in percent with one decimal and a sign:
 * `+25.0%` = a quarter shorter (better), `-10.0%` = longer. Null when either side has no
 * resolved incident or the reference is 0 (no ratio to state).
 */
export function improvement(currentMs: number | null, referenceMs: number | null): string | null {
  if (currentMs === null || referenceMs === null || referenceMs === 0) return null;
  const pct = Math.round(((referenceMs - currentMs) / referenceMs) * 1000) / 10 || 0; // never -0
  return `${pct > 0 ? '+' : ''}${pct.toFixed(1)}%`;
}

export interface TrendBucket {
  date: string;
  total: number;
  bySeverity: Record<Severity, number>;
}

/** Every bucket of the plan, oldest first, zero where nothing was detected. */
export function trendSeries(
  plan: Pick<BucketPlan, 'first' | 'step' | 'count'>,
  rows: ReadonlyArray<{ bucket: number; severity: string; count: number }>,
): TrendBucket[] {
  const buckets = Array.from({ length: plan.count }, (_, i) => ({
    date: new Date(plan.first + i * plan.step).toISOString(),
    total: 0,
    bySeverity: Object.fromEntries(SEVERITIES.map((s) => [s, 0])) as Record<Severity, number>,
  }));
  for (const row of rows) {
    const bucket = buckets[row.bucket];
    if (!bucket) continue;
    bucket.total += row.count;
    if ((SEVERITIES as readonly string[]).includes(row.severity))
      bucket.bySeverity[row.severity as Severity] += row.count;
  }
  return buckets;
}
