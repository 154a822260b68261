import { createPostmortemActivities } from '../../activities/postmortem';
import { type TimelineEvent } from '../../domain/incident';
import { signalSchema, type SignalInput } from '../../contracts/incidents';
import { postmortemReportSchema } from '../../contracts/postmortems';
import {
  appendTimeline,
  clearDedupEntry,
  getIncident,
  getTimeline,
  openOrJoin,
  updateIncident,
  type IncidentRecord,
} from '../../store/incidents';
import { recordAvailability } from '../../store/changes';
import { InsightModel, PostmortemModel } from '../../store/models';
import { useApi, type ApiResponse } from '../harness/api';

let api: Awaited<ReturnType<typeof useApi>>;
const { generatePostmortem } = createPostmortemActivities();

beforeAll(async () => {
  api = await useApi();
}, 120_000);

afterAll(async () => {
  await api?.stop();
});

const S = 1000;
const M = 60 * S;
const DAY = 24 * 60 * M;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

function expectError(res: ApiResponse, status: number, message: string, details?: string | RegExp): void {
  expect({ status: res.status, body: res.body }).toEqual({
    status,
    body: { apiVersion: 'v1', kind: 'Error', error: { code: status, message, details: expect.any(String) } },
  });
  if (details !== undefined) expect(res.body.error.details).toMatch(details);
}

/** An incident opened through ingestion's own path, optionally resolved afterwards. */
async function incident(
  signal: SignalInput,
  detectedAt: Date,
  resolved?: { after: number; by?: string; resolution?: string },
): Promise<IncidentRecord> {
  const { incident: created } = await openOrJoin(signalSchema.parse(signal), detectedAt);
  if (!resolved) return created;
  const resolvedAt = new Date(detectedAt.getTime() + resolved.after);
  await updateIncident(
    created.name,
    {
      state: 'Resolved',
      resolvedAt,
      resolution: resolved.resolution ?? 'Manually resolved via dashboard',
      resolvedBy: resolved.by ?? 'operator-user',
    },
    { allowResolved: true },
  );
  await clearDedupEntry(created);
  return (await getIncident(created.name))!;
}

async function insightFor(inc: IncidentRecord, fields: Record<string, unknown>): Promise<void> {
  const now = new Date();
  await InsightModel.create({
    name: `AI-${inc.name.slice(4)}`,
    namespace: inc.namespace,
    issueRef: inc.name,
    provider: 'builtin',
    model: 'rules-v1',
    generatedAt: now,
    creationTimestamp: now,
    ...fields,
  });
}

const event = (at: Date, type: TimelineEvent['type'], message: string, source: TimelineEvent['source'] = 'ai-engine') =>
  ({ timestamp: at, type, source, message }) as TimelineEvent;

async function getPm(name: string, token = api.tokens.viewer) {
  const res = await api.call('GET', `/postmortems/${name}`, { token });
  expect(res.status).toBe(200);
  return res.body;
}

async function auditFor(action: string, resource: string) {
  const res = await api.call('GET', `/audit?action=${action}&resource=${resource}`);
  expect(res.status).toBe(200);
  return res.body.items;
}

describe('generating a postmortem', () => {
  // Each scenario lives in its own month so trending windows never overlap between them.
  const T = new Date('2025-02-10T10:00:00.000Z');
  const at = (ms: number) => new Date(T.getTime() + ms);
  let main: IncidentRecord;
  let earlierPm: string;
  let categoryPm: string;
  let related: IncidentRecord;
  let pm: string;

  beforeAll(async () => {
    // Five days earlier, the same resource broke and got a postmortem.
    const earlier = await incident(
      { resource: 'Deployment/checkout-api', namespace: 'shop', signalType: 'OOMKilled', severity: 'high' },
      new Date(T.getTime() - 5 * DAY),
      { after: 5 * M },
    );
    earlierPm = await generatePostmortem({ incident: earlier.name });
    // Ten days earlier, the same kind of problem (oomkill) elsewhere.
    const sameCategory = await incident(
      { resource: 'Deployment/search', namespace: 'search', signalType: 'HighMemory', severity: 'medium' },
      new Date(T.getTime() - 10 * DAY),
      { after: 2 * M },
    );
    categoryPm = await generatePostmortem({ incident: sameCategory.name });
    // Unrelated: other category on another resource, and one outside the 30-day window.
    await incident(
      { resource: 'Deployment/search', namespace: 'search', signalType: 'HighLatency', severity: 'low' },
      new Date(T.getTime() - 3 * DAY),
      { after: M },
    );
    await incident(
      { resource: 'Deployment/checkout-api', namespace: 'shop', signalType: 'OOMKilled', severity: 'high' },
      new Date(T.getTime() - 31 * DAY),
      { after: M },
    );
    // Three minutes before: a neighbour in the same namespace (still open).
    related = await incident(
      { resource: 'Deployment/cart', namespace: 'shop', signalType: 'HighLatency', severity: 'high' },
      at(-3 * M),
    );

    main = await incident(
      {
        resource: 'Deployment/checkout-api',
        namespace: 'shop',
        signalType: 'OOMKilled',
        severity: 'critical',
        description: 'container app exceeded its 512Mi memory limit',
      },
      T,
    );
    await insightFor(main, {
      rootCause: 'The container exceeded its memory limit under peak load.',
      analysis: 'Deployment/checkout-api reports OOMKilled.',
      confidence: 0.8,
      recommendations: ['Raise the memory limit to 1Gi', 'Alert at 80% of the memory limit'],
      logAnalysis: 'OutOfMemoryError in 14 log lines',
      gitOpsContext: 'checkout synced 10m before detection',
      cascadeAnalysis: '',
    });
    await appendTimeline(main.name, [
      { key: `${main.name}/t/analysis`, event: event(at(20 * S), 'Analysis', 'Analysis complete') },
      {
        key: `${main.name}/t/ack`,
        event: event(at(2 * M), 'Acknowledged', 'Acknowledged by bob', 'user:operator-user'),
      },
      {
        key: `${main.name}/t/resolved`,
        event: event(at(12 * M + 30 * S), 'Resolved', 'Resolved by alice: bumped memory', 'user:alice'),
      },
    ]);
    await updateIncident(main.name, { acknowledged: true, acknowledgedAt: at(2 * M), acknowledgedBy: 'bob' });
    main = (await incident_resolve(main, at(12 * M + 30 * S)))!;
    pm = await generatePostmortem({ incident: main.name });
  });

  async function incident_resolve(inc: IncidentRecord, resolvedAt: Date) {
    await updateIncident(
      inc.name,
      { state: 'Resolved', resolvedAt, resolution: 'Raised the memory limit to 1Gi', resolvedBy: 'alice' },
      { allowResolved: true },
    );
    await clearDedupEntry(inc);
    return getIncident(inc.name);
  }

  it('names it PM-<yyyymmdd>-<nnn>, links it from the incident and notes it on the timeline', async () => {
    expect(pm).toMatch(/^PM-\d{8}-\d{3,}$/);
    expect((await getIncident(main.name))!.postmortem).toBe(pm);
    const generated = (await getTimeline(main.name)).filter((e) => e.type === 'PostMortemGenerated');
    expect(generated).toEqual([
      expect.objectContaining({
        source: 'ai-engine',
        details: { postmortem: pm },
        message: `Postmortem ${pm} generated`,
      }),
    ]);
  });

  it('gives the same postmortem when called again (a retry, or a second resolve path)', async () => {
    expect(await generatePostmortem({ incident: main.name })).toBe(pm);
    expect(await generatePostmortem({ incident: main.name })).toBe(pm);
    const list = await api.call('GET', `/postmortems?incident=${main.name}`);
    expect(list.body.metadata.totalCount).toBe(1);
    expect((await getTimeline(main.name)).filter((e) => e.type === 'PostMortemGenerated')).toHaveLength(1);
  });

  it('creates one postmortem when generations race', async () => {
    const inc = await incident(
      { resource: 'Deployment/racer', namespace: 'race', signalType: 'HighCPU', severity: 'medium' },
      new Date('2024-09-01T00:00:00.000Z'),
      { after: 3 * M },
    );
    const names = await Promise.all(Array.from({ length: 6 }, () => generatePostmortem({ incident: inc.name })));
    expect(new Set(names).size).toBe(1);
    expect((await api.call('GET', `/postmortems?incident=${inc.name}`)).body.metadata.totalCount).toBe(1);
    expect((await getTimeline(inc.name)).filter((e) => e.type === 'PostMortemGenerated')).toHaveLength(1);
  });

  it('fills every report field from the stored data', async () => {
    const body = await getPm(pm);
    expect(body).toEqual({
      apiVersion: 'v1',
      kind: 'PostMortem',
      metadata: {
        name: pm,
        namespace: 'shop',
        incident: main.name,
        createdAt: expect.stringMatching(ISO),
        author: 'foghorn-ai',
        reviewedBy: '',
      },
      status: { state: 'Open' },
      report: expect.any(Object),
    });
    const { report } = body;
    expect(postmortemReportSchema.strict().parse(report)).toEqual(report);
    expect(report).toMatchObject({
      title: `OOMKilled on Deployment/checkout-api (${main.name})`,
      severity: 'critical',
      duration: '12m30s',
      detectedAt: '2025-02-10T10:00:00.000Z',
      resolvedAt: '2025-02-10T10:12:30.000Z',
      rootCause: {
        description: 'The container exceeded its memory limit under peak load.',
        category: 'oomkill',
        confidence: 0.8,
      },
      actionItems: [
        {
          priority: 'high',
          description: 'Raise the memory limit to 1Gi',
          assignee: '',
          status: 'open',
          dueDate: '2025-02-17',
        },
        {
          priority: 'high',
          description: 'Alert at 80% of the memory limit',
          assignee: '',
          status: 'open',
          dueDate: '2025-02-17',
        },
      ],
      blastRadius: [
        {
          resource: { kind: 'Deployment', name: 'cart', namespace: 'shop' },
          impact: `HighLatency (${related.name})`,
          severity: 'high',
        },
      ],
      trending: {
        occurrenceCount: 2,
        windowDays: 30,
        relatedPostMortems: [categoryPm, earlierPm],
        pattern:
          '1 earlier incident on Deployment/checkout-api and 1 earlier oomkill incident on other resources in the 30 days before detection',
      },
      gitOpsContext: 'checkout synced 10m before detection',
      logAnalysisSummary: 'OutOfMemoryError in 14 log lines',
      cascadeChain: [related.name, main.name],
    });
    expect(report.summary).toBe(
      'OOMKilled was detected on Deployment/checkout-api in namespace shop at 2025-02-10T10:00:00.000Z ' +
        '(severity critical): container app exceeded its 512Mi memory limit. Acknowledged by bob 2m0s after detection. ' +
        'Resolved by alice at 2025-02-10T10:12:30.000Z, 12m30s after detection: Raised the memory limit to 1Gi.',
    );
    expect(report.timeline).toEqual([
      {
        time: '2025-02-10T10:00:00.000Z',
        event:
          'Detection: OOMKilled detected on Deployment/checkout-api in shop: container app exceeded its 512Mi memory limit',
      },
      { time: '2025-02-10T10:00:20.000Z', event: 'Analysis: Analysis complete' },
      { time: '2025-02-10T10:02:00.000Z', event: 'Acknowledged: Acknowledged by bob' },
      { time: '2025-02-10T10:12:30.000Z', event: 'Resolved: Resolved by alice: bumped memory' },
    ]);
    expect(report.lessonsLearned).toEqual([
      'Time to acknowledge: 2m0s (bob).',
      'Time to resolve: 12m30s.',
      `1 other incident in namespace shop was detected within 10m0s (${related.name}): investigate them together.`,
      `Recurring problem: ${report.trending.pattern}.`,
      'The analysis recommends 2 follow-ups, tracked as action items due 2025-02-17: ' +
        'Raise the memory limit to 1Gi; Alert at 80% of the memory limit.',
    ]);
  });

  it('leaves the fields it has no data for empty or null, and says why', async () => {
    const { report } = await getPm(pm);
    expect(report).toMatchObject({
      impact: {
        usersAffected: null,
        requestsAffected: '',
        revenueImpact: '',
        slosBreached: [],
        podsAffected: null,
        replicasAffected: null,
        unavailableReplicaMinutes: null,
      },
      remediationApplied: { runbook: '', steps: [], result: '' },
      metricSnapshots: [],
      gitCorrelation: {
        commitSHA: '',
        commitMessage: '',
        author: '',
        timestamp: '',
        confidence: 0,
        filesChanged: [],
        change: '',
        reason:
          'No evidence was collected with the analysis (evidence is collected for workloads in registered clusters)',
      },
    });
    expect(report.dataNotes).toEqual([
      'impact.usersAffected: unknown; no source reports affected users (an operator may set it)',
      "impact.podsAffected: unknown; neither the evidence nor the incident's signals name a pod",
      'impact.replicasAffected: unknown; no availability samples were recorded for Deployment/checkout-api',
      'impact.unavailableReplicaMinutes: unknown; no availability samples were recorded for Deployment/checkout-api',
      'metricSnapshots: none; no availability samples were recorded for Deployment/checkout-api',
    ]);
  });

  it("builds impact, the suspected change and snapshots from the insight's evidence and availability samples", async () => {
    const D = new Date('2024-11-05T14:00:00.000Z');
    const t = (ms: number) => new Date(D.getTime() + ms);
    const inc = await incident(
      {
        resource: 'Deployment/payments-api',
        namespace: 'pay',
        signalType: 'CrashLoopBackOff',
        severity: 'high',
        labels: { object: 'Pod/payments-api-5c7d-aaaaa', reason: 'CrashLoopBackOff' },
      },
      D,
      { after: 10 * M },
    );
    await insightFor(inc, { rootCause: 'A bad release', confidence: 0.7, recommendations: [] });
    // The insight model gets its `evidence` field elsewhere: written past the schema here.
    await InsightModel.collection.updateOne(
      { issueRef: inc.name },
      {
        $set: {
          evidence: {
            collectedAt: t(30 * S),
            firstSignalAt: D,
            windowMs: 2 * 60 * M,
            ownerChain: [],
            changes: [],
            suspect: {
              change: 'chg-payments-8',
              resource: 'Deployment/payments-api',
              type: 'Rollout',
              revision: 8,
              previousRevision: 7,
              summary: 'image api: pay/api:2.0.0 → pay/api:2.0.1',
              at: t(-6 * M),
              leadMs: 6 * M,
              confidence: 0.9,
              reason: 'The new revision failed 6m after it reached the cluster.',
              by: { manager: 'argocd-controller', changeCause: '', source: 'argocd revision 9f8e7d6', foghorn: false },
              evidence: 'E1',
            },
            revisions: [],
            pods: [
              {
                name: 'payments-api-5c7d-aaaaa',
                node: 'n1',
                phase: 'Running',
                restarts: 5,
                waitingReason: 'CrashLoopBackOff',
                previousLogs: [],
                currentLogs: [],
              },
              {
                name: 'payments-api-5c7d-bbbbb',
                node: 'n2',
                phase: 'Running',
                restarts: 2,
                waitingReason: '',
                previousLogs: [],
                currentLogs: [],
              },
            ],
            events: [],
            nodes: [],
            items: [],
            notes: [],
          },
        },
      },
    );
    const key = { cluster: inc.cluster, namespace: 'pay', resource: 'Deployment/payments-api' };
    await recordAvailability([
      { ...key, at: t(-10 * M), desired: 4, available: 4 },
      { ...key, at: t(2 * M), desired: 4, available: 2 },
      { ...key, at: t(8 * M), desired: 4, available: 4 },
    ]);
    const { report } = await getPm(await generatePostmortem({ incident: inc.name }));
    expect(postmortemReportSchema.strict().parse(report)).toEqual(report);
    // 2 unavailable from 2m to 8m: 12 replica-minutes.
    expect(report.impact).toEqual({
      usersAffected: null,
      requestsAffected: '',
      revenueImpact: '',
      slosBreached: [],
      podsAffected: 2,
      replicasAffected: 2,
      unavailableReplicaMinutes: 12,
    });
    expect(report.gitCorrelation).toEqual({
      commitSHA: '9f8e7d6',
      commitMessage: 'image api: pay/api:2.0.0 → pay/api:2.0.1',
      author: 'argocd-controller',
      timestamp: t(-6 * M).toISOString(),
      confidence: 0.9,
      filesChanged: [],
      change: 'chg-payments-8',
      reason: 'The new revision failed 6m after it reached the cluster.',
    });
    expect(report.metricSnapshots).toEqual([
      {
        name: 'Deployment/payments-api availableReplicas',
        value: '4/4',
        timestamp: t(-10 * M).toISOString(),
        phase: 'before',
      },
      {
        name: 'Deployment/payments-api availableReplicas',
        value: '2/4',
        timestamp: t(2 * M).toISOString(),
        phase: 'during',
      },
    ]);
    expect(report.dataNotes).toEqual([
      'impact.usersAffected: unknown; no source reports affected users (an operator may set it)',
    ]);
  });

  it('writes an empty report where nothing is known: no insight, no neighbours, no history', async () => {
    const lonely = await incident(
      { resource: 'StatefulSet/ledger', namespace: 'vault', signalType: 'DiskPressure', severity: 'low' },
      new Date('2024-06-01T00:00:00.000Z'),
      { after: 90 * M, by: 'carol', resolution: 'Pruned old WAL segments' },
    );
    const { report } = await getPm(await generatePostmortem({ incident: lonely.name }));
    expect(report).toMatchObject({
      title: `DiskPressure on StatefulSet/ledger (${lonely.name})`,
      severity: 'low',
      duration: '1h30m0s',
      rootCause: { description: '', category: 'disk', confidence: 0 },
      actionItems: [],
      blastRadius: [],
      trending: { occurrenceCount: 0, windowDays: 30, relatedPostMortems: [], pattern: '' },
      gitOpsContext: '',
      logAnalysisSummary: '',
      cascadeChain: [],
      lessonsLearned: ['The incident was not acknowledged before it was resolved.', 'Time to resolve: 1h30m0s.'],
    });
    expect(report.summary).toContain('Resolved by carol at 2024-06-01T01:30:00.000Z, 1h30m0s after detection');
  });

  it('refuses (so Temporal retries) while the incident is not resolved, or does not exist', async () => {
    const open = await incident(
      { resource: 'Deployment/open-one', namespace: 'shop', signalType: 'HighCPU' },
      new Date('2024-07-01T00:00:00.000Z'),
    );
    await expect(generatePostmortem({ incident: open.name })).rejects.toThrow(/not Resolved/);
    await expect(generatePostmortem({ incident: 'INC-19990101-001' })).rejects.toThrow(/does not exist/);
    await expect(generatePostmortem({ incident: '' })).rejects.toThrow(/invalid input/);
    expect(await api.call('GET', `/postmortems?incident=${open.name}`)).toMatchObject({
      body: { metadata: { totalCount: 0 } },
    });
  });
});

describe('the postmortem API', () => {
  const pms: string[] = [];
  const base = new Date('2023-03-01T08:00:00.000Z');

  beforeAll(async () => {
    for (let i = 0; i < 3; i++) {
      const inc = await incident(
        { resource: `Deployment/api-${i}`, namespace: 'payments', signalType: 'CrashLoopBackOff', severity: 'high' },
        new Date(base.getTime() + i * DAY),
        { after: 7 * M },
      );
      pms.push(await generatePostmortem({ incident: inc.name }));
    }
  });

  const review = (name: string, body: unknown, token = api.tokens.operator, query = '') =>
    api.call('POST', `/postmortems/${name}/review${query}`, { token, body });
  const close = (name: string, body: unknown, token = api.tokens.operator, query = '') =>
    api.call('POST', `/postmortems/${name}/close${query}`, { token, body });
  const feedback = (name: string, body: unknown, token = api.tokens.operator) =>
    api.call('POST', `/postmortems/${name}/feedback`, { token, body });

  it('lists newest first with filters and pagination', async () => {
    const all = await api.call('GET', '/postmortems?pageSize=100', { token: api.tokens.viewer });
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ apiVersion: 'v1', kind: 'PostMortemList' });
    const names: string[] = all.body.items.map((i: { name: string }) => i.name);
    expect(names.indexOf(pms[2])).toBeLessThan(names.indexOf(pms[1]));
    expect(names.indexOf(pms[1])).toBeLessThan(names.indexOf(pms[0]));

    const first = all.body.items.find((i: { name: string }) => i.name === pms[0]);
    expect(first).toEqual({
      name: pms[0],
      namespace: 'payments',
      incident: expect.stringMatching(/^INC-20230301-\d{3}$/),
      state: 'Open',
      title: expect.stringMatching(/^CrashLoopBackOff on Deployment\/api-0 \(INC-/),
      severity: 'high',
      author: 'foghorn-ai',
      createdAt: expect.stringMatching(ISO),
    });

    const page = await api.call('GET', '/postmortems?pageSize=2&page=2');
    expect(page.body.metadata).toEqual({ totalCount: all.body.metadata.totalCount, page: 2, pageSize: 2 });
    expect(page.body.items.map((i: { name: string }) => i.name)).toEqual(names.slice(2, 4));
    expect((await api.call('GET', '/postmortems')).body.metadata.pageSize).toBe(20);

    const byIncident = await api.call('GET', `/postmortems?incident=${first.incident}`);
    expect(byIncident.body.items.map((i: { name: string }) => i.name)).toEqual([pms[0]]);
    expect(byIncident.body.metadata.totalCount).toBe(1);

    expectError(await api.call('GET', '/postmortems?pageSize=101'), 400, 'Invalid request', /pageSize/);
    expectError(await api.call('GET', '/postmortems?page=0'), 400, 'Invalid request', /page/);
    expectError(await api.call('GET', '/postmortems?state=Done'), 400, 'Invalid request', /state/);
  });

  it('reviews, re-reviews, closes, and refuses to close twice', async () => {
    const name = pms[0];
    const r1 = await review(name, { reviewer: 'dana@example.com', notes: 'first pass' });
    expect(r1.status).toBe(200);
    expect(r1.body).toEqual({
      apiVersion: 'v1',
      kind: 'PostMortem',
      metadata: { name, namespace: 'payments' },
      status: {
        state: 'InReview',
        reviewer: 'dana@example.com',
        reviewStartedAt: expect.stringMatching(ISO),
        notes: 'first pass',
      },
    });

    // InReview → InReview: reviewer and notes change, the review start stays.
    const r2 = await review(name, { reviewer: 'erin' }, api.tokens.operator, '?namespace=payments');
    expect(r2.status).toBe(200);
    expect(r2.body.status).toEqual({
      state: 'InReview',
      reviewer: 'erin',
      reviewStartedAt: r1.body.status.reviewStartedAt,
      notes: '',
    });

    const listed = await api.call('GET', '/postmortems?state=InReview');
    expect(listed.body.items).toEqual([expect.objectContaining({ name, state: 'InReview', reviewedBy: 'erin' })]);

    const c1 = await close(name, { reviewer: 'frank', notes: 'action items filed' });
    expect(c1.status).toBe(200);
    expect(c1.body).toEqual({
      apiVersion: 'v1',
      kind: 'PostMortem',
      metadata: { name, namespace: 'payments' },
      status: { state: 'Closed', reviewer: 'frank', closedAt: expect.stringMatching(ISO), notes: 'action items filed' },
    });

    const detail = await getPm(name);
    expect(detail.metadata.reviewedBy).toBe('frank');
    expect(detail.status).toEqual({
      state: 'Closed',
      reviewer: 'frank',
      reviewStartedAt: r1.body.status.reviewStartedAt,
      closedAt: c1.body.status.closedAt,
      notes: 'action items filed',
    });

    const again = await close(name, { reviewer: 'gina' });
    expectError(again, 409, 'PostMortem already closed', `closed by frank at ${c1.body.status.closedAt}`);
    expectError(await review(name, { reviewer: 'gina' }), 409, 'PostMortem already closed', /closed by frank at/);
    expect((await getPm(name)).status.reviewer).toBe('frank');
  });

  it('refuses to close an Open postmortem', async () => {
    expectError(await close(pms[1], { reviewer: 'dana' }), 409, 'PostMortem not reviewed', /Open/);
    expect((await getPm(pms[1])).status.state).toBe('Open');
  });

  it('answers 404 for an unknown name or another namespace', async () => {
    expectError(await api.call('GET', '/postmortems/PM-19990101-001'), 404, 'PostMortem not found');
    expectError(await review('PM-19990101-001', { reviewer: 'x' }), 404, 'PostMortem not found');
    expectError(await close('PM-19990101-001', { reviewer: 'x' }), 404, 'PostMortem not found');
    expectError(await feedback('PM-19990101-001', { comments: 'x' }), 404, 'PostMortem not found');
    expectError(
      await review(pms[1], { reviewer: 'x' }, api.tokens.operator, '?namespace=default'),
      404,
      'PostMortem not found',
    );
    expectError(
      await close(pms[1], { reviewer: 'x' }, api.tokens.operator, '?namespace=shop'),
      404,
      'PostMortem not found',
    );
    expectError(await api.call('GET', `/postmortems/${pms[1]}?namespace=shop`), 404, 'PostMortem not found');
    expect((await getPm(pms[1])).status.state).toBe('Open');
  });

  it('validates review and close bodies', async () => {
    expectError(await review(pms[1], {}), 400, 'Invalid request', /reviewer/);
    expectError(await review(pms[1], { reviewer: 'a', extra: true }), 400, 'Invalid request');
    expectError(await close(pms[1], { reviewer: 7 }), 400, 'Invalid request', /reviewer/);
  });

  it('lets viewers read but not review, close or give feedback', async () => {
    await getPm(pms[2], api.tokens.viewer);
    expectError(await review(pms[2], { reviewer: 'v' }, api.tokens.viewer), 403, 'Forbidden');
    expectError(await close(pms[2], { reviewer: 'v' }, api.tokens.viewer), 403, 'Forbidden');
    expectError(await feedback(pms[2], { comments: 'v' }, api.tokens.viewer), 403, 'Forbidden');
    expect((await getPm(pms[2])).status).toEqual({ state: 'Open' });
  });

  it('validates and stores feedback with the token user as provider', async () => {
    expectError(await feedback(pms[2], { remediationAccuracy: 6 }), 400, 'Invalid request', /remediationAccuracy/);
    expectError(await feedback(pms[2], { remediationAccuracy: 0 }), 400, 'Invalid request');
    expectError(await feedback(pms[2], {}), 400, 'Invalid request', /at least one/);
    expectError(await feedback(pms[2], { comments: 'x', providedBy: 'mallory' }), 400, 'Invalid request');

    const res = await feedback(pms[2], {
      overrideRootCause: 'A bad config push, not load',
      remediationAccuracy: 4,
      comments: 'close enough',
    });
    expect(res.status).toBe(200);
    const expected = {
      overrideRootCause: 'A bad config push, not load',
      remediationAccuracy: 4,
      comments: 'close enough',
      providedBy: 'operator-user',
      providedAt: expect.stringMatching(ISO),
    };
    expect(res.body).toEqual({
      apiVersion: 'v1',
      kind: 'PostMortem',
      metadata: { name: pms[2], namespace: 'payments' },
      feedback: expected,
    });
    expect((await getPm(pms[2])).feedback).toEqual({ ...expected, providedAt: res.body.feedback.providedAt });

    // Feedback is about the AI's report: it is accepted on a closed postmortem too.
    expect((await feedback(pms[0], { remediationAccuracy: 2 }, api.tokens.admin)).body.feedback).toEqual({
      remediationAccuracy: 2,
      providedBy: 'admin-user',
      providedAt: expect.stringMatching(ISO),
    });
  });

  it('audits review, close and feedback as the token user', async () => {
    const [reviewAudit] = await auditFor('postmortem.review', pms[0]);
    expect(reviewAudit).toMatchObject({
      action: 'postmortem.review',
      user: 'operator-user',
      role: 'operator',
      resource: pms[0],
      resourceType: 'PostMortem',
      namespace: 'payments',
      details: { reviewer: 'erin', notes: '', previousState: 'InReview' },
    });
    const reviews = await auditFor('postmortem.review', pms[0]);
    expect(reviews.map((r: { details: { reviewer: string } }) => r.details.reviewer)).toEqual([
      'erin',
      'dana@example.com',
    ]);
    expect(reviews[1].details).toMatchObject({ notes: 'first pass', previousState: 'Open' });

    expect(await auditFor('postmortem.close', pms[0])).toEqual([
      expect.objectContaining({
        user: 'operator-user',
        role: 'operator',
        resourceType: 'PostMortem',
        namespace: 'payments',
        details: expect.objectContaining({ reviewer: 'frank', notes: 'action items filed' }),
      }),
    ]);

    const feedbacks = await auditFor('postmortem.feedback', pms[2]);
    expect(feedbacks).toEqual([
      expect.objectContaining({
        user: 'operator-user',
        resourceType: 'PostMortem',
        details: expect.objectContaining({
          remediationAccuracy: 4,
          comments: 'close enough',
          providedBy: 'operator-user',
        }),
      }),
    ]);
    // Refused and forbidden requests leave no audit record.
    expect(await auditFor('postmortem.close', pms[1])).toEqual([]);
    expect(await auditFor('postmortem.review', pms[2])).toEqual([]);
  });

  it('lets exactly one of many concurrent closes win', async () => {
    const name = pms[1];
    expect((await review(name, { reviewer: 'race' })).status).toBe(200);
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => close(name, { reviewer: `closer-${i}` })));
    expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409, 409, 409, 409]);
    const winner = results.find((r) => r.status === 200)!;
    expect((await getPm(name)).status.reviewer).toBe(winner.body.status.reviewer);
    expect(await auditFor('postmortem.close', name)).toHaveLength(1);
  });
});

describe('editing a postmortem (PATCH)', () => {
  const pms: string[] = [];
  const base = new Date('2022-05-02T06:00:00.000Z');

  beforeAll(async () => {
    for (let i = 0; i < 4; i++) {
      const inc = await incident(
        { resource: `Deployment/edit-${i}`, namespace: 'edits', signalType: 'OOMKilled', severity: 'critical' },
        new Date(base.getTime() + i * DAY),
        { after: 20 * M },
      );
      pms.push(await generatePostmortem({ incident: inc.name }));
    }
  });

  const patch = (name: string, body: unknown, token = api.tokens.operator, query = '') =>
    api.call('PATCH', `/postmortems/${name}${query}`, { token, body });

  it('applies the fields given, answers the detail and audits each change with its previous value', async () => {
    const name = pms[0];
    const before = await getPm(name);
    const actionItems = [
      {
        priority: 'high',
        description: 'Load-test checkout with 2x peak',
        assignee: 'dana',
        status: 'in-progress',
        dueDate: '2022-05-20',
      },
    ];
    const res = await patch(name, {
      title: 'Checkout ran out of memory at peak',
      impact: {
        usersAffected: 1200,
        requestsAffected: '8% of checkouts failed for 14m',
        slosBreached: ['checkout-99.9'],
      },
      rootCause: { description: 'A heap leak in 1.4.2', category: 'oomkill' }, // the category is unchanged
      actionItems,
      gitCorrelation: { commitSHA: 'abc1234', timestamp: '2022-05-02T07:50:00+01:00' },
    });
    expect(res.status).toBe(200);
    const after = await getPm(name);
    expect(res.body).toEqual(after);
    expect(after.metadata).toEqual({
      ...before.metadata,
      lastEditedBy: 'operator-user',
      lastEditedAt: expect.stringMatching(ISO),
    });
    expect(after.report).toEqual({
      ...before.report,
      title: 'Checkout ran out of memory at peak',
      impact: {
        ...before.report.impact,
        usersAffected: 1200,
        requestsAffected: '8% of checkouts failed for 14m',
        slosBreached: ['checkout-99.9'],
      },
      rootCause: { ...before.report.rootCause, description: 'A heap leak in 1.4.2' },
      actionItems,
      gitCorrelation: { ...before.report.gitCorrelation, commitSHA: 'abc1234', timestamp: '2022-05-02T06:50:00.000Z' },
      // The note that explained the unknown usersAffected goes with it.
      dataNotes: before.report.dataNotes.filter((n: string) => !n.startsWith('impact.usersAffected:')),
    });
    expect(postmortemReportSchema.strict().parse(after.report)).toEqual(after.report);

    const audits = await auditFor('postmortem.edit', name);
    expect(audits).toHaveLength(1);
    expect(audits[0]).toMatchObject({
      action: 'postmortem.edit',
      user: 'operator-user',
      role: 'operator',
      resource: name,
      resourceType: 'PostMortem',
      namespace: 'edits',
    });
    expect(audits[0].details).toEqual({
      incident: before.metadata.incident,
      changes: [
        { field: 'title', from: before.report.title, to: 'Checkout ran out of memory at peak' },
        { field: 'impact.usersAffected', from: null, to: 1200 },
        { field: 'impact.requestsAffected', from: '', to: '8% of checkouts failed for 14m' },
        { field: 'impact.slosBreached', from: [], to: ['checkout-99.9'] },
        { field: 'rootCause.description', from: '', to: 'A heap leak in 1.4.2' },
        { field: 'actionItems', from: before.report.actionItems, to: actionItems },
        { field: 'gitCorrelation.commitSHA', from: '', to: 'abc1234' },
        { field: 'gitCorrelation.timestamp', from: '', to: '2022-05-02T06:50:00.000Z' },
        { field: 'dataNotes', from: before.report.dataNotes, to: after.report.dataNotes },
      ],
    });
  });

  it('answers 200 and writes nothing for an edit that changes nothing', async () => {
    const name = pms[0];
    const before = await getPm(name);
    for (const body of [
      {},
      { impact: {} },
      { title: before.report.title, impact: { usersAffected: 1200 }, rootCause: { category: 'oomkill' } },
    ]) {
      const res = await patch(name, body);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(before);
    }
    expect(await auditFor('postmortem.edit', name)).toHaveLength(1);
  });

  it('refuses unknown fields and wrong types with 400, naming each problem', async () => {
    const name = pms[1];
    expectError(await patch(name, { severity: 'low' }), 400, 'Invalid request', /severity/);
    expectError(await patch(name, { impact: { users: 5 } }), 400, 'Invalid request', /users/);
    expectError(await patch(name, { impact: { usersAffected: 'many' } }), 400, 'Invalid request', /usersAffected/);
    expectError(await patch(name, { impact: { usersAffected: -1 } }), 400, 'Invalid request', /usersAffected/);
    expectError(await patch(name, { rootCause: { confidence: 1 } }), 400, 'Invalid request', /confidence/);
    expectError(await patch(name, { lessonsLearned: 'one' }), 400, 'Invalid request', /lessonsLearned/);
    expectError(await patch(name, { dataNotes: [] }), 400, 'Invalid request', /dataNotes/);
    expectError(
      await patch(name, { metricSnapshots: [{ name: 'x', value: '1', timestamp: 'now', phase: 'during' }] }),
      400,
      'Invalid request',
      /metricSnapshots/,
    );
    expect(await auditFor('postmortem.edit', name)).toEqual([]);
  });

  it('answers 404 for an unknown name or another namespace, and 403 to viewers', async () => {
    expectError(await patch('PM-19990101-001', { title: 'x' }), 404, 'PostMortem not found');
    expectError(
      await patch(pms[1], { title: 'x' }, api.tokens.operator, '?namespace=default'),
      404,
      'PostMortem not found',
    );
    expectError(await patch(pms[1], { title: 'x' }, api.tokens.viewer), 403, 'Forbidden');
    expect((await getPm(pms[1])).report.title).not.toBe('x');
    expect(await auditFor('postmortem.edit', pms[1])).toEqual([]);
  });

  it('edits in review, and refuses edits of a closed postmortem with 409', async () => {
    const name = pms[2];
    const review = await api.call('POST', `/postmortems/${name}/review`, { body: { reviewer: 'erin' } });
    expect(review.status).toBe(200);
    expect((await patch(name, { lessonsLearned: ['Alert on heap growth'] })).status).toBe(200);
    const closed = await api.call('POST', `/postmortems/${name}/close`, { body: { reviewer: 'frank' } });
    expect(closed.status).toBe(200);
    expectError(
      await patch(name, { lessonsLearned: ['too late'] }),
      409,
      'PostMortem already closed',
      `closed by frank at ${closed.body.status.closedAt}`,
    );
    expect((await getPm(name)).report.lessonsLearned).toEqual(['Alert on heap growth']);
    expect(await auditFor('postmortem.edit', name)).toHaveLength(1);
  });

  it('keeps every field of concurrent edits, and each audit record says what it replaced', async () => {
    const name = pms[3];
    const edits = [
      { title: 'Concurrent title' },
      { summary: 'Concurrent summary' },
      { impact: { usersAffected: 10 } },
      { impact: { revenueImpact: 'about $2k' } },
      { lessonsLearned: ['one'] },
      { rootCause: { description: 'concurrent root cause' } },
    ];
    const results = await Promise.all(edits.map((e) => patch(name, e)));
    expect(results.map((r) => r.status)).toEqual(edits.map(() => 200));
    const { report } = await getPm(name);
    expect(report).toMatchObject({
      title: 'Concurrent title',
      summary: 'Concurrent summary',
      impact: { usersAffected: 10, revenueImpact: 'about $2k' },
      lessonsLearned: ['one'],
      rootCause: { description: 'concurrent root cause' },
    });
    const audited = (await auditFor('postmortem.edit', name)).flatMap(
      (a: { details: { changes: { field: string }[] } }) => a.details.changes.map((c) => c.field),
    );
    expect(audited.filter((f: string) => f !== 'dataNotes').sort()).toEqual(
      [
        'title',
        'summary',
        'impact.usersAffected',
        'impact.revenueImpact',
        'lessonsLearned',
        'rootCause.description',
      ].sort(),
    );

    // The same field edited concurrently: the audit records chain, each from what the last one set.
    const values = ['a', 'b', 'c', 'd'];
    await Promise.all(values.map((v) => patch(name, { impact: { requestsAffected: v } })));
    const chain = (await auditFor('postmortem.edit', name))
      .reverse()
      .flatMap((a: { details: { changes: { field: string; from: unknown; to: unknown }[] } }) => a.details.changes)
      .filter((c: { field: string }) => c.field === 'impact.requestsAffected');
    expect(chain).toHaveLength(values.length);
    chain.forEach((c: { from: unknown }, i: number) => expect(c.from).toBe(i === 0 ? '' : chain[i - 1].to));
    expect((await getPm(name)).report.impact.requestsAffected).toBe(chain[chain.length - 1].to);
  });

  it('reads a report stored before impact was measured as unknown, and edits it', async () => {
    const { report } = await getPm(pms[1]);
    const { dataNotes: _notes, ...legacy } = report;
    const name = 'PM-20220101-901';
    await PostmortemModel.collection.insertOne({
      name,
      incident: 'INC-20220101-901',
      namespace: 'edits',
      state: 'Open',
      author: 'foghorn-ai',
      createdAt: new Date('2022-01-01T00:00:00.000Z'),
      report: {
        ...legacy,
        impact: { usersAffected: 0, requestsAffected: '', revenueImpact: '', slosBreached: [] },
        gitCorrelation: {
          commitSHA: '',
          commitMessage: '',
          author: '',
          timestamp: '',
          confidence: 0,
          filesChanged: [],
        },
      },
    });
    const read = (await getPm(name)).report;
    expect(postmortemReportSchema.strict().parse(read)).toEqual(read);
    expect(read.impact).toMatchObject({ usersAffected: null, podsAffected: null });
    expect(read.dataNotes[0]).toMatch(/^impact\.usersAffected: unknown/);

    const res = await patch(name, { impact: { usersAffected: 0 } });
    expect(res.status).toBe(200);
    expect(res.body.report.impact.usersAffected).toBe(0);
    expect(res.body.report.dataNotes).toEqual(read.dataNotes.slice(1));
    expect((await getPm(name)).report).toEqual(res.body.report);
    const [audit] = await auditFor('postmortem.edit', name);
    expect(audit.details.changes[0]).toEqual({ field: 'impact.usersAffected', from: null, to: 0 });
  });

  it('is in the OpenAPI document: PATCH with a strict body, 200 as GET, 409', async () => {
    const doc = (await api.call('GET', '/openapi.json', { token: null })).body;
    const op = doc.paths['/api/v1/postmortems/{name}'].patch;
    expect(op.description).toBe('Requires role operator or higher.');
    expect(Object.keys(op.responses).sort()).toEqual(
      ['200', '400', '401', '403', '404', '409', '413', '415', '429', '500', '503'].sort(),
    );
    const body = op.requestBody.content['application/json'].schema;
    expect(body.additionalProperties).toBe(false);
    expect(body.properties.impact.additionalProperties).toBe(false);
    expect(body.properties.impact.properties.usersAffected.type).toEqual(['integer', 'null']);
    const report =
      doc.paths['/api/v1/postmortems/{name}'].get.responses['200'].content['application/json'].schema.properties.report;
    expect(report.required).toContain('dataNotes');
    expect(report.properties.impact.properties.usersAffected.type).toEqual(['integer', 'null']);
    expect(report.properties.impact.properties.usersAffected.description).toMatch(/never 0 for unknown/);
    expect(report.properties.gitCorrelation.required).toEqual(expect.arrayContaining(['change', 'reason']));
  });
});
