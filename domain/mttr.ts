import { DurationError, formatDuration, parseDuration } from './duration';

/**
 * MTTR statistics over a look-back period, shared by the chat agent's `mttr_summary` tool and
 * the analytics API (DESIGN §4: `period`, `granularity`; series oldest first). The store
 * computes them with aggregation pipelines (store/analytics.ts); this module holds the rules:
 * periods, buckets, ranks, trend, and the chat's wording.
 */

export const GRANULARITIES = ['hourly', 'daily', 'weekly'] as const;
export type Granularity = (typeof GRANULARITIES)[number];

export const DEFAULT_PERIOD = '30d';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const WEEK_MS = 7 * DAY_MS;
const STEP_MS: Record<Granularity, number> = { hourly: HOUR_MS, daily: DAY_MS, weekly: WEEK_MS };
const GO_UNITS = new Set(['ns', 'us', '\u00b5s', '\u03bcs', 'ms', 's', 'm', 'h']);
/** 1970-01-01 was a Thursday: ISO weeks (Monday first) start 4 days after the epoch. */
const MONDAY_OFFSET_MS = 4 * DAY_MS;

export const MIN_PERIOD_MS = HOUR_MS;
export const MAX_PERIOD_MS = 366 * DAY_MS;
/** Keeps a fine granularity over a long period (hourly over 180d) from building an unreadable series. */
export const MAX_BUCKETS = 1500;

/** A period or granularity the caller can correct; the message is meant for the user. */
export class PeriodError extends Error {
  override name = 'PeriodError';
}

/**
 * Parses a look-back period: Go duration text (`24h`, `90m`, `1h30m`) extended with days (`d`)
 * and weeks (`w`) — Go stops at hours, but periods are spoken of in days. Components may be
 * mixed (`1w2d`, `1d12h`). Returns milliseconds; between 1h and 366d.
 */
export function parsePeriod(text: string): number {
  const invalid = (why: string) => new PeriodError(`Invalid period ${JSON.stringify(text)}: ${why}`);
  const s = text.trim();
  if (s === '') throw invalid('empty; use e.g. 24h, 7d, 30d or 4w');
  // Each component is a decimal number and a unit; the units themselves are checked below.
  const parts = s.match(/(\d+(?:\.\d*)?|\.\d+)([^\d.]+)/g);
  if (!parts || parts.join('') !== s) throw invalid('expected a duration such as 24h, 7d, 30d or 4w');
  let ms = 0;
  for (const part of parts) {
    const unit = part.replace(/^[\d.]+/, '');
    const value = Number(part.slice(0, part.length - unit.length));
    if (unit === 'd') ms += value * DAY_MS;
    else if (unit === 'w') ms += value * WEEK_MS;
    else if (!GO_UNITS.has(unit)) throw invalid(`unknown unit ${JSON.stringify(unit)}; use m, h, d or w`);
    else {
      try {
        ms += parseDuration(part);
      } catch (err) {
        if (err instanceof DurationError) throw invalid('must be at most 366d');
        throw err;
      }
    }
  }
  if (!(ms >= MIN_PERIOD_MS)) throw invalid('must be at least 1h');
  if (ms > MAX_PERIOD_MS) throw invalid('must be at most 366d');
  return ms;
}

export function parseGranularity(text: string): Granularity {
  if ((GRANULARITIES as readonly string[]).includes(text)) return text as Granularity;
  throw new PeriodError(`Invalid granularity ${JSON.stringify(text)}: use ${GRANULARITIES.join(', ')}`);
}

/** Buckets fine enough to show a trend, coarse enough to stay readable: ≤48h hourly, ≤60d daily, else weekly. */
export function autoGranularity(periodMs: number): Granularity {
  if (periodMs <= 48 * HOUR_MS) return 'hourly';
  if (periodMs <= 60 * DAY_MS) return 'daily';
  return 'weekly';
}

/** Start of the UTC hour, day or ISO week (Monday) holding `t`. */
export function bucketStart(t: number, granularity: Granularity): number {
  const offset = granularity === 'weekly' ? MONDAY_OFFSET_MS : 0;
  const step = STEP_MS[granularity];
  return Math.floor((t - offset) / step) * step + offset;
}

/** Axis and text label of a bucket: `2026-01-05 14:00` hourly, `2026-01-05` otherwise (UTC). */
export function bucketLabel(start: Date, granularity: Granularity): string {
  const iso = start.toISOString();
  return granularity === 'hourly' ? `${iso.slice(0, 10)} ${iso.slice(11, 16)}` : iso.slice(0, 10);
}

export interface MttrBucket {
  start: Date;
  end: Date;
  /** Incidents detected in the bucket (inside the period). */
  detected: number;
  /** Of those, resolved by `now`: the sample behind `mttrMs`. */
  count: number;
  /** Mean detection→resolution time; null when nothing was resolved (never invented). */
  mttrMs: number | null;
}

export interface MttrStats {
  detected: number;
  /** Resolved incidents: the sample behind the figures below. */
  count: number;
  mttrMs: number | null;
  medianMs: number | null;
  p95Ms: number | null;
  p99Ms: number | null;
}

export interface MttrTrend {
  /** MTTR of incidents detected in the earlier and the later half of the period. */
  earlierMs: number | null;
  laterMs: number | null;
  /** later vs earlier in percent; null when either half has no resolved incident. */
  changePct: number | null;
  direction: 'improving' | 'worsening' | 'steady' | null;
}

export interface MttrSeries {
  from: Date;
  to: Date;
  periodMs: number;
  granularity: Granularity;
  overall: MttrStats & {
    /** Detected in the period and not resolved by `now`. */
    open: number;
    acknowledged: number;
    /** Mean detection→acknowledgement time of acknowledged incidents. */
    mttaMs: number | null;
  };
  /** Keyed by severity (critical, high, medium, low first); only severities seen in the period. */
  bySeverity: Record<string, MttrStats>;
  trend: MttrTrend;
  /** Oldest first, empty buckets included; the first and last may be partial. */
  buckets: MttrBucket[];
}

/** Changes within ±10% read as steady: MTTR is noisy with few incidents. */
const STEADY_PCT = 10;
export const SEVERITY_ORDER = ['critical', 'high', 'medium', 'low'];

/** The buckets of [now - period, now): the store counts into them, oldest first. */
export interface BucketPlan {
  from: number;
  to: number;
  /** Start of the first (possibly partial) bucket. */
  first: number;
  step: number;
  count: number;
  granularity: Granularity;
}

/**
 * Half-open, so a period ending on a boundary (24h at 14:00) has exactly period/step buckets,
 * not an extra empty one. Throws PeriodError when the granularity is far too fine.
 */
export function bucketPlan(opts: { now: Date; periodMs: number; granularity?: Granularity }): BucketPlan {
  const granularity = opts.granularity ?? autoGranularity(opts.periodMs);
  const to = opts.now.getTime();
  const from = to - opts.periodMs;
  const step = STEP_MS[granularity];
  const first = bucketStart(from, granularity);
  const count = Math.floor((bucketStart(to - 1, granularity) - first) / step) + 1;
  if (count > MAX_BUCKETS) {
    throw new PeriodError(
      // In days: a window of centuries is outside what Go duration text can express.
      `Period of ${Math.round((opts.periodMs / DAY_MS) * 10) / 10} days is too long for ${granularity} buckets (${count} > ${MAX_BUCKETS}): use a coarser granularity`,
    );
  }
  return { from, to, first, step, count, granularity };
}

export function trend(earlierMs: number | null, laterMs: number | null): MttrTrend {
  if (earlierMs === null || laterMs === null) return { earlierMs, laterMs, changePct: null, direction: null };
  if (earlierMs === 0) {
    const direction = laterMs === 0 ? 'steady' : 'worsening';
    return { earlierMs, laterMs, changePct: null, direction };
  }
  const changePct = Math.round(((laterMs - earlierMs) / earlierMs) * 100) || 0; // never -0
  const direction = Math.abs(changePct) <= STEADY_PCT ? 'steady' : changePct < 0 ? 'improving' : 'worsening';
  return { earlierMs, laterMs, changePct, direction };
}

/** Mean rounded to the millisecond; null for an empty sample (never invented). */
export const meanOf = (sum: number, n: number): number | null => (n === 0 ? null : Math.round(sum / n));

/** Go duration text rounded to whole seconds: sub-second digits of a mean are noise to a reader. */
export function formatMttr(ms: number): string {
  return formatDuration(ms >= 1000 ? Math.round(ms / 1000) * 1000 : Math.round(ms));
}

const UNIT_NAME: Record<Granularity, string> = { hourly: 'hour', daily: 'day', weekly: 'week' };

/** The chat reply: MTTR, spread, per severity, trend and the slowest bucket; plain about missing data. */
export function summarizeMttr(series: MttrSeries, opts: { period: string; openNow: number }): string {
  const { overall } = series;
  const over = `the last ${opts.period}`;
  if (overall.detected === 0)
    return `No incidents were detected in ${over}: no MTTR to report (open now: ${opts.openNow}).`;
  if (overall.mttrMs === null) {
    return (
      `No incident detected in ${over} has been resolved yet: no MTTR to report ` +
      `(detected: ${overall.detected}, open now: ${opts.openNow}).`
    );
  }

  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  const lines = [
    `MTTR over ${over}: ${formatMttr(overall.mttrMs)} across ${plural(overall.count, 'resolved incident')} ` +
      `(open now: ${opts.openNow}).`,
  ];
  // With one incident the median and p95 only repeat the mean.
  if (overall.count > 1) lines.push(`Median ${formatMttr(overall.medianMs!)}, p95 ${formatMttr(overall.p95Ms!)}.`);
  if (overall.mttaMs !== null) {
    lines.push(`MTTA: ${formatMttr(overall.mttaMs)} across ${plural(overall.acknowledged, 'acknowledged incident')}.`);
  }
  const sev = Object.entries(series.bySeverity)
    .filter(([, s]) => s.mttrMs !== null)
    .map(([name, s]) => `${name} ${formatMttr(s.mttrMs!)} (${s.count})`);
  if (sev.length > 1) lines.push(`By severity: ${sev.join(', ')}.`);

  const t = series.trend;
  if (t.direction === null) {
    lines.push('Trend: not enough data (resolved incidents in only one half of the period).');
  } else {
    const change = t.changePct === null ? '' : ` (${t.changePct > 0 ? '+' : ''}${t.changePct}%)`;
    lines.push(
      `Trend: ${t.direction}, ${formatMttr(t.laterMs!)} in the later half vs ${formatMttr(t.earlierMs!)} ` +
        `in the earlier half${change}.`,
    );
  }

  const slowest = series.buckets.reduce<MttrBucket | undefined>(
    (worst, b) => (b.mttrMs !== null && (worst === undefined || b.mttrMs > worst.mttrMs!) ? b : worst),
    undefined,
  );
  const resolvedBuckets = series.buckets.filter((b) => b.mttrMs !== null).length;
  if (slowest && resolvedBuckets > 1) {
    lines.push(
      `Slowest ${UNIT_NAME[series.granularity]}: ${bucketLabel(slowest.start, series.granularity)} ` +
        `at ${formatMttr(slowest.mttrMs!)}.`,
    );
  }
  return lines.join('\n');
}
