import type { IncidentState } from '../../domain/incident';
import type { APPROVAL_STATUSES, PLAN_STATES } from '../../domain/remediation';
import { ApprovalModel, IncidentModel, RemediationPlanModel } from '../../store/models';
import { seedAuditChain } from '../fixtures/audit-chain';
import { useApi } from '../harness/api';

/**
 * GET /analytics/mttr, /analytics/trends and /analytics/compliance (issue 12 §2) on seeded
 * incidents, insights, approvals, plans and audit records. Every expected figure is worked out
 * by hand in the comments next to it, never by calling the code under test.
 */

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;

let api: Awaited<ReturnType<typeof useApi>>;
let seq = 0;

interface IncidentSeed {
  namespace: string;
  severity: string;
  detectedAt: Date;
  resolvedAfter?: number;
  acknowledgedAfter?: number;
  signalStartedBefore?: number;
  /** When its insight was written, after detection (what the analysis activity records). */
  analyzedAfter?: number;
  state?: IncidentState;
  remediationAttempts?: number;
  /** Resolved at this absolute time instead (after a window's end). */
  resolvedAt?: Date;
}

/** Stores an incident as ingestion and its workflow leave it; returns its name. */
async function incident(seed: IncidentSeed): Promise<string> {
  const name = `INC-20250101-${String(++seq).padStart(4, '0')}`;
  const at = seed.detectedAt.getTime();
  const resolvedAt =
    seed.resolvedAt ?? (seed.resolvedAfter !== undefined ? new Date(at + seed.resolvedAfter) : undefined);
  await IncidentModel.create({
    name,
    namespace: seed.namespace,
    cluster: 'local',
    resource: `Deployment/app-${seq}`,
    resourceKey: `local/${seed.namespace}/Deployment/app-${seq}`,
    signalType: 'Custom',
    severity: seed.severity,
    severitySource: 'source',
    detectionSource: 'alertmanager',
    correlationId: name,
    state: seed.state ?? (resolvedAt ? 'Resolved' : 'Escalated'),
    riskScore: 50,
    detectedAt: seed.detectedAt,
    createdAt: seed.detectedAt,
    lastUpdated: seed.detectedAt,
    remediationAttempts: seed.remediationAttempts ?? 0,
    ...(seed.signalStartedBefore !== undefined && { signalStartedAt: new Date(at - seed.signalStartedBefore) }),
    ...(seed.analyzedAfter !== undefined && { analyzedAt: new Date(at + seed.analyzedAfter) }),
    ...(seed.acknowledgedAfter !== undefined && {
      acknowledged: true,
      acknowledgedAt: new Date(at + seed.acknowledgedAfter),
    }),
    ...(resolvedAt && { resolvedAt, resolvedBy: 'alice' }),
  });
  return name;
}

async function approval(
  incidentName: string,
  namespace: string,
  status: (typeof APPROVAL_STATUSES)[number],
  requestedAt: Date,
  decidedAfter?: number,
): Promise<void> {
  const name = `APR-20250101-${String(++seq).padStart(4, '0')}`;
  await ApprovalModel.create({
    name,
    key: name,
    namespace,
    incident: incidentName,
    plan: `RP-${name}`,
    status,
    action: 'RestartPod',
    riskScore: 75,
    requiredRole: 'operator',
    requestedAt,
    expiresAt: new Date(requestedAt.getTime() + 30 * M),
    ...(decidedAfter !== undefined && { decidedAt: new Date(requestedAt.getTime() + decidedAfter), decidedBy: 'bob' }),
  });
}

async function plan(seed: {
  incident: string;
  namespace: string;
  state: (typeof PLAN_STATES)[number];
  startedAt: Date;
  completedAfter?: number;
  agentic?: boolean;
  approvalRequired?: boolean;
  actions?: string[];
}): Promise<void> {
  const name = `RP-20250101-${String(++seq).padStart(4, '0')}`;
  await RemediationPlanModel.create({
    name,
    key: `${seed.incident}/attempt/${seq}`,
    namespace: seed.namespace,
    issueRef: seed.incident,
    cluster: 'local',
    attempt: 1,
    strategy: 'runbook',
    strategyKind: 'runbook',
    state: seed.state,
    agenticMode: seed.agentic ?? false,
    actions: (seed.actions ?? []).map((type) => ({ type, params: {} })),
    riskScore: 40,
    approvalRequired: seed.approvalRequired ?? false,
    verifyWindowMs: 60_000,
    startedAt: seed.startedAt,
    creationTimestamp: seed.startedAt,
    ...(seed.completedAfter !== undefined && { completedAt: new Date(seed.startedAt.getTime() + seed.completedAfter) }),
  });
}

beforeAll(async () => {
  api = await useApi();
});
afterAll(() => api?.stop());

describe('GET /analytics/mttr', () => {
  const NOW = Date.now();
  const ago = (ms: number) => new Date(NOW - ms);
  const day = (d: Date) => d.toISOString().slice(0, 10);

  beforeAll(async () => {
    const i1 = await incident({
      namespace: 'an',
      severity: 'critical',
      detectedAt: ago(6 * D),
      resolvedAfter: 10 * M,
      signalStartedBefore: 2 * M,
      analyzedAfter: 1 * M,
    });
    await plan({
      incident: i1,
      namespace: 'an',
      state: 'Completed',
      startedAt: new Date(ago(6 * D).getTime() + 3 * M),
      completedAfter: 5 * M,
    });
    await incident({
      namespace: 'an',
      severity: 'critical',
      detectedAt: ago(5 * D),
      resolvedAfter: 30 * M,
      signalStartedBefore: 4 * M,
      analyzedAfter: 3 * M,
    });
    const i3 = await incident({ namespace: 'an', severity: 'high', detectedAt: ago(4 * D), resolvedAfter: 1 * H });
    await approval(i3, 'an', 'approved', new Date(ago(4 * D).getTime() + 5 * M), 10 * M);
    const i4 = await incident({ namespace: 'an', severity: 'high', detectedAt: ago(3 * D), resolvedAfter: 2 * H });
    await approval(i4, 'an', 'rejected', new Date(ago(3 * D).getTime() + 10 * M), 30 * M);
    await approval(i4, 'an', 'expired', new Date(ago(3 * D).getTime() + 50 * M), 30 * M); // not a decision
    await incident({ namespace: 'an', severity: 'medium', detectedAt: ago(2 * D) }); // open
    await incident({ namespace: 'an', severity: 'low', detectedAt: ago(1 * D), resolvedAfter: 20 * M });
    // The previous 7 days, and the baseline (the 90 days before the window).
    await incident({ namespace: 'an', severity: 'high', detectedAt: ago(8 * D), resolvedAfter: 40 * M });
    await incident({ namespace: 'an', severity: 'high', detectedAt: ago(20 * D), resolvedAfter: 1 * H });
    // Another namespace, same days: filtered out.
    await incident({ namespace: 'elsewhere', severity: 'critical', detectedAt: ago(2 * D), resolvedAfter: 9 * H });
  });

  it('overall, by severity, by phase and against earlier periods, computed by hand', async () => {
    const res = await api.call('GET', '/analytics/mttr?period=7d&namespace=an', { token: api.tokens.viewer });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      apiVersion: 'v1',
      kind: 'AnalyticsMTTR',
      metadata: { period: '7d', granularity: 'daily', namespace: 'an' },
    });
    expect(Date.parse(res.body.metadata.to) - Date.parse(res.body.metadata.from)).toBe(7 * D);
    // Resolved in the window: 10m, 30m, 1h, 2h, 20m → sorted 10m 20m 30m 60m 120m (n = 5).
    // mean 240m/5 = 48m; median the 3rd = 30m; p95 rank ceil(4.75) = 5 → 2h; p99 rank 5 → 2h.
    expect(res.body.mttr.overall).toEqual({
      mean: '48m0s',
      median: '30m0s',
      p95: '2h0m0s',
      p99: '2h0m0s',
      count: 5,
      detected: 6,
    });
    expect(res.body.mttr.bySeverity).toEqual({
      critical: { mean: '20m0s', median: '20m0s', count: 2 }, // (10m + 30m) / 2
      high: { mean: '1h30m0s', median: '1h30m0s', count: 2 }, // (1h + 2h) / 2
      medium: { mean: null, median: null, count: 0 }, // open: no figure, not 0s
      low: { mean: '20m0s', median: '20m0s', count: 1 },
    });
    expect(res.body.mttr.byPhase).toEqual({
      detection: { mean: '3m0s', description: expect.any(String) }, // (2m + 4m) / 2
      analysis: { mean: '2m0s', description: expect.any(String) }, // (1m + 3m) / 2
      approval: { mean: '20m0s', description: expect.any(String) }, // (10m + 30m) / 2; expired ignored
      remediation: { mean: '5m0s', description: expect.any(String) },
    });
    // Previous 7d: 40m → (40 - 48) / 40 = -20%. Baseline 90d before: (40m + 1h) / 2 = 50m → (50 - 48) / 50 = +4%.
    expect(res.body.mttr.improvement).toEqual({ vsPrevPeriod: '-20.0%', vsBaseline: '+4.0%', baselinePeriod: '90d' });
  });

  it('history: every day oldest first, the incident in its day, empty days null (not 0s)', async () => {
    const res = await api.call('GET', '/analytics/mttr?period=7d&namespace=an');
    const history = res.body.mttr.history as { date: string; mttr: string | null; incidentCount: number }[];
    // 7 days back from a moment that is rarely midnight: 7 whole days plus a partial first.
    const midnight = NOW % D === 0;
    expect(history).toHaveLength(midnight ? 7 : 8);
    expect(history.map((h) => h.date)).toEqual([...history.map((h) => h.date)].sort());
    expect(history.every((h) => h.date.endsWith('T00:00:00.000Z'))).toBe(true);
    expect(history.reduce((n, h) => n + h.incidentCount, 0)).toBe(6);
    expect(history.find((h) => h.date.startsWith(day(ago(3 * D))))).toMatchObject({ mttr: '2h0m0s', incidentCount: 1 });
    expect(history.find((h) => h.date.startsWith(day(ago(2 * D))))).toMatchObject({ mttr: null, incidentCount: 1 });
    for (const h of history.filter((x) => x.incidentCount === 0)) expect(h.mttr).toBeNull();
  });

  it('narrows to a severity; weekly buckets start on Mondays', async () => {
    const res = await api.call('GET', '/analytics/mttr?period=30d&namespace=an&severity=high&granularity=weekly');
    // High in the last 30 days: 1h, 2h, 40m, 1h → mean 4h40m/4 = 1h10m; sorted 40m 1h 1h 2h: median 1h.
    expect(res.body.mttr.overall).toMatchObject({ mean: '1h10m0s', median: '1h0m0s', count: 4 });
    expect(Object.keys(res.body.mttr.bySeverity)).toEqual(['high']);
    for (const h of res.body.mttr.history) expect(new Date(h.date).getUTCDay()).toBe(1);
  });

  it('an empty scope has no figures, never zeros presented as data', async () => {
    const res = await api.call('GET', '/analytics/mttr?period=90d&namespace=nothing-here');
    expect(res.body.mttr.overall).toEqual({ mean: null, median: null, p95: null, p99: null, count: 0, detected: 0 });
    expect(res.body.mttr.byPhase.detection.mean).toBeNull();
    expect(res.body.mttr.improvement).toMatchObject({ vsPrevPeriod: null, vsBaseline: null });
    expect(
      res.body.mttr.history.every(
        (h: { mttr: null; incidentCount: number }) => h.mttr === null && h.incidentCount === 0,
      ),
    ).toBe(true);
  });

  it('400 for what it cannot answer', async () => {
    for (const q of [
      'period=14d',
      'severity=urgent',
      'granularity=monthly',
      'period=180d&granularity=hourly',
      'namespace=Bad_NS',
    ]) {
      const res = await api.call('GET', `/analytics/mttr?${q}`);
      expect(res.status).toBe(400);
      expect(res.body.error.message).toBe('Invalid request');
    }
    expect((await api.call('GET', '/analytics/mttr', { token: null })).status).toBe(401);
  });
});

describe('GET /analytics/trends', () => {
  beforeAll(async () => {
    const at = (iso: string, severity: string) => incident({ namespace: 'tr', severity, detectedAt: new Date(iso) });
    await at('2025-02-28T23:59:59.999Z', 'critical'); // before the window
    await at('2025-03-02T10:00:00Z', 'critical');
    await at('2025-03-02T23:59:59.999Z', 'high');
    await at('2025-03-03T00:00:00Z', 'high'); // a boundary starts the next day
    await at('2025-03-05T12:00:00Z', 'low');
    await at('2025-03-07T23:00:00Z', 'medium');
    await at('2025-03-08T00:00:00Z', 'critical'); // at the end: out ([start, end))
  });

  const zero = { critical: 0, high: 0, medium: 0, low: 0 };

  it('every day of the window, zero-filled, by severity', async () => {
    const res = await api.call('GET', '/analytics/trends?start=2025-03-01T00:00:00Z&end=2025-03-08T00:00:00Z', {
      token: api.tokens.viewer,
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      apiVersion: 'v1',
      kind: 'AnalyticsTrends',
      metadata: { from: '2025-03-01T00:00:00.000Z', to: '2025-03-08T00:00:00.000Z', groupBy: 'day' },
      trends: [
        { date: '2025-03-01T00:00:00.000Z', total: 0, bySeverity: zero },
        { date: '2025-03-02T00:00:00.000Z', total: 2, bySeverity: { ...zero, critical: 1, high: 1 } },
        { date: '2025-03-03T00:00:00.000Z', total: 1, bySeverity: { ...zero, high: 1 } },
        { date: '2025-03-04T00:00:00.000Z', total: 0, bySeverity: zero },
        { date: '2025-03-05T00:00:00.000Z', total: 1, bySeverity: { ...zero, low: 1 } },
        { date: '2025-03-06T00:00:00.000Z', total: 0, bySeverity: zero },
        { date: '2025-03-07T00:00:00.000Z', total: 1, bySeverity: { ...zero, medium: 1 } },
      ],
    });
  });

  it('weeks start on Monday: 2025-03-01 is a Saturday, in the week of 2025-02-24', async () => {
    const res = await api.call(
      'GET',
      '/analytics/trends?start=2025-03-01T00:00:00Z&end=2025-03-08T00:00:00Z&groupBy=week',
    );
    expect(res.body.trends).toEqual([
      { date: '2025-02-24T00:00:00.000Z', total: 2, bySeverity: { ...zero, critical: 1, high: 1 } }, // 03-01, 03-02
      { date: '2025-03-03T00:00:00.000Z', total: 3, bySeverity: { ...zero, high: 1, medium: 1, low: 1 } }, // 03-03 … 03-07
    ]);
  });

  it('defaults to the last 30 days; 400 for a window that ends before it starts or a bad value', async () => {
    const res = await api.call('GET', '/analytics/trends');
    expect(Date.parse(res.body.metadata.to) - Date.parse(res.body.metadata.from)).toBe(30 * D);
    expect(res.body.trends.length).toBeGreaterThanOrEqual(30);
    for (const q of [
      'start=2025-03-08T00:00:00Z&end=2025-03-01T00:00:00Z',
      'groupBy=month',
      'start=yesterday',
      'start=0316-09-22T01:35:01-23:01&groupBy=week',
    ]) {
      const bad = await api.call('GET', `/analytics/trends?${q}`);
      expect(bad.status).toBe(400);
      expect(bad.body.error.message).toBe('Invalid request');
    }
  });
});

describe('GET /analytics/compliance', () => {
  const START = '2025-06-01T00:00:00Z';
  const END = '2025-06-08T00:00:00Z';
  const t = (iso: string) => new Date(iso);

  beforeAll(async () => {
    // A: critical, answered in 3m and resolved in 50m (targets 5m / 1h): compliant.
    const a = await incident({
      namespace: 'comp',
      severity: 'critical',
      detectedAt: t('2025-06-02T00:00:00Z'),
      signalStartedBefore: 60 * S,
      acknowledgedAfter: 3 * M,
      resolvedAfter: 50 * M,
      remediationAttempts: 1,
    });
    // B: critical, acknowledged after 10m and resolved after 2h: both targets missed.
    const b = await incident({
      namespace: 'comp',
      severity: 'critical',
      detectedAt: t('2025-06-03T00:00:00Z'),
      signalStartedBefore: 180 * S,
      acknowledgedAfter: 10 * M,
      resolvedAfter: 2 * H,
      remediationAttempts: 2,
    });
    // C: high, never acknowledged, resolved after 20m: the resolve is the response, 20m > 15m.
    const c = await incident({
      namespace: 'comp',
      severity: 'high',
      detectedAt: t('2025-06-04T00:00:00Z'),
      resolvedAfter: 20 * M,
    });
    // D: medium, open at the end after 4h: past its 1h response target, within its 24h resolution.
    await incident({
      namespace: 'comp',
      severity: 'medium',
      detectedAt: t('2025-06-07T20:00:00Z'),
      state: 'Escalated',
      remediationAttempts: 3,
    });
    // E: low, acknowledged after 1h, resolved after the end: 72h open by the end, not over its 72h.
    await incident({
      namespace: 'comp',
      severity: 'low',
      detectedAt: t('2025-06-05T00:00:00Z'),
      acknowledgedAfter: 1 * H,
      resolvedAt: t('2025-06-09T00:00:00Z'),
    });
    // Outside: at the end instant, and another namespace.
    await incident({ namespace: 'comp', severity: 'critical', detectedAt: t(END), resolvedAfter: 1 * M });
    await incident({ namespace: 'other', severity: 'low', detectedAt: t('2025-06-03T00:00:00Z') });

    const day2 = t('2025-06-02T01:00:00Z');
    await plan({
      incident: a,
      namespace: 'comp',
      state: 'Completed',
      startedAt: day2,
      actions: ['RestartPod', 'ScaleDeployment'],
    });
    await plan({
      incident: b,
      namespace: 'comp',
      state: 'Failed',
      startedAt: day2,
      approvalRequired: true,
      actions: ['RestartPod'],
    });
    await plan({
      incident: b,
      namespace: 'comp',
      state: 'RolledBack',
      startedAt: day2,
      agentic: true,
      approvalRequired: true,
      actions: ['RollbackDeployment'],
    });
    await plan({ incident: c, namespace: 'comp', state: 'Completed', startedAt: day2, agentic: true });
    await plan({ incident: c, namespace: 'comp', state: 'Executing', startedAt: day2, actions: ['ScaleDeployment'] });

    await approval(a, 'comp', 'approved', day2, 6 * M);
    await approval(a, 'comp', 'approved', day2, 4 * M);
    await approval(b, 'comp', 'rejected', day2, 20 * M);
    await approval(b, 'comp', 'expired', day2, 30 * M);
    await approval(c, 'comp', 'pending', day2);

    const events: Array<[string, string, string]> = [
      ['incident.acknowledge', a, 'Incident'],
      ['incident.resolve', b, 'Incident'],
      ['incident.resolve', c, 'Incident'],
      ['config.update', 'escalation-policy/x', 'EscalationPolicy'],
    ];
    await seedAuditChain(events.length, {
      start: t('2025-06-06T00:00:00Z'),
      stepMs: M,
      entry: (i) => ({
        action: events[i]![0] as 'config.update',
        resource: events[i]![1],
        resourceType: events[i]![2],
        namespace: 'comp',
      }),
    });
  });

  it('the report, computed by hand', async () => {
    const res = await api.call('GET', `/analytics/compliance?namespace=comp&start=${START}&end=${END}`, {
      token: api.tokens.viewer,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ apiVersion: 'v1', kind: 'ComplianceReport', metadata: { namespace: 'comp' } });
    expect(res.body.spec).toEqual({
      Period: { Start: '2025-06-01T00:00:00.000Z', End: '2025-06-08T00:00:00.000Z' },
      IncidentMetrics: {
        TotalIncidents: 5,
        BySeverity: { critical: 2, high: 1, medium: 1, low: 1 },
        ByState: { Detected: 0, Analyzing: 0, Remediating: 0, Resolved: 4, Escalated: 1, Failed: 0 },
        MTTD: 120_000_000_000, // (60s + 180s) / 2 = 120s, in nanoseconds
        MTTR: 3_800_000_000_000, // resolved by the end: 50m, 2h, 20m → 190m / 3 = 3,800s
        MeanRemediationAttempts: 1.2, // (1 + 2 + 0 + 3 + 0) / 5
      },
      RemediationMetrics: {
        TotalRemediations: 5,
        SuccessRate: 0.5, // Completed 2 / finished 4 (2 Completed, 1 Failed, 1 RolledBack)
        AutoRemediatedCount: 2,
        AgenticCount: 2,
        ByActionType: { RestartPod: 2, ScaleDeployment: 2, RollbackDeployment: 1 },
        ByState: { Pending: 0, Executing: 1, Verifying: 0, Completed: 2, Failed: 1, RolledBack: 1 },
      },
      SLAMetrics: {
        CompliancePercentage: 40, // A and E of 5
        ResponseSLAViolations: 3, // B (10m > 5m), C (20m > 15m), D (4h open > 1h)
        ResolutionSLAViolations: 1, // B (2h > 1h)
        AverageResponseTime: '23m15s', // (3m + 10m + 20m + 1h) / 4
        AverageResolutionTime: '1h3m20s', // (50m + 2h + 20m) / 3
        Targets: {
          critical: { Respond: '5m0s', Resolve: '1h0m0s' },
          high: { Respond: '15m0s', Resolve: '4h0m0s' },
          medium: { Respond: '1h0m0s', Resolve: '24h0m0s' },
          low: { Respond: '4h0m0s', Resolve: '72h0m0s' },
        },
      },
      ApprovalMetrics: {
        TotalRequests: 8, // 3 plans without approval + 5 approval requests
        AutoApproved: 3,
        ManualApproved: 2,
        Rejected: 1,
        Expired: 1,
        Pending: 1,
        AverageDecisionTime: '10m0s', // (6m + 4m + 20m) / 3
      },
      AuditSummary: {
        TotalEvents: 4,
        ByAction: { 'incident.acknowledge': 1, 'incident.resolve': 2, 'config.update': 1 },
        BySeverity: { critical: 2, high: 1, medium: 0, low: 0 }, // A and B critical, C high
      },
    });
  });

  it('without a namespace it covers every namespace', async () => {
    const res = await api.call('GET', `/analytics/compliance?start=${START}&end=${END}`);
    expect(res.body.spec.IncidentMetrics.TotalIncidents).toBe(6); // the five and the one in `other`
    expect(res.body.metadata.namespace).toBeUndefined();
  });

  it('an empty window has counts of 0 and no means or rates', async () => {
    const res = await api.call(
      'GET',
      '/analytics/compliance?namespace=comp&start=2024-01-01T00:00:00Z&end=2024-01-02T00:00:00Z',
    );
    const spec = res.body.spec;
    expect(spec.IncidentMetrics).toMatchObject({
      TotalIncidents: 0,
      MTTD: null,
      MTTR: null,
      MeanRemediationAttempts: null,
    });
    expect(spec.RemediationMetrics).toMatchObject({ TotalRemediations: 0, SuccessRate: null });
    expect(spec.SLAMetrics).toMatchObject({
      CompliancePercentage: null,
      AverageResponseTime: null,
      ResponseSLAViolations: 0,
    });
    expect(spec.ApprovalMetrics).toMatchObject({ TotalRequests: 0, AverageDecisionTime: null });
  });

  it('defaults to the last 7 days; 400 for a bad window', async () => {
    const res = await api.call('GET', '/analytics/compliance');
    expect(res.status).toBe(200);
    expect(Date.parse(res.body.spec.Period.End) - Date.parse(res.body.spec.Period.Start)).toBe(7 * D);
    expect(Math.abs(Date.parse(res.body.spec.Period.End) - Date.now())).toBeLessThan(60_000);
    for (const q of [`start=${END}&end=${START}`, 'start=2025-13-01T00:00:00Z', 'namespace=-bad-']) {
      const bad = await api.call('GET', `/analytics/compliance?${q}`);
      expect(bad.status).toBe(400);
    }
    expect((await api.call('GET', '/analytics/compliance', { token: null })).status).toBe(401);
  });
});
