import mongoose from 'mongoose';
import { firingAlert } from '../../bench/fixtures';
import { resourceKey } from '../../domain/incident';
import { signalSchema } from '../../contracts/incidents';
import { reconcileSignalInbox } from '../../operations/reconcile';
import { enqueueSignals } from '../../store/signal-inbox';
import { useStack } from '../harness/stack';

/**
 * Storm-proof ingestion (issue 14): a duplicate alert is one insert into its incident's signal
 * inbox, answered without a Temporal call; the workflow is told at most once a second per
 * incident and records every queued signal exactly once, in order; an Alertmanager group is
 * ingested in bulk; what a lost hand-over leaves queued is recorded anyway.
 */
describe('storm-proof ingestion', () => {
  let s: Awaited<ReturnType<typeof useStack>>;
  beforeAll(async () => {
    s = await useStack();
  }, 120_000);
  afterAll(() => s?.stop());

  const inbox = () => mongoose.connection.collection('signal_inbox');
  const get = (path: string) => s.call('GET', path, { token: s.tokens.viewer });
  const timeline = async (name: string) =>
    (await get(`/incidents/${name}/timeline`)).body.events as {
      type: string;
      message: string;
      details?: { index?: number };
    }[];
  const correlatedOf = async (name: string) => (await timeline(name)).filter((e) => e.type === 'SignalCorrelated');
  /** Waits until the incident counts `n` joined signals and its inbox is empty. */
  const untilRecorded = (name: string, n: number) =>
    s.eventually(
      async () => ({
        count: (await get(`/incidents/${name}`)).body.status.correlatedSignals as number,
        queued: await inbox().countDocuments({ incident: name }),
      }),
      (v) => v.count === n && v.queued === 0,
      90_000,
    );
  /** How many times the workflow was signalled of queued signals (from its history). */
  const queuedSignalsOf = async (name: string) => {
    const history = await s.client.workflow.getHandle(name).fetchHistory();
    return (history.events ?? []).filter(
      (e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'signalsQueued',
    ).length;
  };
  const group = (alerts: { deployment: string; fingerprint: string; status?: 'firing' | 'resolved' }[]) => ({
    ...firingAlert('storm', 'x', 'x'),
    alerts: alerts.map((a) => ({
      ...firingAlert('storm', a.deployment, a.fingerprint).alerts[0],
      status: a.status ?? 'firing',
      ...(a.status === 'resolved' && { endsAt: new Date().toISOString() }),
    })),
  });
  const post = (body: object) => s.call('POST', '/alerts/alertmanager', { token: s.tokens.operator, body });
  /** An alert opens an incident for `deployment`; resolves with its name once it is Escalated. */
  const escalatedIncident = async (deployment: string) => {
    const opened = await post(firingAlert('storm', deployment, `${deployment}-0`));
    const name = opened.body.items[0].incident as string;
    await s.eventually(
      () => get(`/incidents/${name}`),
      (r) => r.body.status.state === 'Escalated',
      60_000,
    );
    return name;
  };

  it('a group of many alerts is ingested in bulk: outcomes in order, every duplicate counted once', async () => {
    // 3 resources, 40 alerts each, interleaved as Alertmanager might group them.
    const alerts = Array.from({ length: 120 }, (_, i) => ({ deployment: `bulk-${i % 3}`, fingerprint: `f${i}` }));
    const res = await post(group(alerts));
    expect(res.status).toBe(202);
    const items = res.body.items as { fingerprint: string; outcome: string; incident: string }[];
    expect(items.map((i) => i.fingerprint)).toEqual(alerts.map((a) => a.fingerprint));
    const byResource = new Map<string, Set<string>>();
    items.forEach((item, i) => {
      const key = alerts[i].deployment;
      byResource.set(key, (byResource.get(key) ?? new Set()).add(item.incident));
    });
    // One incident per resource; its first alert opened it, the other 39 joined.
    for (const [deployment, names] of byResource) {
      expect(names.size).toBe(1);
      const mine = items.filter((_, i) => alerts[i].deployment === deployment);
      expect(mine[0].outcome).toBe('opened');
      expect(mine.slice(1).every((i) => i.outcome === 'correlated')).toBe(true);
    }
    for (const names of byResource.values()) {
      const [name] = [...names];
      await untilRecorded(name, 39);
      const events = await correlatedOf(name);
      expect(events).toHaveLength(39);
      expect(events.map((e) => e.details?.index).sort((a, b) => a! - b!)).toEqual(
        Array.from({ length: 39 }, (_, i) => i + 1),
      );
    }
  }, 180_000);

  it('fires and resolves a resource in one group: it ends resolved', async () => {
    const res = await post(
      group([
        { deployment: 'flap', fingerprint: 'flap-1' },
        { deployment: 'flap', fingerprint: 'flap-2' },
        { deployment: 'flap', fingerprint: 'flap-1', status: 'resolved' },
      ]),
    );
    expect(res.status).toBe(202);
    const outcomes = (res.body.items as { outcome: string }[]).map((i) => i.outcome);
    expect(outcomes[0]).toBe('opened');
    expect(outcomes[1]).toBe('correlated');
    expect(['resolved', 'kept-escalated']).toContain(outcomes[2]);
    const name = res.body.items[0].incident as string;
    if (outcomes[2] === 'resolved')
      await s.eventually(
        () => get(`/incidents/${name}`),
        (r) => r.body.status.state === 'Resolved',
      );
  }, 120_000);

  it('a burst of duplicates is told to the workflow coalesced, and recorded exactly once each', async () => {
    const name = await escalatedIncident('burst');
    const started = Date.now();
    const senders = 10;
    const each = 20;
    await Promise.all(
      Array.from({ length: senders }, async (_, sender) => {
        for (let i = 0; i < each; i++) {
          const res = await post(firingAlert('storm', 'burst', `b-${sender}-${i}`));
          expect(res.status).toBe(202);
          expect(res.body.items[0]).toMatchObject({ outcome: 'correlated', incident: name });
        }
      }),
    );
    const seconds = (Date.now() - started) / 1000;
    await untilRecorded(name, senders * each);
    expect(await correlatedOf(name)).toHaveLength(senders * each);
    // At most one signal per incident per second (plus the window's edges), not one per alert.
    const told = await queuedSignalsOf(name);
    expect(told).toBeGreaterThanOrEqual(1);
    expect(told).toBeLessThanOrEqual(Math.ceil(seconds) + 2);
    expect(told).toBeLessThan(senders * each);
  }, 180_000);

  it('signals whose hand-over was lost are recorded: by the reconciler, and before the postmortem', async () => {
    const name = await escalatedIncident('lost');
    // As an API that crashed right after its inserts (and its 202s) leaves them: queued, untold.
    const lost = (n: number) =>
      enqueueSignals(
        name,
        Array.from({ length: n }, () => ({
          signalType: 'CrashLoopBackOff',
          description: 'lost hand-over',
          source: 'alertmanager',
          labels: {},
          at: new Date(),
        })),
      );
    await lost(3);
    const repairs = await reconcileSignalInbox({ client: s.client, taskQueue: s.wf.taskQueue, graceMs: 0 });
    expect(repairs).toEqual([expect.objectContaining({ kind: 'incident-signals-told', subject: name })]);
    await untilRecorded(name, 3);

    // Two more are lost; nobody tells the workflow. The resolve records them before the postmortem.
    await lost(2);
    const resolved = await s.call('POST', `/incidents/${name}/resolve?namespace=storm`, {
      token: s.tokens.operator,
      body: { resolution: 'fixed' },
    });
    expect(resolved.status).toBe(200);
    await s.eventually(
      async () => (await s.client.workflow.getHandle(name).describe()).status.name,
      (status) => status === 'COMPLETED',
      60_000,
    );
    expect(await inbox().countDocuments({ incident: name })).toBe(0);
    const events = await timeline(name);
    expect(events.filter((e) => e.type === 'SignalCorrelated')).toHaveLength(5);
    const types = events.map((e) => e.type);
    expect(types.lastIndexOf('SignalCorrelated')).toBeLessThan(types.indexOf('PostMortemGenerated'));
    expect((await get(`/incidents/${name}`)).body.status.correlatedSignals).toBe(5);
  }, 180_000);

  it('signals queued for an incident that turned out closed open a new incident', async () => {
    const name = await escalatedIncident('closed');
    await s.call('POST', `/incidents/${name}/resolve?namespace=storm`, { token: s.tokens.operator, body: {} });
    await s.eventually(
      async () => (await s.client.workflow.getHandle(name).describe()).status.name,
      (status) => status === 'COMPLETED',
      60_000,
    );
    // A crash lost both the resolve's writes: the record still looks open and names the resource.
    const key = resourceKey(
      signalSchema.parse({ resource: 'Deployment/closed', namespace: 'storm', signalType: 'Custom' }),
    );
    await mongoose.connection.collection('incidents').updateOne({ name }, { $set: { state: 'Escalated' } });
    await mongoose.connection
      .collection<{ _id: string; incident: string; createdAt: Date }>('dedup_entries')
      .insertOne({ _id: key, incident: name, createdAt: new Date() });

    const again = await post(firingAlert('storm', 'closed', 'c-1'));
    expect(again.body.items[0]).toMatchObject({ outcome: 'correlated', incident: name });
    const entry = await s.eventually(
      () => mongoose.connection.collection<{ _id: string; incident: string }>('dedup_entries').findOne({ _id: key }),
      (e) => e !== null && e.incident !== name,
      60_000,
    );
    // The old inbox is emptied after the signal is ingested again (never before: nothing lost).
    await s.eventually(
      () => inbox().countDocuments({ incident: name }),
      (queued) => queued === 0,
      60_000,
    );
    expect(await correlatedOf(name)).toHaveLength(0);
    await s.eventually(
      () => get(`/incidents/${entry!.incident}`),
      (r) => r.body.status?.state === 'Escalated',
      60_000,
    );
  }, 180_000);

  it('a resource resolved through the API opens a new incident at once, though its incident was just joined', async () => {
    const name = await escalatedIncident('resolved-now');
    // A duplicate joins it; the resolve must leave nothing behind that joins it again.
    expect((await post(firingAlert('storm', 'resolved-now', 'r-1'))).body.items[0]).toMatchObject({
      outcome: 'correlated',
      incident: name,
    });
    const resolved = await s.call('POST', `/incidents/${name}/resolve?namespace=storm`, {
      token: s.tokens.operator,
      body: {},
    });
    expect(resolved.status).toBe(200);
    const next = (await post(firingAlert('storm', 'resolved-now', 'r-2'))).body.items[0];
    expect(next.outcome).toBe('opened');
    expect(next.incident).not.toBe(name);
  }, 180_000);
});
