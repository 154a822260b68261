import { randomBytes } from 'crypto';
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import path from 'path';
import pino from 'pino';
import { useCallbackReceiver } from '../harness/callback-receiver';
import { devEnv, waitReady } from '../harness/dev-process';
import { useLlmServer } from '../harness/llm-server';
import { freePort } from '../harness/ports';
import { killAll, spawnCli, until, type CliProcess } from '../harness/processes';
import { firingAlert } from '../../bench/fixtures';

/**
 * The whole product as a user runs it (`foghorn dev`, most verbose level, gateway and LLM on),
 * fed every secret it knows — right and wrong — through the API, the webhook and the LLM; then
 * its entire stdout+stderr is searched for each of them. The banner shows the generated admin
 * token once, by design (DESIGN §5): that one line is the only place it may appear.
 */
const hex = (bytes = 24) => randomBytes(bytes).toString('hex');

interface Leak {
  secret: string;
  line: string;
}

/** Every line holding a secret, a 16-character piece of one, or a bearer credential. */
function leaks(output: string, secrets: Record<string, string>): Leak[] {
  const found: Leak[] = [];
  for (const line of output.split('\n')) {
    for (const [name, value] of Object.entries(secrets))
      if (line.includes(value) || line.includes(value.slice(0, 16)) || line.includes(value.slice(-16)))
        found.push({ secret: name, line: line.slice(0, 300) });
    if (/Bearer\s+\S/.test(line)) found.push({ secret: 'Bearer', line: line.slice(0, 300) });
  }
  return found;
}

const ADMIN_BANNER = /^ {2}Admin token: +(\S+)$/m;

describe('no secret in the logs of a whole run (e2e)', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'foghorn-logscan-'));
  const secrets = {
    webhookSecret: hex(),
    wrongWebhookSecret: hex(),
    llmKey: `llmkey-${hex()}`, // no well-known prefix: only the configuration says it is a secret
    wrongToken: `fh_${randomBytes(32).toString('base64url')}`,
  };
  let llm: Awaited<ReturnType<typeof useLlmServer>>;
  let receiver: Awaited<ReturnType<typeof useCallbackReceiver>>;
  let dev: CliProcess | undefined;

  beforeAll(async () => {
    // An LLM that refuses insight requests the way OpenAI does, echoing the key it was given,
    // and answers chat turns.
    llm = await useLlmServer((body) =>
      body.response_format
        ? { status: 401, content: `Incorrect API key provided: ${secrets.llmKey}. You can find your API key at …` }
        : { content: 'All quiet: one incident, already acknowledged.' },
    );
    receiver = await useCallbackReceiver(secrets.webhookSecret);
  });
  afterAll(async () => {
    await killAll();
    await llm?.stop();
    await receiver?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('the scan finds a secret in a line that holds one', () => {
    const lines: string[] = [];
    const raw = pino({}, { write: (l: string) => void lines.push(l) });
    raw.info({ req: { headers: { 'x-foghorn-secret': secrets.webhookSecret } } }, 'request completed');
    raw.info(`llm said: Incorrect API key provided: ${secrets.llmKey.slice(0, 20)}…`);
    raw.info({ headers: { authorization: 'Bearer abc' } });
    expect(leaks(lines.join(''), secrets).map((l) => l.secret)).toEqual(['webhookSecret', 'llmKey', 'Bearer']);
    expect(leaks('{"msg":"GET /readyz 200 3ms"}', secrets)).toEqual([]);
  });

  it('never writes a token, the webhook secret or the LLM key, right or wrong, to stdout or stderr', async () => {
    const webhookAddr = `127.0.0.1:${await freePort()}`;
    dev = spawnCli(['dev'], {
      ...(await devEnv(dataDir)),
      FOGHORN_LOG_LEVEL: 'trace',
      FOGHORN_WEBHOOK_ADDR: webhookAddr,
      FOGHORN_WEBHOOK_PATH: '',
      FOGHORN_WEBHOOK_SECRET: secrets.webhookSecret,
      FOGHORN_WEBHOOK_CALLBACK_URL: receiver.url,
      FOGHORN_WEBHOOK_HOME_CHANNEL: '',
      FOGHORN_LLM_BASE_URL: llm.baseUrl,
      FOGHORN_LLM_API_KEY: secrets.llmKey,
      FOGHORN_LLM_MODEL: 'test-model',
      FOGHORN_STT: '',
    });
    const proc = dev;
    await until('the banner', () => ADMIN_BANNER.test(proc.output()), 180_000, proc.output);
    const admin = ADMIN_BANNER.exec(proc.output())![1];
    const api = /API:\s+(\S+)/.exec(proc.output())![1];
    await waitReady(api);

    const call = async (method: string, url: string, token: string, body?: unknown, headers = {}) => {
      const res = await fetch(url.startsWith('http') ? url : `${api}${url}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
        ...(body !== undefined && { body: typeof body === 'string' ? body : JSON.stringify(body) }),
      });
      return { status: res.status, text: await res.text() };
    };

    // Tokens: create one, use a wrong one, put one where it does not belong.
    const created = await call('POST', '/tokens', admin, { user: 'logscan', role: 'operator' });
    expect(created.status).toBe(201);
    const operator = (JSON.parse(created.text) as { token: string }).token;
    expect((await call('GET', '/runbooks', secrets.wrongToken)).status).toBe(401);
    expect((await call('GET', `/incidents?access_token=${operator}`, operator)).status).toBe(200);
    const malformed = await call('POST', '/tokens', admin, `{"user":"x","token":"${admin}"`);
    expect(malformed.status).toBe(400);
    expect(malformed.text).not.toContain(admin); // the parser's excerpt of the body is redacted

    // An alert, then an action on its incident (with a cookie and a signature header on top).
    const fired = await call('POST', '/alerts/alertmanager', operator, firingAlert('shop', 'checkout', 'logscan-1'));
    expect(fired.status).toBe(202);
    const incident = (JSON.parse(fired.text) as { items: { incident: string }[] }).items[0].incident;
    await until(
      'the insight (after the LLM refused the key)',
      async () => JSON.parse((await call('GET', `/aiinsights?incident=${incident}`, operator)).text).items?.length > 0,
      120_000,
      proc.output,
    );
    const ack = await call(
      'POST',
      `/incidents/${incident}/acknowledge`,
      operator,
      { acknowledgedBy: 'logscan', message: 'on it' },
      { cookie: `session=${operator}`, 'webhook-signature': `v1,${randomBytes(32).toString('base64')}` },
    );
    expect(ack.status).toBe(200);

    // The webhook: wrong secret, then a chat message answered by the LLM agent.
    const inbound = `http://${webhookAddr}/inbound`;
    const post = (secret: string, body: string) =>
      fetch(inbound, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-foghorn-secret': secret },
        body,
      });
    expect((await post(secrets.wrongWebhookSecret, '{"chat_id":"ops","text":"hi"}')).status).toBe(401);
    const badBody = await post(secrets.webhookSecret, `{"chat_id":"ops","text":"secret=${secrets.webhookSecret}`);
    expect(badBody.status).toBe(400);
    expect(await badBody.text()).not.toContain(secrets.webhookSecret);
    const accepted = await post(secrets.webhookSecret, '{"chat_id":"ops","user_id":"alice","text":"anything open?"}');
    expect(accepted.status).toBe(202);
    const { message_id } = (await accepted.json()) as { message_id: string };
    await receiver.waitFor((c) => c.body.message_id === message_id && c.body.kind === 'final', 120_000);
    expect(llm.requests.some((r) => r.body.response_format)).toBe(true); // the key was used for insights
    expect(llm.requests.some((r) => !r.body.response_format)).toBe(true); // and for the chat turn

    await proc.stop();
    const output = proc.output();
    // The scan looks at real, verbose output: request lines (trace for probes) and the SDK's.
    expect(output).toMatch(/GET \/readyz 200/);
    expect(output).toContain('POST /api/v1/alerts/alertmanager 202');
    expect(output).toContain('/incidents?access_token=[REDACTED]');
    expect(output.split(admin)).toHaveLength(2); // once: the banner
    const all = { ...secrets, admin, operator };
    expect(leaks(output.replace(ADMIN_BANNER, '  Admin token:  (shown once)'), all)).toEqual([]);
  }, 420_000);
});
