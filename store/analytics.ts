import type { PipelineStage } from 'mongoose';
import {
  bucketPlan,
  meanOf,
  SEVERITY_ORDER,
  trend,
  type Granularity,
  type MttrSeries,
  type MttrStats,
} from '../domain/mttr';
import type { ReferenceFigures } from '../domain/analytics';
import { ApprovalModel, IncidentModel, RemediationPlanModel } from './models';

/**
 * Analytics over the incident collections, computed by MongoDB aggregation pipelines: counts,
 * sums and order statistics come back, never the incidents themselves (issue 12 §2). Means are
 * sums over counts. Medians and percentiles are exact: the durations are sorted in the
 * pipeline and only the values at the needed ranks are returned — the median is the middle
 * value (the mean of the two middle ones for an even count), p95/p99 the nearest rank
 * ceil(p·n/100), always an observed value, never interpolated.
 */

/** What every figure can be narrowed to. */
export interface IncidentScope {
  severity?: string;
  namespace?: string;
}

const scopeMatch = (scope: IncidentScope) => ({
  ...(scope.severity && { severity: scope.severity }),
  ...(scope.namespace && { namespace: scope.namespace }),
});

/** Milliseconds from `from` to `to` (two date fields), never negative: clock skew between sources is not a repair time. */
export const elapsedMs = (from: string, to: string) => ({
  $max: [0, { $subtract: [{ $toLong: to }, { $toLong: from }] }],
});

const TTR = elapsedMs('$detectedAt', '$resolvedAt');

/** The bucket an incident was detected in (0 = the plan's first). */
const bucketIndex = (plan: { first: number; step: number }) => ({
  $floor: { $divide: [{ $subtract: [{ $toLong: '$detectedAt' }, plan.first] }, plan.step] },
});

/** Counts per bucket and severity of the incidents a pipeline holds. */
const countsByBucket = (plan: { first: number; step: number }) => ({
  $group: { _id: { b: bucketIndex(plan), s: '$severity' }, n: { $sum: 1 } },
});

/** The value at 0-based `index` of the sorted array `$vs`. */
const at = (index: object) => ({ $arrayElemAt: ['$vs', index] });
const N = { $size: '$vs' };
/** ceil(p·n/100) − 1 in integers (no floating-point rounding at exact ranks). */
const nearestRankIndex = (p: number) => ({
  $subtract: [{ $floor: { $divide: [{ $add: [{ $multiply: [p, N] }, 99] }, 100] } }, 1],
});

/** Stages that turn durations `v` (one per document) into order statistics per `by`. */
const orderStatistics = (by: string | null): PipelineStage.FacetPipelineStage[] => [
  { $sort: { v: 1 } },
  { $group: { _id: by, vs: { $push: '$v' } } },
  {
    $project: {
      lo: at({ $floor: { $divide: [{ $subtract: [N, 1] }, 2] } }),
      hi: at({ $floor: { $divide: [N, 2] } }),
      p95: at(nearestRankIndex(95)),
      p99: at(nearestRankIndex(99)),
    },
  },
];

interface Ranked {
  _id: string | null;
  lo: number;
  hi: number;
  p95: number;
  p99: number;
}

interface SeriesFacets {
  detected: Array<{ _id: { b: number; s: string }; n: number }>;
  resolved: Array<{ _id: { b: number; s: string; late: boolean }; n: number; sum: number }>;
  acked: Array<{ n: number; sum: number }>;
  overallRanks: Ranked[];
  severityRanks: Ranked[];
}

function statsOf(n: number, sum: number, ranked: Ranked | undefined) {
  if (n === 0 || !ranked) return { mttrMs: null, medianMs: null, p95Ms: null, p99Ms: null };
  return {
    mttrMs: meanOf(sum, n),
    medianMs: Math.round((ranked.lo + ranked.hi) / 2),
    p95Ms: ranked.p95,
    p99Ms: ranked.p99,
  };
}

/**
 * MTTR of the incidents detected in [now - period, now) (narrowed by `scope`), overall, per
 * severity, per bucket and as a trend (later half vs earlier half). Resolved means resolved by
 * `now`; an incident resolved later counts as open. One pass over the incidents ($facet).
 */
export async function mttrSeries(
  scope: IncidentScope,
  opts: { now: Date; periodMs: number; granularity?: Granularity },
): Promise<MttrSeries> {
  const plan = bucketPlan(opts);
  const now = opts.now;
  const mid = plan.from + (plan.to - plan.from) / 2;
  // A missing or null resolvedAt never matches $lte.
  const resolved = { $match: { resolvedAt: { $lte: now } } };
  const durations = { $project: { _id: 0, s: '$severity', v: TTR } };
  const [facets] = await IncidentModel.aggregate<SeriesFacets>([
    { $match: { ...scopeMatch(scope), detectedAt: { $gte: new Date(plan.from), $lt: new Date(plan.to) } } },
    {
      $facet: {
        detected: [countsByBucket(plan)],
        resolved: [
          resolved,
          {
            $group: {
              _id: {
                b: bucketIndex(plan),
                s: '$severity',
                late: { $gte: [{ $toLong: '$detectedAt' }, mid] },
              },
              n: { $sum: 1 },
              sum: { $sum: TTR },
            },
          },
        ],
        acked: [
          { $match: { acknowledgedAt: { $lte: now } } },
          { $group: { _id: null, n: { $sum: 1 }, sum: { $sum: elapsedMs('$detectedAt', '$acknowledgedAt') } } },
        ],
        overallRanks: [resolved, durations, ...orderStatistics(null)],
        severityRanks: [resolved, durations, ...orderStatistics('$s')],
      },
    },
  ]);
  const { detected, resolved: resolvedRows, acked, overallRanks, severityRanks } = facets!;

  const buckets = Array.from({ length: plan.count }, (_, i) => ({
    start: new Date(plan.first + i * plan.step),
    end: new Date(plan.first + (i + 1) * plan.step),
    detected: 0,
    count: 0,
    sum: 0,
  }));
  const severities = new Map<string, { detected: number; n: number; sum: number }>();
  const severity = (s: string) => severities.get(s) ?? severities.set(s, { detected: 0, n: 0, sum: 0 }).get(s)!;
  const halves = { earlier: { n: 0, sum: 0 }, later: { n: 0, sum: 0 } };
  for (const row of detected) {
    buckets[row._id.b]!.detected += row.n;
    severity(row._id.s).detected += row.n;
  }
  for (const row of resolvedRows) {
    const b = buckets[row._id.b]!;
    b.count += row.n;
    b.sum += row.sum;
    const s = severity(row._id.s);
    s.n += row.n;
    s.sum += row.sum;
    const half = row._id.late ? halves.later : halves.earlier;
    half.n += row.n;
    half.sum += row.sum;
  }
  const total = [...severities.values()].reduce(
    (t, s) => ({ detected: t.detected + s.detected, n: t.n + s.n, sum: t.sum + s.sum }),
    { detected: 0, n: 0, sum: 0 },
  );

  const rank = (s: string) => (SEVERITY_ORDER.includes(s) ? SEVERITY_ORDER.indexOf(s) : SEVERITY_ORDER.length);
  const bySeverity: Record<string, MttrStats> = {};
  for (const [s, t] of [...severities].sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b)))
    bySeverity[s] = {
      detected: t.detected,
      count: t.n,
      ...statsOf(
        t.n,
        t.sum,
        severityRanks.find((r) => r._id === s),
      ),
    };

  return {
    from: new Date(plan.from),
    to: new Date(plan.to),
    periodMs: opts.periodMs,
    granularity: plan.granularity,
    overall: {
      detected: total.detected,
      count: total.n,
      ...statsOf(total.n, total.sum, overallRanks[0]),
      open: total.detected - total.n,
      acknowledged: acked[0]?.n ?? 0,
      mttaMs: meanOf(acked[0]?.sum ?? 0, acked[0]?.n ?? 0),
    },
    bySeverity,
    trend: trend(meanOf(halves.earlier.sum, halves.earlier.n), meanOf(halves.later.sum, halves.later.n)),
    buckets: buckets.map(({ sum, ...b }) => ({ ...b, mttrMs: meanOf(sum, b.count) })),
  };
}

type Sum = Array<{ n: number; sum: number }>;
const sumOf = (value: object) => ({ $group: { _id: null, n: { $sum: 1 }, sum: { $sum: value } } });
const meanOfRows = (rows: Sum) => meanOf(rows[0]?.sum ?? 0, rows[0]?.n ?? 0);

/**
 * What the MTTR endpoint adds to the series, for the incidents detected in [from, to): the
 * earlier windows' MTTR (previous period, baseline) and where the time went, by phase —
 * detection (signal start → detected), analysis (→ insight), approval (requested → decided,
 * approved or rejected) and remediation (plan start → completed). One pass over the incidents;
 * approvals and plans are joined to their incident by its unique name (an index lookup each,
 * bounded below by `from`: neither is older than its incident).
 */
export async function referenceFigures(
  scope: IncidentScope,
  window: { from: Date; to: Date; periodMs: number; baselineMs: number },
): Promise<ReferenceFigures> {
  const { from, to } = window;
  const earlier = (ms: number) => [
    { $match: { detectedAt: { $gte: new Date(from.getTime() - ms), $lt: from }, resolvedAt: { $lte: from } } },
    sumOf(TTR),
  ];
  const inWindow = { detectedAt: { $gte: from, $lt: to } };
  const ofIncidentInWindow = (ref: string, since: string, match: Record<string, unknown>): PipelineStage[] => [
    { $match: { ...match, [since]: { $gte: from }, ...(scope.namespace && { namespace: scope.namespace }) } },
    { $lookup: { from: 'incidents', localField: ref, foreignField: 'name', as: 'i' } },
    { $unwind: '$i' },
    { $match: { 'i.detectedAt': { $gte: from, $lt: to }, ...(scope.severity && { 'i.severity': scope.severity }) } },
  ];
  const reach = Math.max(window.periodMs, window.baselineMs);
  const [[incidents], approval, remediation] = await Promise.all([
    IncidentModel.aggregate<{ previous: Sum; baseline: Sum; detection: Sum; analysis: Sum }>([
      { $match: { ...scopeMatch(scope), detectedAt: { $gte: new Date(from.getTime() - reach), $lt: to } } },
      {
        $facet: {
          previous: earlier(window.periodMs),
          baseline: earlier(window.baselineMs),
          detection: [
            { $match: { ...inWindow, signalStartedAt: { $gte: new Date(0) } } },
            sumOf(elapsedMs('$signalStartedAt', '$detectedAt')),
          ],
          analysis: [
            { $match: { ...inWindow, analyzedAt: { $gte: new Date(0) } } },
            sumOf(elapsedMs('$detectedAt', '$analyzedAt')),
          ],
        },
      },
    ]),
    ApprovalModel.aggregate<{ n: number; sum: number }>([
      ...ofIncidentInWindow('incident', 'requestedAt', { status: { $in: ['approved', 'rejected'] } }),
      sumOf(elapsedMs('$requestedAt', '$decidedAt')),
    ]),
    RemediationPlanModel.aggregate<{ n: number; sum: number }>([
      ...ofIncidentInWindow('issueRef', 'creationTimestamp', { state: 'Completed' }),
      sumOf(elapsedMs('$startedAt', '$completedAt')),
    ]),
  ]);
  return {
    previousMs: meanOfRows(incidents!.previous),
    baselineMs: meanOfRows(incidents!.baseline),
    phases: {
      detection: meanOfRows(incidents!.detection),
      analysis: meanOfRows(incidents!.analysis),
      approval: meanOfRows(approval),
      remediation: meanOfRows(remediation),
    },
  };
}

/** Incidents detected in the plan's window, per bucket and severity. */
export async function detectedCounts(
  scope: IncidentScope,
  plan: { from: number; to: number; first: number; step: number },
): Promise<Array<{ bucket: number; severity: string; count: number }>> {
  const rows = await IncidentModel.aggregate<{ _id: { b: number; s: string }; n: number }>([
    { $match: { ...scopeMatch(scope), detectedAt: { $gte: new Date(plan.from), $lt: new Date(plan.to) } } },
    countsByBucket(plan),
  ]);
  return rows.map((r) => ({ bucket: r._id.b, severity: r._id.s, count: r.n }));
}
