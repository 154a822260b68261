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
import { InsightModel } from '../../store/models';
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

  it('leaves the fields it has no data for empty', async () => {
    const { report } = await getPm(pm);
    expect(report).toMatchObject({
      impact: { usersAffected: 0, requestsAffected: '', revenueImpact: '', slosBreached: [] },
      remediationApplied: { runbook: '', steps: [], result: '' },
      metricSnapshots: [],
      gitCorrelation: { commitSHA: '', commitMessage: '', author: '', timestamp: '', confidence: 0, filesChanged: [] },
    });
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
