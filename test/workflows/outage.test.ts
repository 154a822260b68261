import type { WorkflowExecutionDescription } from '@temporalio/client';
import { useLlmServer } from '../harness/llm-server';
import { useStack } from '../harness/stack';

const OUTAGE_MS = 3 * 60 * 1000;

/**
 * Issue 8: a MongoDB outage of 3 minutes during analysis must not fail the incident. The
 * MongoDB-wire server (a Java process) is frozen with SIGSTOP while the analysis activity is
 * waiting on the model, so the activity's writes after the model answers hang and fail; its
 * in-memory data survives the SIGCONT. The 3 minutes are workflow time on the time-skipping
 * server: the activity's timeouts and retries run through them.
 */
describe('a MongoDB outage during analysis', () => {
  let llm: Awaited<ReturnType<typeof useLlmServer>>;
  let s: Awaited<ReturnType<typeof useStack>>;

  beforeAll(async () => {
    llm = await useLlmServer(() => ({
      content: JSON.stringify({
        analysis: 'The checkout pods exceed their 512Mi limit.',
        rootCause: 'Memory limit too low on Deployment/checkout',
        confidence: 0.8,
        recommendations: ['Raise the memory limit to 768Mi'],
        suggestedActions: [],
        cascadeAnalysis: '',
        blastRadiusPrediction: '',
      }),
    }));
    s = await useStack({ env: { FOGHORN_LLM_BASE_URL: llm.baseUrl, FOGHORN_LLM_MODEL: 'test-model' } });
  }, 120_000);
  afterAll(async () => {
    await s?.stop();
    await llm?.stop();
  });

  const get = (path: string) => s.call('GET', path, { token: s.tokens.viewer });

  it('lasting 3 minutes: the incident still completes afterwards, and people can act on it', async () => {
    llm.hold();
    const created = await s.call('POST', '/incidents', {
      token: s.tokens.operator,
      body: { resource: 'Deployment/checkout', namespace: 'shop', signalType: 'OOMKilled', severity: 'high' },
    });
    expect(created.status).toBe(201);
    const name = created.body.metadata.name as string;
    await s.eventually(
      async () => llm.requests.length,
      (n) => n > 0,
    ); // the analysis activity is waiting on the model
    expect((await get(`/incidents/${name}`)).body.status.state).toBe('Analyzing');

    const mongo = s.mongo.server.child;
    const startedAt = await s.wf.env.currentTimeMs();
    process.kill(mongo.pid!, 'SIGSTOP');
    let during: WorkflowExecutionDescription | undefined;
    try {
      llm.release(); // the model answers; writing the insight now fails
      await s.wf.env.sleep(OUTAGE_MS);
      during = await s.client.workflow.getHandle(name).describe(); // Temporal's answer, not the store's
    } finally {
      process.kill(mongo.pid!, 'SIGCONT');
    }
    expect((await s.wf.env.currentTimeMs()) - startedAt).toBeGreaterThanOrEqual(OUTAGE_MS);
    // Still running, its triage still being retried as the outage ends: a cap of 5 attempts would
    // fail the workflow for good after about a minute. Asked of Temporal while the store is still
    // down: in the history read afterwards the time-skipping server can leave out the completed
    // triage's ActivityTaskStarted, and with it the attempt to check.
    expect(during!.status.name).toBe('RUNNING');
    const triage = during!.raw.pendingActivities?.find((a) => a.activityType?.name === 'drainAndTriage');
    expect(triage?.attempt).toBeGreaterThan(5);

    const escalated = await s.eventually(
      () => get(`/incidents/${name}`),
      (r) => r.status === 200 && r.body.status.state === 'Escalated',
      120_000,
    );
    expect(escalated.body.status.insight).toMatch(/^AI-/);
    const events = (await get(`/incidents/${name}/timeline`)).body.events as { type: string; details?: object }[];
    // The ladder's L1 notice runs beside the incident and may or may not be written yet; its
    // timestamp is the activity's wall clock, behind the test server's skipped clock here.
    const lifecycle = events.filter((e) => e.type !== 'Notification');
    expect(lifecycle.map((e) => e.type)).toEqual(['Detection', 'Analysis', 'Analysis', 'RunbookMatch', 'Escalation']);
    expect(lifecycle[2].details).toMatchObject({ provider: 'openai-compatible', confidence: 0.8 });

    const ack = await s.call('POST', `/incidents/${name}/acknowledge`, {
      token: s.tokens.operator,
      body: { acknowledgedBy: 'alice', message: 'after the outage' },
    });
    expect(ack.status).toBe(200);
    const resolved = await s.call('POST', `/incidents/${name}/resolve?namespace=shop`, {
      token: s.tokens.operator,
      body: { resolution: 'raised the limit' },
    });
    expect(resolved.status).toBe(200);
    expect(resolved.body.status.state).toBe('Resolved');
    await s.eventually(
      () => get(`/postmortems?incident=${name}`),
      (r) => r.body.metadata?.totalCount === 1,
      60_000,
    );
    // A later alert for the resource opens a new incident: nothing is stuck.
    const next = await s.call('POST', '/incidents', {
      token: s.tokens.operator,
      body: { resource: 'Deployment/checkout', namespace: 'shop', signalType: 'OOMKilled', severity: 'high' },
    });
    expect(next.status).toBe(201);
  }, 360_000);
});
