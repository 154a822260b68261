import { useLlmServer } from '../harness/llm-server';
import { useStack } from '../harness/stack';

/** The OpenAI-compatible provider, its fallback, Alertmanager ingestion and a worker restart. */
describe('incident analysis with an LLM, alerts, and restarts', () => {
  let llm: Awaited<ReturnType<typeof useLlmServer>>;
  let s: Awaited<ReturnType<typeof useStack>>;
  let answer: { status?: number; content: string };

  const good = {
    analysis: 'The checkout pods exceed their 512Mi limit under the Black Friday load.',
    rootCause: 'Memory limit too low for current traffic on Deployment/checkout',
    confidence: 0.82,
    recommendations: ['Raise the memory limit to 768Mi', 'Add a memory-based HPA'],
    suggestedActions: [
      {
        name: 'raise-limit',
        action: 'AdjustResources',
        description: 'raise the limit',
        params: { memoryLimit: '768Mi' },
      },
    ],
    cascadeAnalysis: '',
    blastRadiusPrediction: '',
  };

  beforeAll(async () => {
    llm = await useLlmServer(() => answer);
    s = await useStack({
      env: { FOGHORN_LLM_BASE_URL: llm.baseUrl, FOGHORN_LLM_MODEL: 'test-model', FOGHORN_LLM_API_KEY: 'sk-test' },
      withoutWorkflowCache: true,
    });
  }, 120_000);
  afterAll(async () => {
    await s?.stop();
    await llm?.stop();
  });

  const open = async (name: string) => {
    const res = await s.call('POST', '/incidents', {
      token: s.tokens.operator,
      body: {
        resource: `Deployment/${name}`,
        namespace: 'shop',
        signalType: 'OOMKilled',
        severity: 'high',
        description: 'OOMKilled',
      },
    });
    expect(res.status).toBe(201);
    return res.body.metadata.name as string;
  };
  const detail = (name: string) => s.call('GET', `/incidents/${name}`);
  const untilState = (name: string, state: string) =>
    s.eventually(
      () => detail(name),
      (r) => r.body.status.state === state,
    );
  const timeline = async (name: string) =>
    (await s.call('GET', `/incidents/${name}/timeline`)).body.events as {
      type: string;
      message: string;
      details?: Record<string, unknown>;
    }[];
  const insight = async (name: string) => (await s.call('GET', `/aiinsights?incident=${name}`)).body.items[0];

  it('uses the model when it answers with valid structured JSON', async () => {
    answer = { content: JSON.stringify(good) };
    const name = await open('checkout');
    await untilState(name, 'Escalated');
    expect(await insight(name)).toMatchObject({
      provider: 'openai-compatible',
      model: 'test-model',
      confidence: 0.82,
      analysis: good.analysis,
    });
    const analysis = (await timeline(name)).filter((e) => e.type === 'Analysis');
    expect(analysis[0].details).toMatchObject({ model: 'test-model', contextSize: expect.any(Number) });
    expect(analysis[1].details).toMatchObject({ confidence: 0.82, recommendation: 'Raise the memory limit to 768Mi' });
    const request = llm.requests.at(-1) as unknown as {
      path: string;
      body: { model: string; response_format: unknown; messages: { content: string }[] };
    };
    expect(request.path).toBe('/v1/chat/completions');
    expect(request.body).toMatchObject({ model: 'test-model', response_format: { type: 'json_object' } });
    expect(request.body.messages[1].content).toContain('Deployment/checkout');
  });

  it.each([
    ['invalid JSON', { content: 'I think it is memory.' }],
    ['JSON that fails validation', { content: JSON.stringify({ ...good, confidence: 7 }) }],
    [
      'an action with bad params',
      {
        content: JSON.stringify({
          ...good,
          suggestedActions: [{ ...good.suggestedActions[0], params: { memoryLimit: 'lots' } }],
        }),
      },
    ],
    ['a server error', { status: 500, content: 'model overloaded' }],
  ])('falls back to the rules analyzer on %s, and the timeline says so', async (_case, reply) => {
    answer = reply;
    const name = await open(`fallback-${llm.requests.length}`);
    await untilState(name, 'Escalated');
    expect(await insight(name)).toMatchObject({ provider: 'builtin', model: 'rules-v1' });
    const done = (await timeline(name)).filter((e) => e.type === 'Analysis')[1];
    expect(done.message).toContain('fell back to the built-in rules analyzer');
    expect(done.details).toMatchObject({ fallback: true, provider: 'builtin' });
  });

  it('survives a worker restart in the middle of analysis', async () => {
    answer = { content: JSON.stringify(good) };
    llm.hold();
    const before = llm.requests.length;
    const name = await open('restart-me');
    await s.eventually(
      async () => llm.requests.length,
      (n) => n > before,
    ); // the analysis activity is waiting on the model
    expect((await detail(name)).body.status.state).toBe('Analyzing');
    await s.restartWorker();
    llm.release();
    // The interrupted attempt is retried once its heartbeat times out (real time: the test
    // server does not skip time while it believes an activity is running).
    const done = await s.eventually(
      () => detail(name),
      (r) => r.body.status.state === 'Escalated',
      90_000,
    );
    expect(done.body.status.insight).toMatch(/^AI-/);
    // The ladder's L1 notice runs beside the incident and may or may not be written yet.
    const lifecycle = (await timeline(name)).filter((e) => e.type !== 'Notification');
    expect(lifecycle.map((e) => e.type)).toEqual(['Detection', 'Analysis', 'Analysis', 'RunbookMatch', 'Escalation']);
  }, 120_000);

  describe('Alertmanager webhook', () => {
    const alert = (status: 'firing' | 'resolved', labels: Record<string, string>, fingerprint: string) => ({
      status,
      labels: { alertname: 'KubePodCrashLooping', severity: 'critical', namespace: 'shop', ...labels },
      annotations: { summary: `crash looping (${fingerprint})` },
      startsAt: '2026-11-21T10:00:00Z',
      endsAt: status === 'resolved' ? '2026-11-21T10:05:00Z' : '0001-01-01T00:00:00Z',
      generatorURL: 'http://prometheus/graph',
      fingerprint,
    });
    const payload = (alerts: unknown[]) => ({
      version: '4',
      groupKey: '{}:{alertname="KubePodCrashLooping"}',
      truncatedAlerts: 0,
      status: 'firing',
      receiver: 'foghorn',
      groupLabels: { alertname: 'KubePodCrashLooping' },
      commonLabels: {},
      commonAnnotations: {},
      externalURL: 'http://alertmanager:9093',
      alerts,
    });
    const send = (alerts: unknown[]) =>
      s.call('POST', '/alerts/alertmanager', { token: s.tokens.operator, body: payload(alerts) });

    it('opens, correlates, reports unmappable alerts and resolves at source before escalation', async () => {
      answer = { content: JSON.stringify(good) };
      llm.hold(); // keep the incident in Analyzing so the source can resolve it
      const first = await send([
        alert('firing', { deployment: 'web' }, 'f1'),
        alert('firing', { deployment: 'web' }, 'f2'),
        alert('firing', {}, 'f3'),
      ]);
      expect(first.status).toBe(202);
      expect(first.body.kind).toBe('AlertIngestResult');
      const [opened, correlated, rejected] = first.body.items;
      expect(opened).toMatchObject({ fingerprint: 'f1', outcome: 'opened', incident: expect.stringMatching(/^INC-/) });
      expect(correlated).toMatchObject({ fingerprint: 'f2', outcome: 'correlated', incident: opened.incident });
      expect(rejected).toMatchObject({
        fingerprint: 'f3',
        outcome: 'rejected',
        reason: expect.stringContaining('no resource label'),
      });

      const incident = (await detail(opened.incident)).body;
      expect(incident.spec).toMatchObject({
        resource: 'Deployment/web',
        severity: 'critical',
        detectionSource: 'alertmanager',
        signalType: 'CrashLoopBackOff',
      });

      const resolved = await send([alert('resolved', { deployment: 'web' }, 'f1')]);
      expect(resolved.body.items[0]).toMatchObject({ outcome: 'resolved', incident: opened.incident });
      llm.release();
      const after = await untilState(opened.incident, 'Resolved');
      expect(after.body.status.resolution).toBe('Resolved at source');
      const annotated = await s.call('GET', `/audit?resource=${opened.incident}&action=incident.resolve`);
      expect(annotated.body.items[0]).toMatchObject({ user: 'system', role: 'system', sourceIP: 'internal' });

      const again = await send([alert('resolved', { deployment: 'web' }, 'f1')]);
      expect(again.body.items[0]).toMatchObject({ outcome: 'no-open-incident' });
    });

    it('leaves an Escalated incident to people when the source resolves it', async () => {
      answer = { content: JSON.stringify(good) };
      const { body } = await send([alert('firing', { statefulset: 'db' }, 'g1')]);
      const name = body.items[0].incident;
      await untilState(name, 'Escalated');
      // The triage writes Escalated to the record; the run knows once it has read the triage's
      // answer, which it shows by starting the ladder. A source resolve before that (a busy
      // worker) still closes the incident: nobody has been paged yet.
      await s.eventually(
        () =>
          s.client.workflow
            .getHandle(`${name}-escalation`)
            .describe()
            .then(
              () => true,
              () => false,
            ),
        (started) => started,
      );
      const resolved = await send([alert('resolved', { statefulset: 'db' }, 'g1')]);
      expect(resolved.body.items[0]).toMatchObject({ outcome: 'kept-escalated', incident: name });
      expect((await detail(name)).body.status.state).toBe('Escalated');
      const events = await s.eventually(
        () => timeline(name),
        (t) => t.some((e) => e.type === 'Escalation' && e.message.includes('resolved at source')),
      );
      expect(events.at(-1)!.type).not.toBe('Resolved');
    });

    it('rejects payloads that are not version 4 with 400', async () => {
      const res = await s.call('POST', '/alerts/alertmanager', {
        token: s.tokens.operator,
        body: { ...payload([alert('firing', { deployment: 'x' }, 'h1')]), version: '3' },
      });
      expect(res.status).toBe(400);
      expect(res.body.error.details).toContain('body.version');
      expect((await s.call('POST', '/alerts/alertmanager', { token: s.tokens.viewer, body: payload([]) })).status).toBe(
        403,
      );
    });
  });
});
