import { z } from 'zod';
import {
  ANALYTICS_PERIODS,
  BASELINE_PERIOD,
  mttrReport,
  PHASE_DESCRIPTIONS,
  TREND_GROUPS,
  trendSeries,
} from '../../domain/analytics';
import { complianceReport } from '../../domain/compliance';
import { namespaceSchema } from '../../contracts/incidents';
import { bucketPlan, GRANULARITIES, parsePeriod, PeriodError } from '../../domain/mttr';
import { API_VERSION } from '../../domain/envelope';
import { timestampQuery } from '../../contracts/envelope';
import { DEFAULT_SLA_TARGETS, type SlaTargets } from '../../domain/sla';
import { SEVERITIES } from '../../domain/vocabulary';
import { severitySchema } from '../../contracts/vocabulary';
import { detectedCounts, mttrSeries, referenceFigures } from '../../store/analytics';
import { complianceFigures } from '../../store/compliance';
import { badRequest } from '../errors';
import { route } from '../route';

const DAY_MS = 24 * 3_600_000;
const TRENDS_DEFAULT_MS = 30 * DAY_MS;
const COMPLIANCE_DEFAULT_MS = 7 * DAY_MS;

/** A window [start, end): end defaults to now, start to `defaultMs` before end. */
const windowQuery = z.object({ start: timestampQuery.optional(), end: timestampQuery.optional() });
function windowOf(q: z.infer<typeof windowQuery>, defaultMs: number): { start: Date; end: Date } {
  const end = q.end ?? new Date();
  const start = q.start ?? new Date(end.getTime() - defaultMs);
  if (start >= end) throw badRequest('start: must be before end');
  return { start, end };
}

/** Go duration text, or null where there is nothing to measure (never a 0 presented as data). */
const durationOrNull = z.string().nullable();

const mttrSchema = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal('AnalyticsMTTR'),
  metadata: z.object({
    period: z.enum(ANALYTICS_PERIODS),
    from: z.string().datetime(),
    to: z.string().datetime(),
    generatedAt: z.string().datetime(),
    granularity: z.enum(GRANULARITIES),
    severity: severitySchema.optional(),
    namespace: z.string().optional(),
  }),
  mttr: z.object({
    overall: z.object({
      mean: durationOrNull,
      median: durationOrNull,
      p95: durationOrNull.describe('nearest rank'),
      p99: durationOrNull.describe('nearest rank'),
      count: z.number().int().describe('resolved incidents: the sample'),
      detected: z.number().int(),
    }),
    bySeverity: z.record(z.object({ mean: durationOrNull, median: durationOrNull, count: z.number().int() })),
    byPhase: z.object(
      Object.fromEntries(
        Object.keys(PHASE_DESCRIPTIONS).map((p) => [p, z.object({ mean: durationOrNull, description: z.string() })]),
      ) as Record<
        keyof typeof PHASE_DESCRIPTIONS,
        z.ZodObject<{ mean: typeof durationOrNull; description: z.ZodString }>
      >,
    ),
    history: z
      .array(z.object({ date: z.string().datetime(), mttr: durationOrNull, incidentCount: z.number().int() }))
      .describe('every bucket, oldest first; incidentCount = incidents detected in it'),
    improvement: z.object({
      vsPrevPeriod: z
        .string()
        .nullable()
        .describe('+n% = MTTR that much shorter (better); null without data on a side'),
      vsBaseline: z.string().nullable(),
      baselinePeriod: z.string(),
    }),
  }),
});

const trendsSchema = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal('AnalyticsTrends'),
  metadata: z.object({ from: z.string().datetime(), to: z.string().datetime(), groupBy: z.enum(TREND_GROUPS) }),
  trends: z.array(
    z.object({
      date: z.string().datetime(),
      total: z.number().int(),
      bySeverity: z.object(
        Object.fromEntries(SEVERITIES.map((s) => [s, z.number().int()])) as Record<string, z.ZodNumber>,
      ),
    }),
  ),
});

const counts = z.record(z.number().int());
const complianceSchema = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal('ComplianceReport'),
  metadata: z.object({ generatedAt: z.string().datetime(), namespace: z.string().optional() }),
  spec: z.object({
    Period: z.object({ Start: z.string().datetime(), End: z.string().datetime() }),
    IncidentMetrics: z.object({
      TotalIncidents: z.number().int(),
      BySeverity: counts,
      ByState: counts,
      MTTD: z.number().int().nullable().describe('mean, integer nanoseconds (Go time.Duration); null: no data'),
      MTTR: z.number().int().nullable().describe('mean, integer nanoseconds (Go time.Duration); null: no data'),
      MeanRemediationAttempts: z.number().nullable(),
    }),
    RemediationMetrics: z.object({
      TotalRemediations: z.number().int(),
      SuccessRate: z.number().nullable().describe('Completed / finished plans, a fraction'),
      AutoRemediatedCount: z.number().int(),
      AgenticCount: z.number().int(),
      ByActionType: counts,
      ByState: counts,
    }),
    SLAMetrics: z.object({
      CompliancePercentage: z.number().nullable(),
      ResponseSLAViolations: z.number().int(),
      ResolutionSLAViolations: z.number().int(),
      AverageResponseTime: durationOrNull,
      AverageResolutionTime: durationOrNull,
      Targets: z.record(z.object({ Respond: z.string(), Resolve: z.string() })),
    }),
    ApprovalMetrics: z.object({
      TotalRequests: z.number().int(),
      AutoApproved: z.number().int(),
      ManualApproved: z.number().int(),
      Rejected: z.number().int(),
      Expired: z.number().int(),
      Pending: z.number().int(),
      AverageDecisionTime: durationOrNull,
    }),
    AuditSummary: z.object({ TotalEvents: z.number().int(), ByAction: counts, BySeverity: counts }),
  }),
});

/** A period or granularity that cannot be served (too many buckets) is the caller's to fix. */
async function orBadRequest<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof PeriodError) throw badRequest(err.message);
    throw err;
  }
}

/** MTTR, trends and the compliance report (DESIGN §4, §9): figures from aggregation pipelines. */
export function analyticsRoutes(sla: SlaTargets = DEFAULT_SLA_TARGETS) {
  return [
    route({
      method: 'get',
      path: '/analytics/mttr',
      summary: 'Mean time to resolve: overall, by severity, by phase, per bucket, and against earlier periods',
      tag: 'Analytics',
      role: 'viewer',
      query: z.object({
        period: z.enum(ANALYTICS_PERIODS).default('30d'),
        severity: severitySchema.optional(),
        namespace: namespaceSchema.optional(),
        granularity: z.enum(GRANULARITIES).default('daily'),
      }),
      responses: { 200: { description: 'MTTR analytics', schema: mttrSchema } },
      handler: async ({ query }) =>
        orBadRequest(async () => {
          const now = new Date();
          const periodMs = parsePeriod(query.period);
          const scope = { severity: query.severity, namespace: query.namespace };
          const from = new Date(now.getTime() - periodMs);
          const [series, reference] = await Promise.all([
            mttrSeries(scope, { now, periodMs, granularity: query.granularity }),
            referenceFigures(scope, { from, to: now, periodMs, baselineMs: parsePeriod(BASELINE_PERIOD) }),
          ]);
          return {
            body: mttrReport(series, reference, {
              period: query.period,
              generatedAt: now,
              severity: query.severity,
              namespace: query.namespace,
            }),
          };
        }),
    }),
    route({
      method: 'get',
      path: '/analytics/trends',
      summary: 'Incidents detected per day or week, by severity; every bucket present',
      tag: 'Analytics',
      role: 'viewer',
      query: windowQuery.extend({ groupBy: z.enum(TREND_GROUPS).default('day') }),
      responses: { 200: { description: 'trends', schema: trendsSchema } },
      handler: async ({ query }) =>
        orBadRequest(async () => {
          const { start, end } = windowOf(query, TRENDS_DEFAULT_MS);
          const plan = bucketPlan({
            now: end,
            periodMs: end.getTime() - start.getTime(),
            granularity: query.groupBy === 'week' ? 'weekly' : 'daily',
          });
          return {
            body: {
              apiVersion: API_VERSION,
              kind: 'AnalyticsTrends',
              metadata: { from: start.toISOString(), to: end.toISOString(), groupBy: query.groupBy },
              trends: trendSeries(plan, await detectedCounts({}, plan)),
            },
          };
        }),
    }),
    route({
      method: 'get',
      path: '/analytics/compliance',
      summary:
        'The compliance report: incidents, remediation, SLAs, approvals and audit over a window (default 7 days)',
      tag: 'Analytics',
      role: 'viewer',
      query: windowQuery.extend({ namespace: namespaceSchema.optional() }),
      responses: { 200: { description: 'compliance report', schema: complianceSchema } },
      handler: async ({ query }) => {
        const { start, end } = windowOf(query, COMPLIANCE_DEFAULT_MS);
        const figures = await complianceFigures({ start, end, namespace: query.namespace }, sla);
        return {
          body: complianceReport(figures, { start, end, namespace: query.namespace, sla, generatedAt: new Date() }),
        };
      },
    }),
  ];
}
