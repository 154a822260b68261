import { MockActivityEnvironment } from '@temporalio/testing';
import mongoose from 'mongoose';
import { categoryRunbooks, createIncidentSteps } from '../../activities/incidents';
import { createRemediationSteps } from '../../activities/remediation';
import { createIncidentStageActivities, type Triage } from '../../activities/incident-stages';
import { createNotificationSteps } from '../../activities/notifications';
import { createPostmortemActivities } from '../../activities/postmortem';
import { parseConfig } from '../../config/env';
import { runbookSpecSchema } from '../../contracts/runbooks';
import type { SignalType } from '../../domain/vocabulary';
import { SYSTEM_ACTOR } from '../../domain/incident-requests';
import { PLAN_ABANDONED_RESULT } from '../../domain/remediation';
import { listAudit } from '../../store/audit';
import { getIncident, getTimeline, openOrJoin, updateIncident } from '../../store/incidents';
import { getInsightByIncident } from '../../store/insights';
import { getPlan } from '../../store/remediations';
import { createRunbook } from '../../store/runbooks';
import { enqueueSignals, queuedSignals } from '../../store/signal-inbox';
import { useLlmServer } from '../harness/llm-server';
import { useMongo } from '../harness/mongo';
import { eventually } from '../harness/eventually';

/**
 * An incident's opening and closing stages, one activity each (workflows/incident/triage.ts and
 * close.ts), against the real store: each writes its records in order, once however often it
 * is retried.
 */
describe('incident stages', () => {
  let mongo: Awaited<ReturnType<typeof useMongo>>;
  /** The stages as the worker wires them, with the postmortem step given. */
  const stagesWith = (postmortems: Parameters<typeof createIncidentStageActivities>[2]) =>
    createIncidentStageActivities(
      createIncidentSteps({ annotationPrefix: 'foghorn.dev' }),
      createRemediationSteps(parseConfig({}), false),
      postmortems,
      createNotificationSteps(parseConfig({ FOGHORN_WEBHOOK_HOME_CHANNEL: 'ops' })).escalation,
    );
  const stages = stagesWith(createPostmortemActivities());
  type Triaged = Promise<Triage | null>;
  /** The triage alone: drainAndTriage with an empty inbox, its answer's `triage`. */
  const triageIncident = async (input: { name: string; at: string; escalate?: boolean; prepareFirstPlan?: boolean }) =>
    ((await stages.drainAndTriage({ ...input, firstIndex: 0 })) as { triage: Triage | null }).triage;
  beforeAll(async () => {
    mongo = await useMongo();
    const spec = runbookSpecSchema.parse({
      version: '1.0.0',
      name: 'triage-custom-fix',
      description: 'test runbook',
      category: 'custom',
      automated: true,
      severity: ['low'],
      targets: { signalTypes: ['Custom'], resourceKinds: ['Deployment'] },
      steps: [{ type: 'Wait', params: { duration: '1s' } }],
    });
    expect((await createRunbook(spec)).created).toBe(true);
    // Matches HighLatency, but needs the Kubernetes API of a cluster Foghorn cannot reach: nothing to try.
    const restart = runbookSpecSchema.parse({
      version: '1.0.0',
      name: 'triage-restart',
      description: 'test runbook',
      category: 'latency',
      automated: true,
      severity: ['low'],
      targets: { signalTypes: ['HighLatency'], resourceKinds: ['Deployment'] },
      steps: [{ type: 'RestartDeployment', params: { deployment: '{{deployment}}', namespace: '{{namespace}}' } }],
    });
    expect((await createRunbook(restart)).created).toBe(true);
  });
  afterAll(() => mongo?.stop());

  const open = async (resource: string, signalType: SignalType = 'Custom') =>
    (
      await openOrJoin({
        resource,
        namespace: 'shop',
        signalType,
        severity: 'low',
        description: 'test',
        cluster: 'local',
        labels: {},
        detectionSource: 'api',
      })
    ).incident.name;

  /** An incident resolved by a person, for the close. */
  const openResolved = async (resource: string) => {
    const name = await open(resource);
    await updateIncident(name, { state: 'Resolved', resolvedAt: new Date(), resolvedBy: 'alice' });
    return name;
  };
  /** A duplicate alert as the inbox holds it. */
  const signal = (i: number) => ({
    signalType: 'Custom',
    severity: 'low',
    description: `again ${i}`,
    source: 'alertmanager',
    labels: {},
    at: new Date(),
  });

  it('moves the incident to Analyzing, analyses it, matches its runbook and returns its options', async () => {
    const name = await open('Deployment/checkout');
    const at = new Date().toISOString();
    const options = await new MockActivityEnvironment().run(triageIncident, { name, at });

    expect(options).toMatchObject({
      maxAttempts: expect.any(Number),
      deployment: true,
      llm: false,
      runbooks: [{ name: 'triage-custom-fix', usesKubernetes: false }],
    });
    const incident = await getIncident(name);
    expect(incident).toMatchObject({ state: 'Analyzing', runbook: 'triage-custom-fix' });
    expect(incident?.insight).toMatch(/^AI-/);
    const types = (await getTimeline(name)).map((e) => e.type);
    expect(types).toEqual(['Detection', 'Analysis', 'Analysis', 'RunbookMatch']);

    // A retry (the same activity's keys, its next attempt) writes nothing twice.
    const env = new MockActivityEnvironment({ attempt: 2 });
    await env.run(triageIncident, { name, at });
    await env.run(triageIncident, { name, at });
    expect((await getTimeline(name)).map((e) => e.type)).toEqual(types);
  });

  it('reads the incident only through its writes, the runbooks once and the insight not at all: the options as read afresh', async () => {
    const name = await open('Deployment/basket');
    const reads: string[] = [];
    mongoose.set('debug', (collection: string, method: string) => {
      if (/^find/.test(method)) reads.push(`${collection}.${method}`);
    });
    let options;
    try {
      options = await new MockActivityEnvironment().run(triageIncident, { name, at: new Date().toISOString() });
    } finally {
      mongoose.set('debug', false);
    }
    const count = (read: string) => reads.filter((r) => r === read).length;
    // A first attempt does not look for a stored insight: only a retry can find one.
    expect([count('incidents.findOne'), count('runbooks.find'), count('aiinsights.findOne')]).toEqual([0, 1, 0]);
    // What the options are when everything is read afresh.
    const incident = (await getIncident(name))!;
    const afresh = createRemediationSteps(parseConfig({}), false).options(
      incident,
      await categoryRunbooks(incident),
      await getInsightByIncident(name),
    );
    expect(options).toEqual(await afresh);
  });

  it('does nothing for an incident resolved before it began', async () => {
    const name = await open('Deployment/payments');
    await updateIncident(name, { state: 'Resolved', resolvedAt: new Date() });

    expect(await new MockActivityEnvironment().run(triageIncident, { name, at: new Date().toISOString() })).toBeNull();
    const incident = await getIncident(name);
    expect(incident?.state).toBe('Resolved');
    expect(incident?.insight).toBeFalsy();
    expect((await getTimeline(name)).map((e) => e.type)).toEqual(['Detection']);
  });

  it('with `escalate`, escalates an incident with nothing to try as the workflow would: the policy with the move, then L1', async () => {
    const name = await open('Deployment/ledger', 'HighLatency');
    const at = new Date().toISOString();
    // Its own run: timeline keys are the activity's (the other tests' runs share the default ids).
    const env = new MockActivityEnvironment({ workflowExecution: { workflowId: name, runId: 'run-1' } });
    const triage = () => env.run(triageIncident, { name, at, escalate: true }) as Triaged;
    const triaged = await triage();

    expect(triaged?.escalated).toEqual({
      message: 'No automatic remediation strategy is available; escalated to on-call',
      none: false,
      ladder: { policy: 'default', escalateAfterMs: [300_000, 600_000, 1_800_000], repeat: { everyMs: 1_800_000 } },
      level1: [expect.objectContaining({ channel: 'chat', target: 'ops', stateful: false })],
    });
    expect(await getIncident(name)).toMatchObject({
      state: 'Escalated',
      escalationPolicy: 'default',
      escalatedAt: expect.any(Date),
    });
    const events = await getTimeline(name);
    expect(events.map((e) => e.type)).toEqual(['Detection', 'Analysis', 'Analysis', 'RunbookMatch', 'Escalation']);
    expect(events.at(-1)).toMatchObject({
      source: 'escalation-engine',
      message: 'No automatic remediation strategy is available; escalated to on-call',
    });

    // A retry escalates again to the same place and writes nothing twice.
    expect(await triage()).toEqual(triaged);
    expect((await getTimeline(name)).map((e) => e.type)).toEqual(events.map((e) => e.type));
  });

  it('with `escalate`, leaves an incident with a plan to try to the remediation engine', async () => {
    const name = await open('Deployment/orders');
    const triaged = await (new MockActivityEnvironment().run(triageIncident, {
      name,
      at: new Date().toISOString(),
      escalate: true,
    }) as Triaged);
    expect(triaged).not.toHaveProperty('escalated');
    expect(triaged?.runbooks).toEqual([expect.objectContaining({ name: 'triage-custom-fix' })]);
    expect((await getIncident(name))?.state).toBe('Analyzing');
  });

  it('opens a new incident: Analyzing, the signals waiting in its inbox, then the triage', async () => {
    const name = await open('Deployment/ledger');
    await enqueueSignals(name, [signal(1), signal(2)]);
    const at = new Date().toISOString();

    const opened = (await new MockActivityEnvironment().run(stages.drainAndTriage, { name, at, firstIndex: 0 })) as {
      drained: number;
      triage: unknown;
    };
    expect(opened).toEqual({ drained: 2, triage: expect.objectContaining({ runbooks: expect.any(Array) }) });
    expect(await queuedSignals(name, 10)).toEqual([]);
    expect(await getIncident(name)).toMatchObject({ state: 'Analyzing', correlatedSignalCount: 2 });
    const types = (await getTimeline(name)).map((e) => e.type);
    expect(types.filter((t) => t === 'SignalCorrelated')).toHaveLength(2);
    expect(types).toEqual(expect.arrayContaining(['Analysis', 'RunbookMatch']));
    // What triageIncident answers for the same incident.
    expect(opened.triage).toEqual(await new MockActivityEnvironment().run(triageIncident, { name, at }));
  });

  it('opens nothing of an incident resolved before it began: its inbox is left to the close', async () => {
    const name = await open('Deployment/billing');
    await updateIncident(name, { state: 'Resolved', resolvedAt: new Date() });
    await enqueueSignals(name, [signal(1)]);

    expect(
      await new MockActivityEnvironment().run(stages.drainAndTriage, {
        name,
        at: new Date().toISOString(),
        firstIndex: 0,
      }),
    ).toEqual({ drained: 0, triage: null });
    expect(await queuedSignals(name, 10)).toHaveLength(1);
    expect((await getTimeline(name)).map((e) => e.type)).toEqual(['Detection']);
  });

  it('ends the first plan an earlier attempt made when its retry finds the incident resolved', async () => {
    const name = await open('Deployment/abandoned');
    const input = { name, at: new Date().toISOString(), firstIndex: 0, prepareFirstPlan: true };
    // The first attempt made the plan, then died before it answered (a kill of the worker).
    const { triage } = (await new MockActivityEnvironment().run(stages.drainAndTriage, input)) as {
      triage: Awaited<Triaged>;
    };
    const plan = triage!.firstPlan!;
    expect((await getPlan(plan.name))?.state).toBe('Executing'); // a Wait, no approval: its first state
    // A person resolved it meanwhile: the retry returns nothing, and the plan ends as the
    // workflow's abandon would end it, once however often it is retried.
    await updateIncident(name, { state: 'Resolved', resolvedAt: new Date(), resolvedBy: 'alice' });
    const retry = new MockActivityEnvironment({ attempt: 2 });
    expect(await retry.run(stages.drainAndTriage, input)).toEqual({ drained: 0, triage: null });
    await retry.run(stages.drainAndTriage, input);
    expect(await getPlan(plan.name)).toMatchObject({ state: 'Failed', result: PLAN_ABANDONED_RESULT });
    const ends = (await getTimeline(name)).filter((e) => e.type === 'RemediationFailed');
    expect(ends.map((e) => e.message)).toEqual([`${plan.name} Failed: ${PLAN_ABANDONED_RESULT}`]);

    // A first attempt that finds its incident resolved made no plan: there is nothing to end.
    const other = await openResolved('Deployment/abandoned-first');
    expect(await new MockActivityEnvironment().run(triageIncident, { name: other, at: input.at })).toBeNull();
  });

  it('opens on counting after a failed attempt: what the first drained and what came since', async () => {
    const name = await open('Deployment/invoices');
    await enqueueSignals(name, [signal(1), signal(2), signal(3)]);
    const at = new Date().toISOString();

    // The first attempt drains three, then its triage fails.
    const remediation = createRemediationSteps(parseConfig({}), false);
    const failing = createIncidentStageActivities(
      createIncidentSteps({ annotationPrefix: 'foghorn.dev' }),
      {
        ...remediation,
        options: async () => {
          throw new Error('store unavailable');
        },
      },
      createPostmortemActivities(),
      createNotificationSteps(parseConfig({})).escalation,
    );
    const first = new MockActivityEnvironment();
    const beats: unknown[] = [];
    first.on('heartbeat', (details: unknown) => beats.push(details));
    await expect(first.run(failing.drainAndTriage, { name, at, firstIndex: 0 })).rejects.toThrow('store unavailable');
    expect(beats.at(-1)).toEqual({ drained: 3 });

    // Two more arrive before the retry, which starts from the last heartbeat's progress.
    await enqueueSignals(name, [signal(4), signal(5)]);
    const retry = new MockActivityEnvironment({ attempt: 2, heartbeatDetails: beats.at(-1) });
    expect(await retry.run(stages.drainAndTriage, { name, at, firstIndex: 0 })).toMatchObject({ drained: 5 });
    expect(await getIncident(name)).toMatchObject({ correlatedSignalCount: 5 });
    expect((await getTimeline(name)).filter((e) => e.type === 'SignalCorrelated')).toHaveLength(5);
  });

  it('counts on after a drain whose answer was lost: what it recorded and removed is not taken for what came next', async () => {
    const name = await open('Deployment/reviews');
    const { drainSignalInbox } = createIncidentSteps({ annotationPrefix: 'foghorn.dev' });
    const drain = (firstIndex: number) =>
      new MockActivityEnvironment().run(drainSignalInbox, { name, firstIndex, afterResolution: false, limit: 500 });
    await enqueueSignals(name, [signal(1), signal(2), signal(3)]);
    expect(await drain(0)).toEqual({ recorded: 3 });

    // Its caller never heard (a worker lost with the completion): the next drain starts from 0 again.
    await enqueueSignals(name, [signal(4), signal(5)]);
    expect(await drain(0)).toEqual({ recorded: 2 });
    expect(await getIncident(name)).toMatchObject({ correlatedSignalCount: 5 });
    const joined = (await getTimeline(name)).filter((e) => e.type === 'SignalCorrelated');
    expect(joined.map((e) => [e.message, e.details?.index])).toEqual(
      [1, 2, 3, 4, 5].map((i) => [`Custom joined this incident: again ${i}`, i]),
    );
  });

  it('records the signals that join while a slow analysis runs, as they come, and labels those after a resolution', async () => {
    const answer = {
      analysis: 'The catalog pods restart.',
      rootCause: 'A bad release of Deployment/catalog',
      confidence: 0.7,
      recommendations: ['Roll back'],
      suggestedActions: [],
      cascadeAnalysis: '',
      blastRadiusPrediction: '',
    };
    const llm = await useLlmServer(() => ({ content: JSON.stringify(answer) }));
    const withModel = createIncidentStageActivities(
      createIncidentSteps({
        annotationPrefix: 'foghorn.dev',
        llm: { baseUrl: llm.baseUrl, apiKey: 'sk-test', model: 'test-model' },
      }),
      createRemediationSteps(parseConfig({}), false),
      createPostmortemActivities(),
      createNotificationSteps(parseConfig({})).escalation,
    );
    const joined = async (name: string) =>
      (await getTimeline(name)).filter((e) => e.type === 'SignalCorrelated').map((e) => e.message);
    let opening: Promise<{ drained: number }> | undefined;
    try {
      const name = await open('Deployment/catalog');
      llm.hold();
      const env = new MockActivityEnvironment();
      const beats: unknown[] = [];
      env.on('heartbeat', (details: unknown) => beats.push(details));
      let answered = false;
      opening = (
        env.run(withModel.drainAndTriage, { name, at: new Date().toISOString(), firstIndex: 0 }) as Promise<{
          drained: number;
        }>
      ).finally(() => (answered = true));
      await eventually(
        async () => llm.requests.length,
        (n) => n === 1,
      ); // the analysis waits on the model

      await enqueueSignals(name, [signal(1), signal(2)]);
      expect(
        await eventually(
          () => joined(name),
          (m) => m.length === 2,
        ),
      ).toEqual(['Custom joined this incident: again 1', 'Custom joined this incident: again 2']);
      // A person resolves it while the model still thinks: what comes next says so.
      await updateIncident(name, { state: 'Resolved', resolvedAt: new Date(), resolvedBy: 'alice' });
      await enqueueSignals(name, [signal(3)]);
      expect(
        (
          await eventually(
            () => joined(name),
            (m) => m.length === 3,
          )
        )[2],
      ).toBe('Custom joined this incident: again 3 (arrived after resolution)');
      expect(answered).toBe(false);
      // The look heartbeats its progress once it has also removed what it recorded.
      expect(
        await eventually(
          async () => beats,
          (b) => b.some((d) => (d as { drained: number }).drained === 3),
        ),
      ).toContainEqual({
        drained: 3,
      });

      llm.release();
      expect(await opening).toMatchObject({ drained: 3 });
      expect(await getIncident(name)).toMatchObject({ state: 'Resolved', correlatedSignalCount: 3 });
      expect(await queuedSignals(name, 10)).toEqual([]);
    } finally {
      // The activity ends before the store does (afterAll), whatever failed above.
      llm.release();
      await opening?.catch(() => undefined);
      await llm.stop();
    }
  });

  it('closes a resolved incident: queued signals, the postmortem, then signals queued meanwhile', async () => {
    const name = await openResolved('Deployment/search');
    await enqueueSignals(name, [signal(1), signal(2), signal(3)]);

    // A fourth arrives while the postmortem is written.
    const { generatePostmortem } = createPostmortemActivities();
    const { closeIncident } = stagesWith({
      generatePostmortem: async (input) => {
        await enqueueSignals(name, [signal(4)]);
        return generatePostmortem(input);
      },
    });

    const env = new MockActivityEnvironment();
    const closed = (await env.run(closeIncident, { name, firstIndex: 0 })) as { postmortem: string };
    expect(closed).toEqual({ recorded: 4, postmortem: expect.stringMatching(/^PM-/) });
    expect(await queuedSignals(name, 10)).toEqual([]);
    const events = await getTimeline(name);
    // (The timeline orders by time: the fourth's event carries its own, before the postmortem's.)
    const count = (type: string) => events.filter((e) => e.type === type).length;
    expect([count('SignalCorrelated'), count('PostMortemGenerated')]).toEqual([4, 1]);
    expect(events.some((e) => e.type === 'SignalCorrelated' && /again 4/.test(e.message))).toBe(true);
    expect(await getIncident(name)).toMatchObject({ postmortem: closed.postmortem, correlatedSignalCount: 4 });

    // A retry finds nothing left to record and the same postmortem.
    expect(await env.run(stages.closeIncident, { name, firstIndex: 4 })).toEqual({
      recorded: 0,
      postmortem: closed.postmortem,
    });
    expect(await getTimeline(name)).toHaveLength(events.length);
  });

  it('with `resolve`, writes the resolve the workflow decided first, once however often it is retried', async () => {
    const name = await open('Deployment/checkout');
    const previousState = (await getIncident(name))!.state;
    await enqueueSignals(name, [signal(1)]);
    const at = new Date().toISOString();
    const resolve = {
      name,
      at,
      request: { resolution: 'Remediated automatically', actor: SYSTEM_ACTOR, atSource: false, automatic: true },
    };

    // The first attempt resolves and drains, then its postmortem fails: the retry writes neither again.
    const failing = stagesWith({
      generatePostmortem: async () => {
        throw new Error('store unavailable');
      },
    });
    const first = new MockActivityEnvironment();
    const beats: unknown[] = [];
    first.on('heartbeat', (details: unknown) => beats.push(details));
    await expect(first.run(failing.closeIncident, { name, firstIndex: 0, resolve })).rejects.toThrow(
      'store unavailable',
    );
    expect(await getIncident(name)).toMatchObject({
      state: 'Resolved',
      resolvedBy: 'system',
      resolvedAt: new Date(at),
    });
    const retry = new MockActivityEnvironment({ attempt: 2, heartbeatDetails: beats.at(-1) });
    const closed = (await retry.run(stages.closeIncident, { name, firstIndex: 0, resolve })) as {
      postmortem: string;
    };
    expect(closed).toEqual({ recorded: 1, postmortem: expect.stringMatching(/^PM-/) });

    const events = await getTimeline(name);
    const types = events.map((e) => e.type);
    expect(types.filter((t) => t === 'Resolved')).toHaveLength(1);
    expect(types.indexOf('Resolved')).toBeLessThan(types.indexOf('PostMortemGenerated'));
    expect(events.find((e) => e.type === 'Resolved')).toMatchObject({ source: 'remediation-engine' });
    const audited = await listAudit({ action: 'incident.resolve', resource: name }, 1, 10);
    expect(audited.items).toHaveLength(1);
    expect(audited.items[0]).toMatchObject({ user: 'system', details: { previousState, manual: false } });
    expect(await getIncident(name)).toMatchObject({
      postmortem: closed.postmortem,
      annotations: expect.objectContaining({
        'foghorn.dev/resolved-by': 'system',
        'foghorn.dev/manual-resolution': 'false',
      }),
    });
  });

  it('goes on counting after a failed attempt: signals queued meanwhile are counted too', async () => {
    const name = await openResolved('Deployment/cart');
    await enqueueSignals(name, [signal(1), signal(2), signal(3)]);

    // The first attempt drains three, then its postmortem fails.
    const failing = stagesWith({
      generatePostmortem: async () => {
        throw new Error('store unavailable');
      },
    });
    const first = new MockActivityEnvironment();
    const beats: unknown[] = [];
    first.on('heartbeat', (details: unknown) => beats.push(details));
    await expect(first.run(failing.closeIncident, { name, firstIndex: 0 })).rejects.toThrow('store unavailable');
    expect(beats.at(-1)).toEqual({ recorded: 3 });

    // Two more arrive before the retry, which starts from the last heartbeat's progress.
    await enqueueSignals(name, [signal(4), signal(5)]);
    const retry = new MockActivityEnvironment({ attempt: 2, heartbeatDetails: beats.at(-1) });
    expect(await retry.run(stages.closeIncident, { name, firstIndex: 0 })).toEqual({
      recorded: 5,
      postmortem: expect.stringMatching(/^PM-/),
    });
    expect(await getIncident(name)).toMatchObject({ correlatedSignalCount: 5 });
    expect((await getTimeline(name)).filter((e) => e.type === 'SignalCorrelated')).toHaveLength(5);
  });
});
