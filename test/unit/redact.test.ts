import { Writable } from 'stream';
import pino from 'pino';
import { configSecrets, createLogger } from '../../api/observability';
import { addKnownSecrets, isSecretKey, redact, REDACTED, redactText } from '../../domain/redact';

const TOKEN = 'fh_3Qm9v0bW8xZk1LrT5yHc2NdE7aPf4GsJ6uVoX';
const KUBECONFIG = `apiVersion: v1
kind: Config
users:
- name: admin
  user:
    client-certificate-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUM=
    client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlF
    token: eyJhbGciOiJSUzI1NiIsImtpZCI6IiJ9.eyJpc3MiOiJrdWJlcm5ldGVzIn0.c2lnbmF0dXJl
`;

describe('isSecretKey', () => {
  it.each([
    'authorization',
    'Authorization',
    'proxy-authorization',
    'cookie',
    'set-cookie',
    'x-foghorn-secret',
    'X-Foghorn-Secret',
    'webhook-signature',
    'x-api-key',
    'apiKey',
    'api_key',
    'FOGHORN_LLM_API_KEY',
    'FOGHORN_WEBHOOK_SECRET',
    'FOGHORN_ADMIN_TOKEN',
    'token',
    'accessToken',
    'password',
    'kubeconfig',
    'client-key-data',
  ])('%s is a secret key', (key) => expect(isSecretKey(key)).toBe(true));

  it.each(['user', 'role', 'incident', 'message', 'tokens', 'max_tokens', 'webhook-id', 'webhook-timestamp', 'id'])(
    '%s is not',
    (key) => expect(isSecretKey(key)).toBe(false),
  );
});

describe('redactText', () => {
  it.each([
    [`Authorization: Bearer ${TOKEN}`, 'Authorization: [REDACTED]'],
    [`curl -H "Authorization: Bearer ${TOKEN}"`, 'curl -H "Authorization: [REDACTED]"'],
    ['Basic dXNlcjpodW50ZXIy', REDACTED],
    [`the token ${TOKEN} was revoked`, 'the token [REDACTED] was revoked'],
    ['key sk-proj-Ab12Cd34Ef56Gh78Ij90', 'key [REDACTED]'],
    ['secret whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'secret [REDACTED]'],
    ['{"apiKey":"abc123","user":"alice"}', '{"apiKey":"[REDACTED]","user":"alice"}'],
    ["password='hunter2' ok", "password='[REDACTED]' ok"],
    ['x-foghorn-secret=abc123 next', 'x-foghorn-secret=[REDACTED] next'],
    ['webhook-signature: v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=', 'webhook-signature: [REDACTED]'],
    ['GET /api/v1/runbooks?access_token=abc&page=2', 'GET /api/v1/runbooks?access_token=[REDACTED]&page=2'],
  ])('%s', (text, expected) => expect(redactText(text)).toBe(expected));

  it('removes every credential of a kubeconfig and keeps its shape', () => {
    const out = redactText(KUBECONFIG);
    expect(out).not.toMatch(/LS0tLS1|eyJhbGci/);
    expect(out).toContain('client-key-data: [REDACTED]');
    expect(out).toContain('token: [REDACTED]');
    expect(out).toContain('name: admin');
  });

  it('removes a PEM private key', () => {
    const pem = '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----';
    expect(redactText(`key:\n${pem}\nend`)).toBe(`key:\n${REDACTED}\nend`);
  });

  it('leaves ordinary text alone', () => {
    for (const text of [
      'Incident INC-20261123-001 acknowledged by alice',
      'max_tokens: 100, tokens: 3',
      'GET /api/v1/incidents?namespace=shop 200 12ms',
      'the webhook secret is not set',
    ])
      expect(redactText(text)).toBe(text);
  });

  it('removes the password of a connection URI', () =>
    expect(redactText('cannot reach mongodb://foghorn:hunter2pass@db:27017/foghorn')).toBe(
      `cannot reach mongodb://foghorn:${REDACTED}@db:27017/foghorn`,
    ));

  it('removes the secrets this process was given, whatever their shape', () => {
    const key = '9c1e7f3a2b8d4e6f';
    expect(redactText(`Incorrect API key provided: ${key}.`)).toContain(key); // no pattern knows it
    addKnownSecrets([key, 'short', undefined]);
    expect(redactText(`Incorrect API key provided: ${key}.`)).toBe(`Incorrect API key provided: ${REDACTED}.`);
    expect(redactText('a short word stays')).toBe('a short word stays');
  });

  it("configSecrets picks the configuration's tokens, secrets and keys", () => {
    const config = {
      FOGHORN_LOG_LEVEL: 'info',
      FOGHORN_ADMIN_TOKEN: 'admin-token-value',
      FOGHORN_WEBHOOK_SECRET: 'webhook-secret-value',
      FOGHORN_WEBHOOK_CALLBACK_URL: 'http://127.0.0.1:9000/',
      FOGHORN_LLM_API_KEY: 'llm-key-value',
      FOGHORN_AUDIT_KEY: 'audit-key-value',
      FOGHORN_AUDIT_RETIRED_KEYS: ['old-audit-key'],
      FOGHORN_RATE_LIMIT: 600,
    };
    expect(configSecrets(config).sort()).toEqual(
      ['admin-token-value', 'audit-key-value', 'llm-key-value', 'old-audit-key', 'webhook-secret-value'].sort(),
    );
  });

  it('does not redact twice', () => expect(redactText(redactText(`Bearer ${TOKEN}`))).toBe(REDACTED));
});

describe('redact', () => {
  it('replaces secret keys at any depth and secret-looking strings anywhere', () => {
    const input = {
      headers: { authorization: `Bearer ${TOKEN}`, 'X-Foghorn-Secret': 's3cr3t', accept: '*/*' },
      body: { user: 'alice', kubeconfig: KUBECONFIG, notes: [`used ${TOKEN}`] },
      count: 3,
      when: new Date(0),
      empty: { token: '' },
    };
    expect(redact(input)).toEqual({
      headers: { authorization: REDACTED, 'X-Foghorn-Secret': REDACTED, accept: '*/*' },
      body: { user: 'alice', kubeconfig: REDACTED, notes: [`used ${REDACTED}`] },
      count: 3,
      when: new Date(0),
      empty: { token: '' },
    });
    expect(input.headers.authorization).toBe(`Bearer ${TOKEN}`); // a copy, the input is untouched
  });

  it('keeps an error useful: type, message, stack, code and cause, secrets out', () => {
    const err = Object.assign(new Error(`401 from https://llm.example/v1 with Bearer ${TOKEN}`), {
      code: 'E_AUTH',
      cause: new Error(`apiKey=${TOKEN}`),
    });
    const out = redact(err) as unknown as Record<string, unknown>;
    expect(out).toMatchObject({
      type: 'Error',
      message: `401 from https://llm.example/v1 with ${REDACTED}`,
      code: 'E_AUTH',
    });
    expect(out.stack).toMatch(/^Error: 401 from/);
    expect(JSON.stringify(out)).not.toContain(TOKEN);
    expect(JSON.stringify(out.cause)).toContain(`apiKey=${REDACTED}`);
  });

  it('cuts cycles and leaves buffers as they are', () => {
    const a: Record<string, unknown> = { name: 'a' };
    a.self = a;
    expect(redact(a)).toEqual({ name: 'a', self: '[Circular]' });
    const buf = Buffer.from('hello');
    expect(redact({ buf }).buf).toBe(buf);
  });
});

/** Foghorn's logger writing JSON lines into an array. */
function capture(level = 'trace') {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  const logger = createLogger(level, { pretty: false, stream });
  return { logger, text: () => lines.join('') };
}

describe("the logger's redaction", () => {
  it('the check itself finds a secret in an unredacted pino line', () => {
    const lines: string[] = [];
    pino({}, { write: (l: string) => void lines.push(l) }).info({ headers: { authorization: `Bearer ${TOKEN}` } });
    expect(lines.join('')).toContain(TOKEN);
  });

  it('redacts fields, nested errors, child bindings and message text', () => {
    const { logger, text } = capture();
    logger.info({ headers: { authorization: `Bearer ${TOKEN}` }, apiKey: 'sk-live-0123456789abcdefghij' }, 'fields');
    logger.error({ err: new Error(`upstream said Bearer ${TOKEN}`) }, 'an err');
    logger.warn({ error: new Error(`token: ${TOKEN}`), messageId: 'msg-1' }, 'an error under another key');
    logger.child({ token: TOKEN }).info('child binding');
    logger.info(`message with ${TOKEN} and %s`, `Bearer ${TOKEN}`);
    const out = text();
    expect(out).not.toContain(TOKEN);
    expect(out).not.toContain('sk-live');
    expect(out).not.toContain('Bearer ');
    const errLine = JSON.parse(out.split('\n')[1]) as { err: { message: string; stack: string } };
    expect(errLine.err.message).toBe(`upstream said ${REDACTED}`);
    expect(errLine.err.stack).toContain('redact.test.ts'); // still a useful error
    const other = JSON.parse(out.split('\n')[2]) as { error: { message: string }; messageId: string };
    expect(other).toMatchObject({ error: { message: `token: ${REDACTED}` }, messageId: 'msg-1' });
  });
});
