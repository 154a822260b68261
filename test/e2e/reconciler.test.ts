import { Client, Connection } from '@temporalio/client';
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import path from 'path';
import { saveChatMessage } from '../../store/chat';
import { connectMongo, disconnectMongo } from '../../store/connection';
import { DedupEntryModel, IncidentModel, ChatMessage } from '../../store/models';
import { devEnv, startDev, stopDev, waitReady, type DevProcess } from '../harness/dev-process';
import { eventually } from '../harness/eventually';

/**
 * The reconciler against the real `foghorn dev` (Temporal dev server: schedules and visibility),
 * each broken state made for real in MongoDB or Temporal as a crash between two writes leaves it.
 */
describe('reconciler (foghorn dev, schedule every 2s)', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'foghorn-reconcile-'));
  let dev: DevProcess;
  let temporal: Client;
  let headers: Record<string, string>;

  beforeAll(async () => {
    const env = await devEnv(dataDir);
    dev = await startDev({ ...env, FOGHORN_RECONCILE_INTERVAL: '2s', FOGHORN_RECONCILE_GRACE: '2s' });
    await waitReady(dev.api);
    headers = { authorization: `Bearer ${dev.token}`, 'content-type': 'application/json' };
    await connectMongo(/MongoDB:\s+(\S+)/.exec(dev.output())![1]);
    temporal = new Client({
      connection: await Connection.connect({ address: `127.0.0.1:${env.FOGHORN_TEMPORAL_PORT}` }),
    });
  }, 180_000);
  afterAll(async () => {
    await disconnectMongo();
    await temporal?.connection.close();
    if (dev) await stopDev(dev);
    rmSync(dataDir, { recursive: true, force: true });
  });

  const api = async (method: string, p: string, body?: unknown) => {
    const res = await fetch(dev.api + p, {
      method,
      headers,
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json().catch(() => undefined)) as any }; // eslint-disable-line @typescript-eslint/no-explicit-any
  };
  /** Polls until `ok` holds: the reconciler's rounds take up to 90 s to repair a state. */
  const reconciled = <T>(probe: () => Promise<T>, ok: (v: T) => boolean) => eventually(probe, ok, 90_000);
  const open = async (deployment: string) => {
    const res = await api('POST', '/incidents', {
      resource: `Deployment/${deployment}`,
      namespace: 'rec',
      signalType: 'CrashLoopBackOff',
      severity: 'high',
      description: 'crash looping',
    });
    expect(res.status).toBe(201);
    return res.body.metadata.name as string;
  };
  const state = async (name: string) => (await api('GET', `/incidents/${name}`)).body?.status?.state as string;
  const untilState = (name: string, wanted: string) =>
    reconciled(
      () => state(name),
      (s) => s === wanted,
    );
  const backdate = (name: string) =>
    IncidentModel.updateOne({ name }, { $set: { lastUpdated: new Date(Date.now() - 60_000) } });
  const repairs = async () => {
    const text = await fetch(new URL('/metrics', dev.api)).then((r) => r.text());
    return Object.fromEntries(
      [...text.matchAll(/^foghorn_reconciler_repairs_total\{kind="([^"]+)"\} (\d+)/gm)].map((m) => [
        m[1],
        Number(m[2]),
      ]),
    );
  };
  /** A repair is counted at the end of the reconciler's pass, a moment after its effect shows. */
  const countedRepair = (kind: string) => reconciled(repairs, (r) => (r[kind] ?? 0) >= 1);

  it('starts the workflow of an incident whose start never happened', async () => {
    const name = await open('reference');
    await untilState(name, 'Escalated');
    // As if the ingest died after writing the record: a copy of it under a new name, no workflow.
    const record = (await IncidentModel.findOne({ name }, { _id: 0 }).lean())!;
    const lost = `${name.slice(0, -3)}9${name.slice(-2)}`;
    await IncidentModel.create({
      ...record,
      name: lost,
      resource: 'Deployment/never-started',
      resourceKey: `local/rec/Deployment/never-started`,
      state: 'Detected',
      lastUpdated: new Date(Date.now() - 60_000),
    });
    await DedupEntryModel.create({ _id: 'local/rec/Deployment/never-started', incident: lost, createdAt: new Date() });
    await untilState(lost, 'Escalated');
    expect((await temporal.workflow.getHandle(lost).describe()).status.name).toBe('RUNNING');
    await countedRepair('incident-workflow-started');
  }, 150_000);

  it('brings a stale record back in line with its workflow', async () => {
    const name = await open('stale');
    await untilState(name, 'Escalated');
    await IncidentModel.updateOne(
      { name },
      { $set: { state: 'Analyzing', lastUpdated: new Date(Date.now() - 60_000) } },
    );
    await untilState(name, 'Escalated');
    await countedRepair('incident-record-refreshed');
  }, 150_000);

  it('restarts a terminated workflow of an open incident, keeping its state', async () => {
    const name = await open('terminated');
    await untilState(name, 'Escalated');
    await api('POST', `/incidents/${name}/acknowledge`, { acknowledgedBy: 'alice' });
    await temporal.workflow.getHandle(name).terminate('test: a lost workflow');
    await backdate(name);
    await reconciled(
      async () => (await temporal.workflow.getHandle(name).describe()).status.name,
      (s) => s === 'RUNNING',
    );
    // The new run knows it is past triage and acknowledged, and it answers like the old one.
    const again = await api('POST', `/incidents/${name}/acknowledge`, { acknowledgedBy: 'bob' });
    expect(again.status).toBe(409);
    const resolved = await api('POST', `/incidents/${name}/resolve?namespace=rec`, { resolution: 'fixed' });
    expect(resolved.status).toBe(200);
    await countedRepair('incident-workflow-restarted');
  }, 150_000);

  it('removes a dedup entry left behind by a resolved incident, so the next signal opens a new one', async () => {
    const name = await open('resolved');
    await untilState(name, 'Escalated');
    expect((await api('POST', `/incidents/${name}/resolve?namespace=rec`, { resolution: 'done' })).status).toBe(200);
    await DedupEntryModel.create({ _id: 'local/rec/Deployment/resolved', incident: name, createdAt: new Date(0) });
    await reconciled(
      () => DedupEntryModel.countDocuments({ _id: 'local/rec/Deployment/resolved' }),
      (n) => n === 0,
    );
    const next = await open('resolved');
    expect(next).not.toBe(name);
    await countedRepair('dedup-entry-removed');
  }, 150_000);

  it('rebuilds the record of a running workflow whose record was lost', async () => {
    const name = await open('orphan');
    await untilState(name, 'Escalated');
    await IncidentModel.deleteOne({ name });
    const back = await reconciled(
      () => api('GET', `/incidents/${name}`),
      (r) => r.status === 200,
    );
    expect(back.body).toMatchObject({
      metadata: { name, namespace: 'rec' },
      spec: { resource: 'Deployment/orphan', severity: 'high' },
      status: { state: 'Escalated' },
    });
    await countedRepair('incident-record-recreated');
  }, 150_000);

  it('hands over a chat message that was stored but never handed over', async () => {
    await saveChatMessage(
      { messageId: 'msg-reconciled-1', chatId: 'rec-chat', text: '/help' },
      new Date(Date.now() - 60_000),
    );
    await reconciled(
      () => ChatMessage.findOne({ messageId: 'msg-reconciled-1' }).lean(),
      (m) => m?.status === 'done',
    );
    expect(await ChatMessage.findOne({ messageId: 'msg-reconciled-1' }).lean()).toMatchObject({
      replyKind: 'final',
      reply: expect.stringContaining('/help'),
    });
    await countedRepair('chat-message-handed-over');
  }, 150_000);
});
