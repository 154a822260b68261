import { IncidentModel } from '../../store/models';
import { INCIDENT_STATE } from '../../workflows/search-attributes';
import { useStack } from '../harness/stack';

/** The incident lifecycle through the API, with the real workflow, activities and stores. */
describe('incident lifecycle', () => {
  let s: Awaited<ReturnType<typeof useStack>>;
  beforeAll(async () => {
    s = await useStack();
  }, 120_000);
  afterAll(() => s?.stop());

  const signal = (name: string, extra: object = {}) => ({
    resource: `Deployment/${name}`,
    namespace: 'shop',
    signalType: 'OOMKilled',
    severity: 'high',
    description: 'container api was OOMKilled (exit code 137)',
    labels: { app: name, memory_limit: '512Mi' },
    ...extra,
  });
  const get = (path: string) => s.call('GET', path, { token: s.tokens.viewer });
  const untilState = (name: string, state: string) =>
    s.eventually(
      () => get(`/incidents/${name}`),
      (r) => r.body.status?.state === state,
    );

  it('opens an incident, analyses it, matches a runbook and escalates, all on the timeline', async () => {
    const startedAt = new Date(Date.now() - 90_000).toISOString();
    const created = await s.call('POST', '/incidents', {
      token: s.tokens.operator,
      body: signal('checkout', { startedAt }),
    });
    expect(created.status).toBe(201);
    const name = created.body.metadata.name;
    expect(name).toMatch(/^INC-\d{8}-\d{3,}$/);
    expect(created.headers.get('location')).toBe(`/api/v1/incidents/${name}`);
    expect(created.body).toMatchObject({
      kind: 'Incident',
      metadata: { namespace: 'shop', labels: { app: 'checkout' } },
      spec: { resource: 'Deployment/checkout', severity: 'high', detectionSource: 'api', escalationPolicy: 'default' },
      status: { state: 'Detected', riskScore: 65, acknowledged: false, timelineCount: 1 },
    });

    const detail = await untilState(name, 'Escalated');
    expect(detail.body.spec.runbook).toBe('oomkill-raise-memory-limit');
    // What analytics measure phases from: the signal's start, and when the insight was written.
    const stored = await IncidentModel.findOne({ name }).lean();
    expect(stored!.signalStartedAt).toEqual(new Date(startedAt));
    expect(stored!.analyzedAt!.getTime()).toBeGreaterThanOrEqual(stored!.detectedAt.getTime());
    expect(detail.body.status.analysisResult.confidence).toBeGreaterThan(0.5);
    expect(detail.body.status.analysisResult.rootCause).toContain('checkout');

    // Nothing configured: the built-in policy's chat home channel is not set either, and L1 says so.
    const timeline = await s.eventually(
      () => get(`/incidents/${name}/timeline`),
      (r) => r.body.events?.length === 6,
    );
    expect(timeline.body).toMatchObject({ kind: 'IncidentTimeline', metadata: { name, namespace: 'shop' } });
    const types = timeline.body.events.map((e: { type: string }) => e.type);
    expect(types).toEqual(['Detection', 'Analysis', 'Analysis', 'RunbookMatch', 'Escalation', 'Notification']);
    const [detection, started, done, match, , notice] = timeline.body.events;
    expect(notice).toMatchObject({
      source: 'notifier',
      message: expect.stringContaining('No notification channel is configured for L1 of escalation policy default'),
      details: { channel: 'none', level: 1 },
    });
    expect(detection).toMatchObject({ source: 'detector', severity: 'high' });
    expect(started.details).toMatchObject({ model: 'rules-v1', contextSize: expect.any(Number) });
    expect(done.details).toMatchObject({ confidence: expect.any(Number), recommendation: expect.any(String) });
    expect(match.details).toMatchObject({ runbook: 'oomkill-raise-memory-limit', matchScore: expect.any(Number) });
    expect(timeline.body.metadata.eventCount).toBe(6);

    const insights = await get(`/aiinsights?incident=${name}`);
    expect(insights.body.metadata.totalCount).toBe(1);
    expect(insights.body.items[0]).toMatchObject({
      name: expect.stringMatching(/^AI-\d{8}-\d{3,}$/),
      namespace: 'shop',
      issueRef: name,
      provider: 'builtin',
      model: 'rules-v1',
      logAnalysis: '',
      gitOpsContext: 'No cluster evidence: cluster local is not registered with Foghorn.',
    });
    expect(insights.body.items[0].suggestedActions[0]).toMatchObject({
      action: 'AdjustResources',
      params: { memoryLimit: '768Mi' },
    });

    // The triage's activity writes the move; the run publishes it once that activity has answered.
    const published = await s.eventually(
      () => s.client.workflow.getHandle(name).describe(),
      (d) => d.typedSearchAttributes.get(INCIDENT_STATE) === 'Escalated',
    );
    expect(published.typedSearchAttributes.get(INCIDENT_STATE)).toBe('Escalated');
  });

  it('acknowledges once, snoozes with Go durations, resolves once, then writes the postmortem', async () => {
    const { body } = await s.call('POST', '/incidents', { token: s.tokens.operator, body: signal('cart') });
    const name = body.metadata.name;
    await untilState(name, 'Escalated');

    const ack = await s.call('POST', `/incidents/${name}/acknowledge`, {
      token: s.tokens.operator,
      body: { acknowledgedBy: 'team-payments', message: 'looking into it' },
    });
    expect(ack.status).toBe(200);
    expect(ack.body).toEqual({
      apiVersion: 'v1',
      kind: 'Incident',
      metadata: { name, namespace: 'shop' },
      status: {
        state: 'Escalated',
        acknowledged: true,
        acknowledgedBy: 'team-payments',
        acknowledgedAt: expect.any(String),
        message: 'looking into it',
      },
    });
    const again = await s.call('POST', `/incidents/${name}/acknowledge`, {
      token: s.tokens.operator,
      body: { acknowledgedBy: 'bob' },
    });
    expect(again.status).toBe(409);
    expect(again.body.error).toEqual({
      code: 409,
      message: 'Incident already acknowledged',
      details: expect.stringContaining('team-payments'),
    });
    expect(again.body.error.details).toContain(ack.body.status.acknowledgedAt);

    for (const duration of ['5x', '25h', '0s', '-1h', '']) {
      const bad = await s.call('POST', `/incidents/${name}/snooze`, {
        token: s.tokens.operator,
        body: { duration, reason: 'x', snoozedBy: 'bob' },
      });
      expect(bad.status).toBe(400);
      expect(bad.body.error.message).toBe('Invalid duration');
    }
    const snooze = await s.call('POST', `/incidents/${name}/snooze`, {
      token: s.tokens.operator,
      body: { duration: '2h30m', reason: 'deploy window', snoozedBy: 'bob' },
    });
    expect(snooze.status).toBe(200);
    const { snoozedAt, snoozeUntil } = snooze.body.status;
    expect(new Date(snoozeUntil).getTime() - new Date(snoozedAt).getTime()).toBe(150 * 60 * 1000);
    expect(snooze.body.status).toMatchObject({
      state: 'Escalated',
      snoozed: true,
      snoozedBy: 'bob',
      snoozeReason: 'deploy window',
    });

    expect((await s.call('POST', `/incidents/${name}/resolve`, { token: s.tokens.operator, body: {} })).status).toBe(
      404,
    ); // namespace defaults to `default`
    expect(
      (await s.call('POST', `/incidents/${name}/resolve?namespace=shop`, { token: s.tokens.viewer, body: {} })).status,
    ).toBe(403);
    const resolved = await s.call('POST', `/incidents/${name}/resolve?namespace=shop`, {
      token: s.tokens.operator,
      body: {},
    });
    expect(resolved.status).toBe(200);
    expect(resolved.body).toMatchObject({
      kind: 'Incident',
      metadata: {
        name,
        namespace: 'shop',
        annotations: {
          'foghorn.dev/resolved-by': 'operator-user',
          'foghorn.dev/resolved-at': expect.any(String),
          'foghorn.dev/manual-resolution': 'true',
        },
      },
      spec: {
        resourceRef: { kind: 'Deployment', name: 'cart', namespace: 'shop' },
        severity: 'high',
        signalType: 'OOMKilled',
      },
      status: {
        state: 'Resolved',
        resolution: 'Manually resolved via dashboard',
        remediationAttempts: 0,
        escalatedAt: expect.any(String),
      },
    });
    const twice = await s.call('POST', `/incidents/${name}/resolve?namespace=shop`, {
      token: s.tokens.operator,
      body: { resolution: 'again' },
    });
    expect(twice.status).toBe(409);
    expect(twice.body.error).toMatchObject({
      message: 'Incident already resolved',
      details: expect.stringContaining('operator-user'),
    });

    const audit = await s.call('GET', `/audit?resource=${name}`, { token: s.tokens.operator });
    const actions = audit.body.items.map((r: { action: string }) => r.action);
    expect(actions).toEqual(['incident.resolve', 'incident.snooze', 'incident.acknowledge', 'incident.create']);
    expect(audit.body.items[2]).toMatchObject({
      user: 'operator-user',
      role: 'operator',
      resourceType: 'Incident',
      namespace: 'shop',
      details: { message: 'looking into it' },
    });

    const withPostmortem = await s.eventually(
      () => get(`/incidents/${name}/timeline`),
      (r) => r.body.events.some((e: { type: string }) => e.type === 'PostMortemGenerated'),
    );
    const pmEvent = withPostmortem.body.events.find((e: { type: string }) => e.type === 'PostMortemGenerated');
    const pm = await get(`/postmortems/${pmEvent.details.postmortem}`);
    expect(pm.status).toBe(200);
    expect(pm.body.metadata).toMatchObject({ incident: name, author: 'foghorn-ai' });

    // The dedup entry is gone: the same resource opens a new incident.
    const next = await s.call('POST', '/incidents', { token: s.tokens.operator, body: signal('cart') });
    expect(next.status).toBe(201);
    expect(next.body.metadata.name).not.toBe(name);
    const verify = await s.call('GET', '/audit/verify');
    expect(verify.body.status.intact).toBe(true);
  });

  it('folds 50 concurrent identical signals into one incident with 49 correlated signals', async () => {
    const responses = await Promise.all(
      Array.from({ length: 50 }, () =>
        s.call('POST', '/incidents', { token: s.tokens.operator, body: signal('payments', { severity: undefined }) }),
      ),
    );
    expect(responses.filter((r) => r.status !== 200 && r.status !== 201).map((r) => r.text)).toEqual([]);
    expect(responses.filter((r) => r.status === 201)).toHaveLength(1);
    const joined = responses.filter((r) => r.status === 200);
    expect(joined).toHaveLength(49);
    expect(joined.every((r) => r.headers.get('foghorn-deduplicated') === 'true')).toBe(true);
    const names = new Set(responses.map((r) => r.body.metadata.name));
    expect(names.size).toBe(1);
    const [name] = names;

    const timeline = await s.eventually(
      () => get(`/incidents/${name}/timeline`),
      (r) => r.body.events.filter((e: { type: string }) => e.type === 'SignalCorrelated').length >= 49,
    );
    expect(timeline.body.events.filter((e: { type: string }) => e.type === 'SignalCorrelated')).toHaveLength(49);
    const detail = await get(`/incidents/${name}`);
    expect(detail.body.status.riskScore).toBe(100); // 40 + 10 per extra signal, capped
    expect(detail.body.spec.severity).toBe('critical'); // derived from risk when the source named none
    const list = await get('/incidents?resource=Deployment/payments&namespace=shop');
    expect(list.body.metadata.totalCount).toBe(1);

    // Cascade analysis names the other open incidents of the namespace from the last minutes.
    await untilState(name as string, 'Escalated');
    const checkout = (await get('/incidents?resource=Deployment/checkout')).body.items[0].name;
    const insight = (await get(`/aiinsights?incident=${name}`)).body.items[0];
    expect(insight.cascadeAnalysis).toContain(checkout);
  });
});
