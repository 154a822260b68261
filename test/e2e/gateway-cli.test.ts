import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import path from 'path';
import { HELP_TEXT } from '../../domain/chatops';
import { useCallbackReceiver } from '../harness/callback-receiver';
import { devEnv, startDev, stopDev, waitReady, type DevProcess } from '../harness/dev-process';
import { freePort } from '../harness/ports';
import { killAll, runCli, spawnCli, survivors, until, waitListening } from '../harness/processes';

/**
 * The gateway's command line (DESIGN §3, §10; spec webhook-channel.md "Operator commands"):
 * `foghorn dev` with FOGHORN_WEBHOOK_ADDR runs the webhook adapter, `foghorn gateway start`
 * runs it on its own, `foghorn gateway status` reports it. One `foghorn dev` serves the file;
 * the other commands run as separate processes against its MongoDB-wire and Temporal servers.
 */
const SECRET = 'cli-test-secret-0123456789abcdef';

type Receiver = Awaited<ReturnType<typeof useCallbackReceiver>>;

describe('foghorn gateway start|status and the gateway in foghorn dev (e2e)', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'foghorn-gateway-cli-'));
  let receiver: Receiver;
  let dev: DevProcess | undefined;
  let env: NodeJS.ProcessEnv;
  let webhookAddr: string;
  let mongoUri: string;

  /** What `gateway status` sees: the servers of the dev stack and the given adapter settings. */
  const status = (adapter: NodeJS.ProcessEnv) =>
    runCli(['gateway', 'status'], {
      MONGODB_URI: mongoUri,
      TEMPORAL_ADDRESS: '',
      FOGHORN_LOG_LEVEL: 'warn',
      ...adapter,
    });

  const post = (url: string, body: unknown, secret = SECRET) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-foghorn-secret': secret },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    receiver = await useCallbackReceiver(SECRET);
    webhookAddr = `127.0.0.1:${await freePort()}`;
    env = {
      ...(await devEnv(dataDir)),
      FOGHORN_WEBHOOK_ADDR: webhookAddr,
      FOGHORN_WEBHOOK_SECRET: SECRET,
      FOGHORN_WEBHOOK_CALLBACK_URL: receiver.url,
      FOGHORN_WEBHOOK_PATH: '/inbound',
      FOGHORN_LLM_BASE_URL: '', // the built-in agent
    };
    dev = await startDev(env);
    mongoUri = /MongoDB:\s+(\S+)/.exec(dev.output())![1];
    await waitReady(dev.api);
  }, 180_000);

  afterAll(async () => {
    await killAll();
    if (dev && dev.child.exitCode === null && dev.child.signalCode === null) await stopDev(dev);
    await receiver?.stop();
    rmSync(dataDir, { recursive: true, force: true });
    expect(await survivors()).toEqual([]); // every gateway and status command is gone, with its process group
  }, 60_000);

  it('gateway start without FOGHORN_WEBHOOK_ADDR exits 2 and says what is missing', async () => {
    const { code, output } = await runCli(['gateway', 'start'], {
      FOGHORN_WEBHOOK_ADDR: '',
      MONGODB_URI: mongoUri,
      TEMPORAL_ADDRESS: '',
    });
    expect(code).toBe(2);
    expect(output).toMatch(/FOGHORN_WEBHOOK_ADDR is not set/);
    expect(output).toMatch(/FOGHORN_WEBHOOK_ADDR=:8085/); // shows how to set it
  });

  it('foghorn dev prints the webhook URL and answers /help through the callback URL', async () => {
    const url = `http://${webhookAddr}/inbound`;
    expect(dev!.output()).toMatch(new RegExp(`Webhook:\\s+${url.replace(/[.]/g, '\\.')}\\s`));
    const res = await post(url, { chat_id: 'cli-help', user_id: 'ops', text: '/help' });
    expect(res.status).toBe(202);
    const { message_id: messageId } = (await res.json()) as { message_id: string };
    const final = await receiver.waitFor((c) => c.body.message_id === messageId && c.body.kind === 'final', 60_000);
    expect(final.body).toMatchObject({ chat_id: 'cli-help', text: HELP_TEXT, kind: 'final' });
    expect(final.signatureValid).toBe(true);
    expect(final.headers['x-foghorn-secret']).toBe(SECRET);
  }, 90_000);

  it('gateway status lists the webhook adapter of the running dev gateway: settings, queue, last error', async () => {
    // A receiver that refuses this chat's replies: the reply stays queued and the error is recorded.
    let refuse = true;
    receiver.answerWith((body) => ({ status: refuse && body.chat_id === 'cli-refused' ? 503 : 200 }));
    const res = await post(`http://${webhookAddr}/inbound`, { chat_id: 'cli-refused', text: '/help' });
    expect(res.status).toBe(202);
    const { message_id: messageId } = (await res.json()) as { message_id: string };
    await until(
      'a refused callback',
      () => receiver.attempts.some((a) => a.body.message_id === messageId && a.status === 503),
      60_000,
    );

    const { code, output } = await status({
      FOGHORN_WEBHOOK_ADDR: webhookAddr,
      FOGHORN_WEBHOOK_SECRET: SECRET,
      FOGHORN_WEBHOOK_CALLBACK_URL: receiver.url,
    });
    expect(code).toBe(0);
    const callbackHost = new URL(receiver.url).host;
    expect(output).toMatch(/^adapter: webhook$/m);
    expect(output).toMatch(new RegExp(`^\\s+address:\\s+${webhookAddr}$`, 'm'));
    expect(output).toMatch(/^\s+path:\s+\/inbound$/m);
    expect(output).toMatch(new RegExp(`^\\s+callback host:\\s+${callbackHost}$`, 'm'));
    expect(output).toMatch(/^\s+secret set:\s+yes$/m);
    expect(output).toMatch(/^\s+queue depth:\s+1$/m); // the refused reply; the /help before it is done
    expect(output).toMatch(
      new RegExp(`^\\s+last delivery error: \\d{4}-\\d\\d-\\d\\dT\\S+Z HTTP 503 from ${callbackHost}$`, 'm'),
    );
    expect(output).toMatch(/^\s+listening:\s+yes \(webhook\)$/m);
    expect(output).not.toContain(SECRET);

    // The receiver is back: the retried reply arrives, and the turn leaves the queue.
    refuse = false;
    await receiver.waitFor((c) => c.body.message_id === messageId && c.body.kind === 'final', 90_000);
  }, 180_000);

  it('gateway start without secret and callback URL warns at start; status says no, and listening follows it', async () => {
    const addr = `127.0.0.1:${await freePort()}`;
    const adapter = { FOGHORN_WEBHOOK_ADDR: addr, FOGHORN_WEBHOOK_SECRET: '', FOGHORN_WEBHOOK_CALLBACK_URL: '' };
    const gateway = spawnCli(['gateway', 'start'], {
      ...adapter,
      MONGODB_URI: mongoUri,
      TEMPORAL_ADDRESS: `127.0.0.1:${env.FOGHORN_TEMPORAL_PORT}`,
      FOGHORN_LOG_LEVEL: 'warn',
    });
    await waitListening(`http://${addr}/inbound`, gateway);
    expect(gateway.output()).toMatch(/FOGHORN_WEBHOOK_SECRET is not set: every request to the webhook is refused/);
    expect(gateway.output()).toMatch(/FOGHORN_WEBHOOK_CALLBACK_URL is not set: messages are accepted and run/);
    expect((await post(`http://${addr}/inbound`, { chat_id: 'cli-nosecret', text: '/help' })).status).toBe(401);

    const up = await status(adapter);
    expect(up.code).toBe(0);
    expect(up.output).toMatch(new RegExp(`^\\s+address:\\s+${addr}$`, 'm'));
    expect(up.output).toMatch(/^\s+callback host:\s+\(none\)$/m);
    expect(up.output).toMatch(/^\s+secret set:\s+no$/m);
    expect(up.output).toMatch(/^\s+queue depth:\s+0$/m); // the refused reply of the test before went out
    expect(up.output).toMatch(/^\s+listening:\s+yes \(webhook\)$/m);

    await gateway.stop();
    expect(await gateway.exited).toBe(0); // SIGTERM is a clean stop
    const down = await status(adapter);
    expect(down.code).toBe(0);
    expect(down.output).toMatch(/^adapter: webhook$/m);
    expect(down.output).toMatch(/^\s+listening:\s+no \(webhook\)$/m);
  }, 180_000);

  it('gateway status without FOGHORN_WEBHOOK_ADDR says no adapter is active', async () => {
    const { code, output } = await status({ FOGHORN_WEBHOOK_ADDR: '' });
    expect(code).toBe(0);
    expect(output).toMatch(/No gateway adapters are active \(set FOGHORN_WEBHOOK_ADDR/);
  }, 60_000);
});
