import { summarizeMttr, type Granularity } from '../../domain/mttr';
import { mttrSeries } from '../../store/analytics';
import { IncidentModel } from '../../store/models';
import { useMongo } from '../harness/mongo';

/**
 * MTTR figures as the store computes them (aggregation pipelines, exact order statistics), on
 * seeded incidents whose answers are worked out by hand in each test. The chat's `mttr_summary`
 * and GET /analytics/mttr both read these.
 */

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;

const at = (iso: string) => new Date(iso);

interface Seed {
  detectedAt: Date;
  resolvedAt?: Date;
  acknowledgedAt?: Date;
  severity: string;
}
/** An incident detected at `iso`, resolved `ttr` ms later (or open). */
const inc = (iso: string, ttr?: number, severity = 'high'): Seed => ({
  detectedAt: at(iso),
  ...(ttr !== undefined && { resolvedAt: new Date(at(iso).getTime() + ttr) }),
  severity,
});

let mongo: Awaited<ReturnType<typeof useMongo>>;
beforeAll(async () => {
  mongo = await useMongo();
});
afterAll(() => mongo?.stop());

let seq = 0;
/** Replaces the stored incidents with `seeds`, then asks the store. */
async function series(seeds: Seed[], opts: { now: Date; periodMs: number; granularity?: Granularity }) {
  await IncidentModel.deleteMany({});
  await IncidentModel.insertMany(
    seeds.map((s) => {
      const name = `INC-20260301-${String(++seq).padStart(4, '0')}`;
      return {
        name,
        namespace: 'prod',
        cluster: 'local',
        resource: `Deployment/app-${seq}`,
        resourceKey: `local/prod/Deployment/app-${seq}`,
        signalType: 'Custom',
        severitySource: 'source',
        detectionSource: 'api',
        correlationId: name,
        state: s.resolvedAt ? 'Resolved' : 'Detected',
        riskScore: 40,
        createdAt: s.detectedAt,
        lastUpdated: s.detectedAt,
        ...s,
      };
    }),
  );
  return mttrSeries({}, opts);
}

describe('mttrSeries (aggregation pipelines)', () => {
  it('buckets oldest first, empty ones included with a null MTTR', async () => {
    const now = at('2026-03-15T00:00:00Z');
    const s = await series([inc('2026-03-10T05:00:00Z', 2 * H), inc('2026-03-10T20:00:00Z', 4 * H)], {
      now,
      periodMs: 7 * D,
    });
    expect(s.granularity).toBe('daily');
    expect(s.from.toISOString()).toBe('2026-03-08T00:00:00.000Z');
    // A period ending on a boundary has exactly 7 buckets, not an 8th for the instant `now`.
    expect(s.buckets.map((b) => b.start.toISOString().slice(0, 10))).toEqual([
      '2026-03-08',
      '2026-03-09',
      '2026-03-10',
      '2026-03-11',
      '2026-03-12',
      '2026-03-13',
      '2026-03-14',
    ]);
    expect(s.buckets.map((b) => b.mttrMs)).toEqual([null, null, 3 * H, null, null, null, null]);
    expect(s.buckets[2]).toMatchObject({ detected: 2, count: 2 });
    expect(s.buckets[3]).toMatchObject({ detected: 0, count: 0, mttrMs: null });
    expect(s.buckets[2]!.end.toISOString()).toBe('2026-03-11T00:00:00.000Z');
  });

  it('has partial first and last buckets when now is mid-bucket', async () => {
    const s = await series([], { now: at('2026-03-15T10:30:00Z'), periodMs: 24 * H });
    expect(s.granularity).toBe('hourly');
    expect(s.buckets).toHaveLength(25);
    expect(s.buckets[0]!.start.toISOString()).toBe('2026-03-14T10:00:00.000Z');
    expect(s.buckets[24]!.start.toISOString()).toBe('2026-03-15T10:00:00.000Z');
    expect(s.buckets.every((b) => b.mttrMs === null && b.count === 0)).toBe(true);
    expect(s.overall).toMatchObject({ detected: 0, count: 0, mttrMs: null, medianMs: null, mttaMs: null });
  });

  it('counts [now - period, now): the start is in, now and earlier are out; a boundary starts the later bucket', async () => {
    const now = at('2026-03-15T12:00:00Z');
    const s = await series(
      [
        inc('2026-03-14T12:00:00Z', 10 * M), // exactly at from: in, first bucket
        inc('2026-03-14T11:59:59.999Z', 20 * M), // just before: out
        inc('2026-03-15T12:00:00Z', 30 * M), // exactly now: out
        inc('2026-03-15T11:59:59.999Z', 0), // just before now, resolved at once: last bucket
        inc('2026-03-14T13:00:00Z', 50 * M), // on a bucket boundary: that bucket, not the one before
      ],
      { now, periodMs: 24 * H },
    );
    expect(s.buckets).toHaveLength(24);
    expect(s.buckets[0]).toMatchObject({ detected: 1, mttrMs: 10 * M });
    expect(s.buckets[1]).toMatchObject({ detected: 1, mttrMs: 50 * M });
    expect(s.buckets[23]).toMatchObject({ detected: 1, count: 1, mttrMs: 0 });
    expect(s.buckets.slice(2, 23).every((b) => b.detected === 0 && b.mttrMs === null)).toBe(true);
    expect(s.overall).toMatchObject({ detected: 3, count: 3, mttrMs: 20 * M });
  });

  it('counts incidents resolved after now as open, and never a negative repair time', async () => {
    const now = at('2026-03-15T12:00:00Z');
    const s = await series(
      [
        inc('2026-03-15T10:00:00Z', 3 * H), // resolved at 13:00, after now
        inc('2026-03-15T10:00:00Z'), // open
        { detectedAt: at('2026-03-15T10:00:00Z'), resolvedAt: at('2026-03-15T09:59:00Z'), severity: 'low' }, // skew
      ],
      { now, periodMs: 24 * H },
    );
    expect(s.overall).toMatchObject({ detected: 3, count: 1, open: 2, mttrMs: 0 });
  });

  it('computes mean, median, p95/p99 (nearest rank), per severity, MTTA and the trend', async () => {
    const now = at('2026-03-31T00:00:00Z');
    const s = await series(
      [
        // earlier half (before 03-16 00:00): slow
        { ...inc('2026-03-02T00:00:00Z', 4 * H, 'critical'), acknowledgedAt: at('2026-03-02T00:10:00Z') },
        inc('2026-03-05T00:00:00Z', 2 * H, 'high'),
        // later half: faster
        { ...inc('2026-03-20T00:00:00Z', 1 * H, 'critical'), acknowledgedAt: at('2026-03-20T00:20:00Z') },
        inc('2026-03-25T00:00:00Z', 1 * H, 'high'),
        inc('2026-03-26T00:00:00Z', undefined, 'medium'),
      ],
      { now, periodMs: 30 * D },
    );
    expect(s.overall).toMatchObject({
      detected: 5,
      count: 4,
      open: 1,
      mttrMs: 2 * H,
      medianMs: 1.5 * H,
      p95Ms: 4 * H,
      p99Ms: 4 * H,
      acknowledged: 2,
      mttaMs: 15 * M,
    });
    expect(Object.keys(s.bySeverity)).toEqual(['critical', 'high', 'medium']);
    expect(s.bySeverity.critical).toMatchObject({ detected: 2, count: 2, mttrMs: 2.5 * H, medianMs: 2.5 * H });
    expect(s.bySeverity.medium).toMatchObject({ detected: 1, count: 0, mttrMs: null });
    expect(s.trend).toEqual({ earlierMs: 3 * H, laterMs: 1 * H, changePct: -67, direction: 'improving' });
  });

  it('refuses a granularity far too fine for the period', async () => {
    await expect(series([], { now: new Date(), periodMs: 180 * D, granularity: 'hourly' })).rejects.toThrow(
      /too long for hourly buckets .*use a coarser granularity/,
    );
  });
});

describe('summarizeMttr over the store', () => {
  const now = at('2026-03-31T00:00:00Z');

  it('states MTTR, spread, severities, trend and the slowest bucket', async () => {
    const s = await series(
      [
        inc('2026-03-02T00:00:00Z', 1 * H + 2 * M + 3 * S, 'critical'),
        inc('2026-03-05T00:00:00Z', 1 * H + 2 * M + 3 * S, 'high'),
        inc('2026-03-20T00:00:00Z', 30 * M, 'high'),
        inc('2026-03-21T00:00:00Z', 1 * H + 34 * M + 6 * S, 'high'),
      ],
      { now, periodMs: 30 * D },
    );
    expect(summarizeMttr(s, { period: '30d', openNow: 3 }).split('\n')).toEqual([
      'MTTR over the last 30d: 1h2m3s across 4 resolved incidents (open now: 3).',
      'Median 1h2m3s, p95 1h34m6s.',
      'By severity: critical 1h2m3s (1), high 1h2m3s (3).',
      'Trend: steady, 1h2m3s in the later half vs 1h2m3s in the earlier half (0%).',
      'Slowest day: 2026-03-21 at 1h34m6s.',
    ]);
  });

  it('says when the halves cannot be compared', async () => {
    const s = await series([inc('2026-03-30T00:00:00Z', 5 * M)], { now, periodMs: 30 * D });
    const text = summarizeMttr(s, { period: '30d', openNow: 0 });
    expect(text).toContain('MTTR over the last 30d: 5m0s across 1 resolved incident (open now: 0).');
    expect(text).toContain('Trend: not enough data');
    expect(text).not.toContain('Slowest');
  });

  it('says plainly when nothing was resolved, or nothing detected', async () => {
    const open = await series([inc('2026-03-30T00:00:00Z')], { now, periodMs: 7 * D });
    expect(summarizeMttr(open, { period: '7d', openNow: 2 })).toBe(
      'No incident detected in the last 7d has been resolved yet: no MTTR to report (detected: 1, open now: 2).',
    );
    const none = await series([], { now, periodMs: 7 * D });
    expect(summarizeMttr(none, { period: '7d', openNow: 0 })).toBe(
      'No incidents were detected in the last 7d: no MTTR to report (open now: 0).',
    );
  });
});
