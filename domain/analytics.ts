import { formatMttr, type BucketPlan, type MttrSeries } from './mttr';
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

/** What the MTTR endpoint adds to the series (store/analytics.ts referenceFigures). */
export interface ReferenceFigures {
  /** Mean MTTR of the window of the same length before this one (null: nothing resolved). */
  previousMs: number | null;
  /** Mean MTTR of the baseline before this window. */
  baselineMs: number | null;
  phases: Record<keyof typeof PHASE_DESCRIPTIONS, number | null>;
}

/** Go duration text, or null where there is nothing to measure (never a 0 presented as data). */
const duration = (ms: number | null) => (ms === null ? null : formatMttr(ms));

/** The `AnalyticsMTTR` resource (spec: Analytics: MTTR). */
export function mttrReport(
  series: MttrSeries,
  reference: ReferenceFigures,
  o: { period: string; generatedAt: Date; severity?: Severity; namespace?: string },
) {
  const severities = o.severity ? [o.severity] : SEVERITIES;
  return {
    apiVersion: 'v1' as const,
    kind: 'AnalyticsMTTR' as const,
    metadata: {
      period: o.period,
      from: series.from.toISOString(),
      to: series.to.toISOString(),
      generatedAt: o.generatedAt.toISOString(),
      granularity: series.granularity,
      ...(o.severity && { severity: o.severity }),
      ...(o.namespace && { namespace: o.namespace }),
    },
    mttr: {
      overall: {
        mean: duration(series.overall.mttrMs),
        median: duration(series.overall.medianMs),
        p95: duration(series.overall.p95Ms),
        p99: duration(series.overall.p99Ms),
        count: series.overall.count,
        detected: series.overall.detected,
      },
      bySeverity: Object.fromEntries(
        severities.map((s) => {
          const stats = series.bySeverity[s];
          const mean = duration(stats?.mttrMs ?? null);
          return [s, { mean, median: duration(stats?.medianMs ?? null), count: stats?.count ?? 0 }];
        }),
      ),
      byPhase: Object.fromEntries(
        (Object.keys(PHASE_DESCRIPTIONS) as Array<keyof typeof PHASE_DESCRIPTIONS>).map((phase) => [
          phase,
          { mean: duration(reference.phases[phase]), description: PHASE_DESCRIPTIONS[phase] },
        ]),
      ),
      history: series.buckets.map((b) => ({
        date: b.start.toISOString(),
        mttr: duration(b.mttrMs),
        incidentCount: b.detected,
      })),
      improvement: {
        vsPrevPeriod: improvement(series.overall.mttrMs, reference.previousMs),
        vsBaseline: improvement(series.overall.mttrMs, reference.baselineMs),
        baselinePeriod: BASELINE_PERIOD,
      },
    },
  };
}
