import type { PipelineStage } from 'mongoose';
import {
  bucketPlan,
  meanOf,
  medianRanks,
  nearestRank,
  SEVERITY_ORDER,
  trend,
  type Granularity,
  type MttrSeries,
  type MttrStats,
} from '../domain/mttr';
import { IncidentModel } from './models';

/**
 * Analytics over the incident collections, computed by MongoDB aggregation pipelines: counts,
 * sums and order statistics come back, never the incidents themselves (issue 12 §2). Means are
 * sums over counts; medians and percentiles are exact, read as the k-th value of a sorted
 * pipeline ($sort + $skip + $limit).
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

/** The index of the bucket an incident was detected in (0 = the plan's first). */
const bucketOf = (plan: { first: number; step: number }) => ({
  $floor: { $divide: [{ $subtract: [{ $toLong: '$detectedAt' }, plan.first] }, plan.step] },
});

/** The matching documents' `value` at 1-based ascending `rank`. */
async function valueAtRank(match: Record<string, unknown>, value: object, rank: number): Promise<number> {
  const [row] = await IncidentModel.aggregate<{ v: number }>([
    { $match: match },
    { $project: { _id: 0, v: value } },
    { $sort: { v: 1 } },
    { $skip: rank - 1 },
    { $limit: 1 },
  ]);
  return row!.v;
}

/** Mean (given), median, p95 and p99 of the resolved incidents `match` selects. */
async function orderStats(match: Record<string, unknown>, n: number, sum: number) {
  if (n === 0) return { mttrMs: null, medianMs: null, p95Ms: null, p99Ms: null };
  const at = (rank: number) => valueAtRank(match, TTR, rank);
  const [middle, p95Ms, p99Ms] = await Promise.all([
    Promise.all(medianRanks(n).map(at)),
    at(nearestRank(n, 95)),
    at(nearestRank(n, 99)),
  ]);
  return {
    mttrMs: meanOf(sum, n),
    medianMs: Math.round(middle.reduce((a, b) => a + b, 0) / middle.length),
    p95Ms,
    p99Ms,
  };
}

/**
 * MTTR of the incidents detected in [now - period, now) (narrowed by `scope`), overall, per
 * severity, per bucket and as a trend (later half vs earlier half). Resolved means resolved by
 * `now`; an incident resolved later counts as open.
 */
export async function mttrSeries(
  scope: IncidentScope,
  opts: { now: Date; periodMs: number; granularity?: Granularity },
): Promise<MttrSeries> {
  const plan = bucketPlan(opts);
  const now = opts.now;
  const detected = { ...scopeMatch(scope), detectedAt: { $gte: new Date(plan.from), $lt: new Date(plan.to) } };
  // A missing or null resolvedAt never matches $lte.
  const resolved = { ...detected, resolvedAt: { $lte: now } };
  const bucket = bucketOf(plan);
  const mid = plan.from + (plan.to - plan.from) / 2;

  const [detectedRows, resolvedRows, [acked]] = await Promise.all([
    detectedCounts(scope, plan),
    IncidentModel.aggregate<{ _id: { b: number; s: string; late: boolean }; n: number; sum: number }>([
      { $match: resolved },
      {
        $group: {
          _id: { b: bucket, s: '$severity', late: { $gte: [{ $toLong: '$detectedAt' }, mid] } },
          n: { $sum: 1 },
          sum: { $sum: TTR },
        },
      },
    ]),
    IncidentModel.aggregate<{ n: number; sum: number }>([
      { $match: { ...detected, acknowledgedAt: { $lte: now } } },
      { $group: { _id: null, n: { $sum: 1 }, sum: { $sum: elapsedMs('$detectedAt', '$acknowledgedAt') } } },
    ]),
  ]);

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
  for (const row of detectedRows) {
    buckets[row.bucket]!.detected += row.count;
    severity(row.severity).detected += row.count;
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
  const ordered = [...severities].sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b));
  const [overall, ...perSeverity] = await Promise.all([
    orderStats(resolved, total.n, total.sum),
    ...ordered.map(([s, t]) => orderStats({ ...resolved, severity: s }, t.n, t.sum)),
  ]);
  const bySeverity: Record<string, MttrStats> = {};
  ordered.forEach(([s, t], i) => (bySeverity[s] = { detected: t.detected, count: t.n, ...perSeverity[i]! }));

  return {
    from: new Date(plan.from),
    to: new Date(plan.to),
    periodMs: opts.periodMs,
    granularity: plan.granularity,
    overall: {
      detected: total.detected,
      count: total.n,
      ...overall!,
      open: total.detected - total.n,
      acknowledged: acked?.n ?? 0,
      mttaMs: meanOf(acked?.sum ?? 0, acked?.n ?? 0),
    },
    bySeverity,
    trend: trend(meanOf(halves.earlier.sum, halves.earlier.n), meanOf(halves.later.sum, halves.later.n)),
    buckets: buckets.map(({ sum, ...b }) => ({ ...b, mttrMs: meanOf(sum, b.count) })),
  };
}

/** Mean resolution time of the incidents detected in [from, to) and resolved by `to` (null: none). */
export async function meanMttr(scope: IncidentScope, from: Date, to: Date): Promise<number | null> {
  const [row] = await IncidentModel.aggregate<{ n: number; sum: number }>([
    { $match: { ...scopeMatch(scope), detectedAt: { $gte: from, $lt: to }, resolvedAt: { $lte: to } } },
    { $group: { _id: null, n: { $sum: 1 }, sum: { $sum: TTR } } },
  ] satisfies PipelineStage[]);
  return meanOf(row?.sum ?? 0, row?.n ?? 0);
}

export interface PhaseMeans {
  detection: number | null;
  analysis: number | null;
  approval: number | null;
  remediation: number | null;
}

/** Mean of `value` over the documents a pipeline ends with (null: none). */
async function meanOver(pipeline: PipelineStage[], value: object): Promise<number | null> {
  const [row] = await IncidentModel.aggregate<{ n: number; sum: number }>([
    ...pipeline,
    { $group: { _id: null, n: { $sum: 1 }, sum: { $sum: value } } },
  ]);
  return meanOf(row?.sum ?? 0, row?.n ?? 0);
}

/**
 * Where the time of the incidents detected in [from, to) went, each phase over the incidents
 * that went through it: detection (signal start → detected), analysis (→ insight), approval
 * (requested → decided, approved or rejected) and remediation (plan start → completed).
 */
export async function phaseMeans(scope: IncidentScope, from: Date, to: Date): Promise<PhaseMeans> {
  const incidents: PipelineStage[] = [
    { $match: { ...scopeMatch(scope), detectedAt: { $gte: from, $lt: to } } },
    { $project: { _id: 0, name: 1, detectedAt: 1, signalStartedAt: 1 } },
  ];
  const joined = (from: string, foreignField: string, match: Record<string, unknown>): PipelineStage[] => [
    ...incidents,
    { $lookup: { from, localField: 'name', foreignField, as: 'x' } },
    { $unwind: '$x' },
    { $match: match },
  ];
  const [detection, analysis, approval, remediation] = await Promise.all([
    meanOver(
      [...incidents, { $match: { signalStartedAt: { $gte: new Date(0) } } }],
      elapsedMs('$signalStartedAt', '$detectedAt'),
    ),
    meanOver(joined('aiinsights', 'issueRef', {}), elapsedMs('$detectedAt', '$x.generatedAt')),
    meanOver(
      joined('approvals', 'incident', { 'x.status': { $in: ['approved', 'rejected'] } }),
      elapsedMs('$x.requestedAt', '$x.decidedAt'),
    ),
    meanOver(
      joined('remediation_plans', 'issueRef', { 'x.state': 'Completed' }),
      elapsedMs('$x.startedAt', '$x.completedAt'),
    ),
  ]);
  return { detection, analysis, approval, remediation };
}

/** Incidents detected in the plan's window, per bucket and severity. */
export async function detectedCounts(
  scope: IncidentScope,
  plan: { from: number; to: number; first: number; step: number },
): Promise<Array<{ bucket: number; severity: string; count: number }>> {
  const rows = await IncidentModel.aggregate<{ _id: { b: number; s: string }; n: number }>([
    { $match: { ...scopeMatch(scope), detectedAt: { $gte: new Date(plan.from), $lt: new Date(plan.to) } } },
    {
      $group: {
        _id: { b: bucketOf(plan), s: '$severity' },
        n: { $sum: 1 },
      },
    },
  ]);
  return rows.map((r) => ({ bucket: r._id.b, severity: r._id.s, count: r.n }));
}
