import { Client, Connection } from '@temporalio/client';
import mongoose from 'mongoose';
import { resourceKey } from '../../domain/incident';
import { signalSchema } from '../../contracts/incidents';
import { useApi } from '../harness/api';
import { freePort } from '../harness/ports';
import { useStack } from '../harness/stack';
import { firingAlert } from '../../bench/fixtures';
import { stopHandOvers } from '../../operations/incident-handover';

/**
 * Ingestion over the states a crash or an outage leaves behind (issue 8): a dedup entry naming a
 * closed workflow, an entry whose record never came, and Temporal unreachable after the record
 * was written. None of them may answer 500, and every alert is accounted for.
 */
describe('ingestion recovers from stale dedup entries and Temporal outages', () => {
  let s: Awaited<ReturnType<typeof useStack>>;
  beforeAll(async () => {
    s = await useStack();
  }, 120_000);
  afterAll(() => s?.stop());

  const dedup = () =>
    mongoose.connection.collection<{ _id: string; incident: string; createdAt: Date }>('dedup_entries');
  const incidents = () => mongoose.connection.collection('incidents');
  const keyOf = (deployment: string) =>
    resourceKey(signalSchema.parse({ resource: `Deployment/${deployment}`, namespace: 'shop', signalType: 'Custom' }));

  const alert = (deployment: string, fingerprint: string) => firingAlert('shop', deployment, fingerprint);
  const send = (deployment: string, fingerprint: string) =>
    s.call('POST', '/alerts/alertmanager', { token: s.tokens.operator, body: alert(deployment, fingerprint) });
  const get = (path: string) => s.call('GET', path, { token: s.tokens.viewer });
  const untilState = (name: string, state: string) =>
    s.eventually(
      () => get(`/incidents/${name}`),
      (r) => r.body.status?.state === state,
      60_000,
    );
  const untilClosed = (name: string) =>
    s.eventually(
      async () => (await s.client.workflow.getHandle(name).describe()).status.name,
      (status) => status !== 'RUNNING',
      60_000,
    );
  const types = async (name: string) =>
    (await get(`/incidents/${name}/timeline`)).body.events.map((e: { type: string }) => e.type) as string[];

  /** An incident for `deployment`, escalated, resolved, its workflow finished (postmortem written). */
  async function resolvedIncident(deployment: string): Promise<string> {
    const opened = await send(deployment, `${deployment}-1`);
    expect(opened.body.items[0].outcome).toBe('opened');
    const name = opened.body.items[0].incident as string;
    await untilState(name, 'Escalated');
    const resolved = await s.call('POST', `/incidents/${name}/resolve?namespace=shop`, {
      token: s.tokens.operator,
      body: { resolution: 'fixed' },
    });
    expect(resolved.status).toBe(200);
    expect(await untilClosed(name)).toBe('COMPLETED');
    expect(await dedup().findOne({ _id: keyOf(deployment) })).toBeNull();
    return name;
  }

  it('a dedup entry left behind by a resolved incident: the next alert opens a new incident', async () => {
    const old = await resolvedIncident('stale-entry');
    // As a crash between the resolve and clearing the entry leaves it.
    await dedup().insertOne({ _id: keyOf('stale-entry'), incident: old, createdAt: new Date() });

    const again = await send('stale-entry', 'stale-entry-2');
    expect(again.status).toBe(202);
    expect(again.body.items[0]).toMatchObject({ outcome: 'opened', incident: expect.any(String) });
    const fresh = again.body.items[0].incident as string;
    expect(fresh).not.toBe(old);
    expect((await dedup().findOne({ _id: keyOf('stale-entry') }))?.incident).toBe(fresh);
    await untilState(fresh, 'Escalated');
    expect((await get(`/incidents/${old}`)).body.status.state).toBe('Resolved');
    expect(await types(old)).not.toContain('SignalCorrelated');

    // The explicit create takes the same path: it joins the new incident.
    const joined = await s.call('POST', '/incidents', {
      token: s.tokens.operator,
      body: { resource: 'Deployment/stale-entry', namespace: 'shop', signalType: 'CrashLoopBackOff' },
    });
    expect(joined.status).toBe(200);
    expect(joined.body.metadata.name).toBe(fresh);
  });

  it('a dedup entry and a stale record (still Escalated) of a finished workflow: a new incident', async () => {
    const old = await resolvedIncident('stale-record');
    // The crash lost the resolve's write as well: the record still says Escalated.
    await incidents().updateOne({ name: old }, { $set: { state: 'Escalated' } });
    await dedup().insertOne({ _id: keyOf('stale-record'), incident: old, createdAt: new Date() });

    // The record looks open, so the signal is queued for it (durable) and answered at once; the
    // hand-over finds its workflow completed, clears the stale entry and ingests the signal again.
    const again = await s.call('POST', '/incidents', {
      token: s.tokens.operator,
      body: { resource: 'Deployment/stale-record', namespace: 'shop', signalType: 'CrashLoopBackOff' },
    });
    expect(again.status).toBe(200);
    expect(again.body.metadata.name).toBe(old);
    const entry = await s.eventually(
      () => dedup().findOne({ _id: keyOf('stale-record') }),
      (e) => e !== null && e.incident !== old,
      60_000,
    );
    const fresh = entry!.incident;
    await untilState(fresh, 'Escalated');
    expect((await get(`/incidents/${fresh}`)).body.spec).toMatchObject({ signalType: 'CrashLoopBackOff' });
    expect(await types(old)).not.toContain('SignalCorrelated');
    expect(await mongoose.connection.collection('signal_inbox').countDocuments({ incident: old })).toBe(0);
  });

  it('an incident whose workflow was terminated unresolved: the alert restarts it and joins it', async () => {
    const opened = await send('terminated', 'terminated-1');
    const name = opened.body.items[0].incident as string;
    await untilState(name, 'Escalated');
    await s.eventually(
      () => types(name),
      (t) => t.includes('Notification'), // the ladder's L1, before anyone acts
    );
    const ack = await s.call('POST', `/incidents/${name}/acknowledge`, {
      token: s.tokens.operator,
      body: { acknowledgedBy: 'alice' },
    });
    expect(ack.status).toBe(200);
    await s.client.workflow.getHandle(name).terminate('operator cleanup gone wrong');
    expect(await untilClosed(name)).toBe('TERMINATED');

    const again = await send('terminated', 'terminated-2');
    expect(again.status).toBe(202);
    expect(again.body.items[0]).toMatchObject({ outcome: 'correlated', incident: name });
    // The hand-over finds the run terminated and starts a new one with the signal.
    await s.eventually(
      async () => (await s.client.workflow.getHandle(name).describe()).status.name,
      (status) => status === 'RUNNING',
      60_000,
    );
    await s.eventually(
      () => types(name),
      (t) => t.includes('SignalCorrelated'),
    );
    // The new run carries the record's state: no second triage, still acknowledged.
    expect(await types(name)).toEqual([
      'Detection',
      'Analysis',
      'Analysis',
      'RunbookMatch',
      'Escalation',
      'Notification', // the built-in policy's L1: no channel configured
      'Acknowledged',
      'SignalCorrelated',
    ]);
    expect((await get(`/incidents/${name}`)).body.status).toMatchObject({ state: 'Escalated', acknowledged: true });
    const twice = await s.call('POST', `/incidents/${name}/acknowledge`, {
      token: s.tokens.operator,
      body: { acknowledgedBy: 'bob' },
    });
    expect(twice.status).toBe(409);
    const resolved = await s.call('POST', `/incidents/${name}/resolve?namespace=shop`, {
      token: s.tokens.operator,
      body: {},
    });
    expect(resolved.status).toBe(200);
    expect(await untilClosed(name)).toBe('COMPLETED');
  });

  it('an incident whose workflow was terminated unresolved: acknowledge restarts it, resolve works', async () => {
    const opened = await send('terminated-ack', 'terminated-ack-1');
    const name = opened.body.items[0].incident as string;
    await untilState(name, 'Escalated');
    await s.eventually(
      () => types(name),
      (t) => t.includes('Notification'), // the ladder's L1, before anyone acts
    );
    await s.client.workflow.getHandle(name).terminate('operator cleanup gone wrong');
    expect(await untilClosed(name)).toBe('TERMINATED');

    const ack = await s.call('POST', `/incidents/${name}/acknowledge`, {
      token: s.tokens.operator,
      body: { acknowledgedBy: 'alice' },
    });
    expect(ack.status).toBe(200);
    expect(ack.body.status).toMatchObject({ state: 'Escalated', acknowledged: true, acknowledgedBy: 'alice' });
    expect((await s.client.workflow.getHandle(name).describe()).status.name).toBe('RUNNING');
    const resolved = await s.call('POST', `/incidents/${name}/resolve?namespace=shop`, {
      token: s.tokens.operator,
      body: {},
    });
    expect(resolved.status).toBe(200);
    expect(await untilClosed(name)).toBe('COMPLETED');
    expect(await types(name)).toEqual([
      'Detection',
      'Analysis',
      'Analysis',
      'RunbookMatch',
      'Escalation',
      'Notification', // the built-in policy's L1: no channel configured
      'Acknowledged',
      'Resolved',
      'PostMortemGenerated',
    ]);
  });

  it('a dedup entry whose record never came: 503 while young, a new incident once it is an orphan', async () => {
    const key = keyOf('orphan');
    await dedup().insertOne({ _id: key, incident: 'INC-20261121-900', createdAt: new Date() });
    const young = await send('orphan', 'orphan-1');
    expect(young.status).toBe(503);
    expect(young.headers.get('retry-after')).toBe('5');
    expect(young.body.error).toMatchObject({ code: 503, message: 'Service unavailable' });

    // A minute later the creator is surely gone (it writes the record right after the entry).
    await dedup().updateOne({ _id: key }, { $set: { createdAt: new Date(Date.now() - 60_000) } });
    const later = await send('orphan', 'orphan-2');
    expect(later.status).toBe(202);
    expect(later.body.items[0]).toMatchObject({ outcome: 'opened' });
    expect(later.body.items[0].incident).not.toBe('INC-20261121-900');
    await untilState(later.body.items[0].incident, 'Escalated');
  });

  describe('Temporal unreachable', () => {
    let offline: Awaited<ReturnType<typeof useApi>>;
    let connection: Connection;
    let client: Client;
    beforeAll(async () => {
      // A real client to an address nothing listens on: every call fails as a stopped server's would.
      connection = Connection.lazy({ address: `127.0.0.1:${await freePort()}` });
      client = new Client({ connection, namespace: s.wf.env.namespace ?? 'default' });
      offline = await useApi({ temporal: client, taskQueue: s.wf.taskQueue, mongo: s.mongo });
    });
    afterAll(async () => {
      await offline?.stop();
      if (client) await stopHandOvers(client);
      await connection?.close();
    });

    it('answers once the record is durable; the workflow starts when Temporal is reachable', async () => {
      const signal = {
        resource: 'Deployment/no-temporal',
        namespace: 'shop',
        signalType: 'OOMKilled',
        severity: 'high',
      };
      // The answer waits for the store only (issue 14): the start is the hand-over's, retried.
      const accepted = await offline.call('POST', '/incidents', { token: offline.tokens.operator, body: signal });
      expect(accepted.status).toBe(201);
      const name = accepted.body.metadata.name as string;
      // The record stays (the reconciler, or a live API's hand-over, starts its workflow) and its creation is audited.
      expect((await get(`/incidents/${name}`)).body.status.state).toBe('Detected');
      const audit = await s.call('GET', `/audit?action=incident.create&resource=${name}`);
      expect(audit.body.metadata.totalCount).toBe(1);

      // The next signal for the resource comes through a live API: it joins, and its hand-over's
      // signal-with-start starts the workflow, which records it.
      const retried = await s.call('POST', '/incidents', { token: s.tokens.operator, body: signal });
      expect(retried.status).toBe(200);
      expect(retried.headers.get('foghorn-deduplicated')).toBe('true');
      expect(retried.body.metadata.name).toBe(name);
      await untilState(name, 'Escalated');
      await s.eventually(
        () => types(name),
        (t) => t.includes('SignalCorrelated'),
      );
    }, 120_000);

    it('the Alertmanager webhook accepts too; a later alert through a live API starts the workflow', async () => {
      const accepted = await offline.call('POST', '/alerts/alertmanager', {
        token: offline.tokens.operator,
        body: alert('no-temporal-am', 'am-1'),
      });
      expect(accepted.status).toBe(202);
      expect(accepted.body.items[0]).toMatchObject({ outcome: 'opened' });
      const retried = await send('no-temporal-am', 'am-1');
      expect(retried.body.items[0]).toMatchObject({ outcome: 'correlated' });
      await untilState(retried.body.items[0].incident, 'Escalated');
    }, 120_000);
  });
});
