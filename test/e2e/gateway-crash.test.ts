import { randomUUID } from 'crypto';
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import path from 'path';
import { startEmbeddedMongo, type EmbeddedMongo } from '../../cli/embedded/mongo';
import { startEmbeddedTemporal, type EmbeddedTemporal } from '../../cli/embedded/temporal';
import { SHELL_INTERRUPTED } from '../../workflows/agent-turn';
import { useCallbackReceiver, type ReceivedCallback } from '../harness/callback-receiver';
import { freePort } from '../harness/ports';
import { alive, killAll, spawnCli, survivors, waitListening, waitPolling, type CliProcess } from '../harness/processes';

/**
 * DESIGN §10: "Nothing accepted is ever lost: accepted messages survive a restart of any
 * process." Checked in the production topology — the MongoDB-wire server, the Temporal dev
 * server, `foghorn worker` and `foghorn gateway start` as separate processes — by kill -9 of
 * each of the Foghorn processes and of Temporal while a message is on its way.
 */
const SECRET = 'crash-test-secret-0123456789abcdef';
const REPLY_TIMEOUT_MS = 90_000;

type Receiver = Awaited<ReturnType<typeof useCallbackReceiver>>;

describe('gateway crash safety: kill -9 of any process loses no accepted message (e2e)', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'foghorn-crash-'));
  const taskQueue = `crash-${randomUUID().slice(0, 8)}`;
  let receiver: Receiver;
  let mongo: EmbeddedMongo | undefined;
  let temporal: EmbeddedTemporal | undefined;
  let temporalPort: number;
  let env: NodeJS.ProcessEnv;
  let webhookUrl: string;
  let worker: CliProcess;
  let gateway: CliProcess;
  const messages: string[] = [];

  const serverPids: number[] = [];
  const startTemporal = async () => {
    temporal = await startEmbeddedTemporal({ port: temporalPort, dbFile: path.join(dir, 'temporal.db') });
    serverPids.push(temporal.child.pid!);
  };

  const crashTemporal = async () => {
    const exited = new Promise((resolve) => temporal!.child.once('exit', resolve));
    temporal!.child.kill('SIGKILL');
    await exited;
  };
  const startWorker = async () => {
    worker = spawnCli(['worker'], env);
    await waitPolling(temporal!.address, taskQueue, worker);
  };
  const startGateway = async () => {
    gateway = spawnCli(['gateway', 'start'], env);
    await waitListening(webhookUrl, gateway);
  };

  /** Posts a message with the shared secret; returns the status and the message id of a 202. */
  const post = async (chatId: string, text: string) => {
    const res = await fetch(webhookUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-foghorn-secret': SECRET },
      body: JSON.stringify({ chat_id: chatId, user_id: 'crash-test', text }),
    });
    const body = (await res.json()) as { message_id?: string };
    if (body.message_id) messages.push(body.message_id);
    return { status: res.status, messageId: body.message_id ?? '' };
  };

  const isReply = (c: ReceivedCallback) => c.body.kind === 'final' || c.body.kind === 'error';

  /**
   * The reply of a message arrived, as `final`, once: redeliveries of the same callback
   * (same webhook-id, e.g. after a worker died between the POST and recording it) are what
   * a receiver dedups, but a second, different reply would be a turn that ran twice.
   */
  const expectOneFinal = (messageId: string, text: RegExp) => {
    const replies = receiver.of(messageId).filter(isReply);
    expect(replies.map((c) => c.body.kind)).toEqual(replies.map(() => 'final'));
    expect(new Set(replies.map((c) => c.headers['webhook-id'])).size).toBe(1);
    expect(replies.every((c) => c.signatureValid)).toBe(true);
    expect(replies[0].body.text).toMatch(text);
  };
  const reply = (messageId: string) =>
    receiver.waitFor((c) => c.body.message_id === messageId && isReply(c), REPLY_TIMEOUT_MS);

  beforeAll(async () => {
    receiver = await useCallbackReceiver(SECRET);
    temporalPort = await freePort();
    const webhookPort = await freePort();
    webhookUrl = `http://127.0.0.1:${webhookPort}/inbound`;
    // The memory backend is enough: MongoDB is the one process this suite does not restart.
    [mongo] = await Promise.all([startEmbeddedMongo({ database: 'crash' }), startTemporal()]);
    serverPids.push(mongo.child.pid!);
    env = {
      MONGODB_URI: mongo.uri,
      TEMPORAL_ADDRESS: temporal!.address,
      TEMPORAL_NAMESPACE: 'default',
      FOGHORN_TASK_QUEUE: taskQueue,
      FOGHORN_WEBHOOK_ADDR: `127.0.0.1:${webhookPort}`,
      FOGHORN_WEBHOOK_PATH: '/inbound',
      FOGHORN_WEBHOOK_SECRET: SECRET,
      FOGHORN_WEBHOOK_CALLBACK_URL: receiver.url,
      FOGHORN_AGENT_SHELL_DIR: path.join(dir, 'shell'),
      FOGHORN_LOG_LEVEL: 'warn',
      FOGHORN_LLM_BASE_URL: '', // the built-in agent: no model in the loop
      FOGHORN_DATA_DIR: dir,
    };
    await Promise.all([startWorker(), startGateway()]);
  }, 240_000);

  afterAll(async () => {
    await killAll();
    await temporal?.stop();
    await mongo?.stop();
    await receiver?.stop();
    rmSync(dir, { recursive: true, force: true });
    // Nothing left behind: every worker and gateway (with its process group) and every server.
    expect(await survivors()).toEqual([]);
    expect(serverPids.filter(alive)).toEqual([]);
  }, 60_000);

  it('answers a message end to end across the separate processes', async () => {
    const { status, messageId } = await post('crash-warmup', '/help');
    expect(status).toBe(202);
    await reply(messageId);
    expectOneFinal(messageId, /\/help/);
  }, 120_000);

  it('a. kill -9 of the worker mid-turn: the turn is answered, and the chat goes on', async () => {
    const { status, messageId } = await post('crash-worker', '/sh sleep 6; echo slept-ok');
    expect(status).toBe(202);
    // The notice goes out after ~2 s: the shell command is running on the worker right now.
    await receiver.waitFor((c) => c.body.message_id === messageId && c.body.kind === 'notice', 30_000);
    await worker.crash();
    expect(receiver.of(messageId).filter(isReply)).toEqual([]); // it did die mid-turn
    // A message queued behind the interrupted one, while no worker runs.
    const queued = await post('crash-worker', '/sh echo after-the-crash');
    await startWorker();
    // A shell command is never run twice: the lost run is reported, not repeated.
    const answer = await reply(messageId);
    expect(answer.body).toMatchObject({ kind: 'error', text: SHELL_INTERRUPTED });
    expect(
      new Set(
        receiver
          .of(messageId)
          .filter(isReply)
          .map((c) => c.headers['webhook-id']),
      ).size,
    ).toBe(1);
    await reply(queued.messageId);
    expectOneFinal(queued.messageId, /after-the-crash/);
  }, 240_000);

  it('b. kill -9 of the gateway right after the 202: the reply still arrives', async () => {
    const { status, messageId } = await post('crash-gateway', '/sh sleep 1; echo after-gateway-crash');
    expect(status).toBe(202);
    await gateway.crash();
    await startGateway();
    await reply(messageId);
    expectOneFinal(messageId, /after-gateway-crash/);
  }, 240_000);

  it('c. kill -9 of the Temporal server: a message posted while it is down is stored, then dispatched', async () => {
    await crashTemporal();
    const { status, messageId } = await post('crash-temporal', '/sh echo while-temporal-was-down');
    expect(status).toBe(202); // stored in MongoDB: accepted even though Temporal cannot take it

    await startTemporal(); // same port, same database file
    await reply(messageId); // the running gateway's sweeper hands it over once Temporal answers
    expectOneFinal(messageId, /while-temporal-was-down/);
    expect(worker.child.exitCode).toBeNull(); // the worker rode out the outage by itself
  }, 300_000);

  it('c2. Temporal down, then kill -9 of the gateway that stored the message: the next gateway dispatches it', async () => {
    await crashTemporal();
    const { status, messageId } = await post('crash-both', '/sh echo stored-not-dispatched');
    expect(status).toBe(202);
    await gateway.crash(); // the only process that knew the message was not dispatched yet

    await startTemporal();
    await startGateway(); // its sweeper finds the stored, undispatched message
    await reply(messageId);
    expectOneFinal(messageId, /stored-not-dispatched/);
    expect(worker.child.exitCode).toBeNull();
  }, 300_000);

  it('every accepted message got exactly one reply', async () => {
    await new Promise((r) => setTimeout(r, 2_000)); // late redeliveries, if any
    for (const messageId of messages) {
      const replies = receiver.of(messageId).filter(isReply);
      expect({ messageId, webhookIds: [...new Set(replies.map((c) => c.headers['webhook-id']))].length }).toEqual({
        messageId,
        webhookIds: 1,
      });
    }
  });
});
