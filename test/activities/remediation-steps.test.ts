import { ApplicationFailure, type Logger } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { randomBytes } from 'crypto';
import { mkdtemp, readFile, realpath, rm, writeFile } from 'fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'http';
import { createServer as createTcpServer, type AddressInfo } from 'net';
import { tmpdir } from 'os';
import path from 'path';
import { createRemediationStepActivities } from '../../activities/remediation-steps';
import { parseConfig } from '../../config/env';
import {
  describeScriptStep,
  HTTP_STEP_FAILED,
  HTTP_STEP_UNAVAILABLE,
  interruptedMessage,
  STEP_INTERRUPTED,
  STEP_INVALID_INPUT,
  STEP_KEY_REUSED,
  stepFingerprint,
  type HttpStepInput,
  type HttpStepResult,
  type ScriptStepInput,
  type ScriptStepResult,
} from '../../domain/remediation-steps';
import { scriptStepInput } from '../../contracts/remediation';
import { claimStepRun } from '../../store/step-runs';
import { waitFor } from '../harness/kube';
import { useMongo } from '../harness/mongo';

/** What the receiver saw: one entry per request. */
interface Received {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * The HttpRequest and RunScript steps against real MongoDB, a real HTTP receiver and the real
 * shell sandbox (the suite runs as root, like test/activities/shell.test.ts).
 */
describe('remediation steps', () => {
  let mongo: Awaited<ReturnType<typeof useMongo>>;
  let receiver: Server;
  let base: string;
  let received: Received[];
  let dir: string;
  let cwd: string;
  /** Paths answered 503 this many more times before 200. */
  const failuresLeft = new Map<string, number>();

  beforeAll(async () => {
    mongo = await useMongo();
    dir = await realpath(await mkdtemp(path.join(tmpdir(), 'foghorn-steps-')));
    cwd = path.join(dir, 'work');
    received = [];
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const url = new URL(req.url ?? '/', 'http://receiver');
        received.push({
          method: req.method ?? '',
          path: url.pathname,
          headers: req.headers,
          body: Buffer.concat(chunks).toString(),
        });
        if (url.pathname === '/hang') return; // never answers
        if (url.pathname === '/echo-404') {
          // A receiver that echoes what it got: our header values must not come back out.
          res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ got: req.headers }));
          return;
        }
        const left = failuresLeft.get(url.pathname) ?? 0;
        if (left > 0) {
          failuresLeft.set(url.pathname, left - 1);
          res.writeHead(503, { 'retry-after': '1' }).end('busy');
          return;
        }
        if (url.pathname === '/created') return void res.writeHead(201).end('made');
        if (url.pathname === '/big') return void res.writeHead(200).end('x'.repeat(10_000));
        res.writeHead(200).end('fine');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  }, 60_000);
  afterAll(async () => {
    receiver?.closeAllConnections();
    await new Promise((resolve) => receiver?.close(resolve));
    await mongo?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const activities = () => createRemediationStepActivities(parseConfig({ FOGHORN_AGENT_SHELL_DIR: cwd }));
  let keys = 0;
  const newKey = () => `RP-20261123-${String(++keys).padStart(3, '0')}/1`;
  /** What the worker logged about the activities (a failure is logged with its message). */
  const logged: string[] = [];
  const logger: Logger = {
    log: (level, message, meta) => void logged.push(`${level} ${message} ${String(meta?.error ?? '')}`),
    trace: (m, meta) => logger.log('TRACE', m, meta),
    debug: (m, meta) => logger.log('DEBUG', m, meta),
    info: (m, meta) => logger.log('INFO', m, meta),
    warn: (m, meta) => logger.log('WARN', m, meta),
    error: (m, meta) => logger.log('ERROR', m, meta),
  };
  const env = () => new MockActivityEnvironment({}, { logger });
  const http = (input: HttpStepInput) => env().run(activities().runHttpStep, input) as Promise<HttpStepResult>;
  const script = (input: ScriptStepInput) => env().run(activities().runScriptStep, input) as Promise<ScriptStepResult>;
  const sentTo = (p: string) => received.filter((r) => r.path === p);
  /** The failure a call threw (the test fails if it did not throw one). */
  async function failure(call: Promise<unknown>): Promise<ApplicationFailure> {
    const err = await call.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ApplicationFailure);
    return err as ApplicationFailure;
  }

  describe('HttpRequest', () => {
    it('answers a 2xx as ok, sending the headers, the body and an Idempotency-Key', async () => {
      const key = newKey();
      const result = await http({
        key,
        method: 'POST',
        url: `${base}/hook`,
        headers: { 'Content-Type': 'application/json', 'X-Team': 'payments' },
        body: '{"restart":true}',
      });
      expect(result).toEqual({ status: 200, ok: true, durationMs: expect.any(Number), body: 'fine', repeated: false });
      const [req] = sentTo('/hook');
      expect(req).toMatchObject({ method: 'POST', body: '{"restart":true}' });
      expect(req!.headers).toMatchObject({
        'idempotency-key': `"${key}"`, // an RFC 8941 string, as the IETF draft defines the field
        'content-type': 'application/json',
        'x-team': 'payments',
        'user-agent': 'foghorn-remediation',
      });
    });

    it('with expectStatus, only that status is ok; another one fails the step for good, recorded', async () => {
      expect(await http({ key: newKey(), method: 'PUT', url: `${base}/created`, expectStatus: 201 })).toMatchObject({
        status: 201,
        ok: true,
      });

      const key = newKey();
      const input: HttpStepInput = { key, method: 'PUT', url: `${base}/created?force=1`, expectStatus: 200 };
      const err = await failure(http(input));
      expect(err).toMatchObject({ type: HTTP_STEP_FAILED, nonRetryable: true });
      expect(err.message).toBe(`PUT ${base}/created answered 201, expected 200`);
      expect(err.details).toEqual([
        { status: 201, ok: false, durationMs: expect.any(Number), body: 'made', repeated: false },
      ]);

      // The outcome is the key's: asked again, it fails the same way without sending.
      const sent = sentTo('/created').length;
      const again = await failure(http(input));
      expect(again).toMatchObject({ type: HTTP_STEP_FAILED, nonRetryable: true, message: err.message });
      expect(again.details).toEqual([expect.objectContaining({ status: 201, ok: false, repeated: true })]);
      expect(sentTo('/created')).toHaveLength(sent);
    });

    it('does not send a finished key again: answers the recorded result', async () => {
      const key = newKey();
      const input: HttpStepInput = { key, method: 'POST', url: `${base}/once`, body: 'x' };
      const first = await http(input);
      const second = await http(input);
      expect(second).toEqual({ ...first, repeated: true });
      expect(sentTo('/once')).toHaveLength(1);
    });

    it('fails a 5xx retryably (Retry-After honoured), then records the success of a later attempt', async () => {
      const key = newKey();
      failuresLeft.set('/flaky', 1);
      const input: HttpStepInput = { key, method: 'POST', url: `${base}/flaky` };
      const err = await failure(http(input));
      expect(err).toMatchObject({ type: HTTP_STEP_UNAVAILABLE, nonRetryable: false, nextRetryDelay: 1000 });
      expect(err.message).toBe(`POST ${base}/flaky answered 503, expected 2xx: retrying`);

      expect(await http(input)).toMatchObject({ status: 200, ok: true, repeated: false });
      expect(await http(input)).toMatchObject({ status: 200, ok: true, repeated: true });
      // Two attempts reached the receiver, both with the same key, so it could drop a repeat.
      expect(sentTo('/flaky').map((r) => r.headers['idempotency-key'])).toEqual([`"${key}"`, `"${key}"`]);
    });

    it('fails a timeout and an unreachable receiver retryably', async () => {
      const timedOut = await failure(http({ key: newKey(), method: 'GET', url: `${base}/hang`, timeoutMs: 300 }));
      expect(timedOut).toMatchObject({ type: HTTP_STEP_UNAVAILABLE, nonRetryable: false });
      expect(timedOut.message).toBe(`GET ${base}/hang failed: timed out after 0.3s`);

      const closed = await closedPort();
      const refused = await failure(http({ key: newKey(), method: 'GET', url: `http://127.0.0.1:${closed}/x` }));
      expect(refused).toMatchObject({ type: HTTP_STEP_UNAVAILABLE, nonRetryable: false });
      expect(refused.message).toBe(`GET http://127.0.0.1:${closed}/x failed: ECONNREFUSED`);
    });

    it('keeps header values, URL credentials and query out of results and errors', async () => {
      const token = randomBytes(16).toString('hex');
      const plain = `plain-${randomBytes(8).toString('hex')}`;
      const headers = { Authorization: `Bearer ${token}`, 'X-Custom': plain };
      const secrets = [token, plain, 'hunter2', 'qsecret'];
      const leaks = (value: unknown) => secrets.filter((s) => JSON.stringify(value).includes(s));

      // A 404 whose body echoes every request header back.
      const echoed = await failure(
        http({ key: newKey(), method: 'POST', url: `${base}/echo-404?token=qsecret`, headers }),
      );
      expect(echoed.message).toBe(`POST ${base}/echo-404 answered 404, expected 2xx`);
      expect(JSON.stringify(echoed.details)).toContain('[REDACTED]');
      expect(sentTo('/echo-404').at(-1)!.headers.authorization).toBe(`Bearer ${token}`); // it was sent
      const closed = await closedPort();
      const unreachable = await failure(
        http({ key: newKey(), method: 'GET', url: `http://127.0.0.1:${closed}/`, headers }),
      );
      const invalid = await failure(
        http({ key: newKey(), method: 'GET', url: `${base}/x`, headers: { Authorization: `Bearer ${token}\r\nX: y` } }),
      );
      expect(invalid).toMatchObject({ type: STEP_INVALID_INPUT, nonRetryable: true });
      const withCredentials = await failure(
        http({ key: newKey(), method: 'GET', url: `http://ops:hunter2@127.0.0.1:${new URL(base).port}/x` }),
      );
      expect(withCredentials).toMatchObject({ type: STEP_INVALID_INPUT, nonRetryable: true });
      for (const err of [echoed, unreachable, invalid, withCredentials]) {
        expect(leaks([err.message, err.details, err.stack])).toEqual([]);
      }
      expect(logged.some((line) => line.includes('/echo-404 answered 404'))).toBe(true);
      expect(leaks(logged)).toEqual([]);
    });

    it('cuts the body at 2 KiB', async () => {
      const result = await http({ key: newKey(), method: 'GET', url: `${base}/big` });
      expect(result.body).toBe('x'.repeat(2048));
    });

    it('refuses a key used before for another request', async () => {
      const key = newKey();
      await http({ key, method: 'POST', url: `${base}/first` });
      const err = await failure(http({ key, method: 'POST', url: `${base}/second` }));
      expect(err).toMatchObject({ type: STEP_KEY_REUSED, nonRetryable: true });
      expect(sentTo('/second')).toHaveLength(0);
    });
  });

  describe('RunScript', () => {
    it('answers the exit code and the output; a non-zero exit is a result', async () => {
      const result = await script({ key: newKey(), script: 'echo out; sleep 0.1; echo err >&2; exit 3' });
      expect(result).toEqual({
        exitCode: 3,
        output: 'out\nerr\n',
        truncated: false,
        timedOut: false,
        durationMs: expect.any(Number),
        repeated: false,
      });
      expect(await script({ key: newKey(), script: 'true' })).toMatchObject({ exitCode: 0, output: '' });
    });

    it('caps the output at the shell cap and replaces secrets in it', async () => {
      const big = await script({ key: newKey(), script: "head -c 40000 /dev/zero | tr '\\0' a" });
      expect(big.truncated).toBe(true);
      expect(big.output).toMatch(/^a{16384}\n\[output truncated: 23616 more bytes not shown\]$/);

      const secret = await script({ key: newKey(), script: 'echo "password=s3cr3t-value"' });
      expect(secret.output).toBe('password=[REDACTED]\n');
    });

    it('kills a script at its timeout and answers what it printed', async () => {
      const result = await script({ key: newKey(), script: 'echo begun; sleep 60', timeoutMs: 1_000 });
      expect(result).toMatchObject({ exitCode: null, output: 'begun\n', timedOut: true, repeated: false });
    });

    it('never runs a key twice: a started key refuses, a finished key answers its result', async () => {
      const key = newKey();
      const runs = path.join(cwd, `runs-${keys}`);
      const release = path.join(cwd, `release-${keys}`);
      const input = {
        key,
        script: `echo run >> ${path.basename(runs)}; while [ ! -e ${path.basename(release)} ]; do sleep 0.1; done; echo done`,
      };
      const first = script(input);
      await waitFor(
        'the first attempt to start the script',
        async () => (await readFile(runs, 'utf8')) === 'run\n',
        30_000,
      );

      // A second attempt while the first has not recorded an end (as after a stopped worker).
      const second = await failure(script(input));
      expect(second).toMatchObject({ type: STEP_INTERRUPTED, nonRetryable: true, message: interruptedMessage(key) });
      expect(second.message).toBe(
        `script step ${key} was interrupted (worker stopped) and is not re-run: check its effects by hand`,
      );

      await writeFile(release, '');
      const finished = await first;
      expect(finished).toMatchObject({ exitCode: 0, output: 'done\n', repeated: false });
      expect(await script(input)).toEqual({ ...finished, repeated: true });
      expect(await readFile(runs, 'utf8')).toBe('run\n'); // ran once in all
    });

    it('refuses a key a stopped worker left started, without running the script', async () => {
      const key = newKey();
      const marker = `marker-${keys}`;
      const input = { key, script: `echo run >> ${marker}` };
      // What an attempt records before it runs, left behind by a worker that died.
      await claimStepRun({
        key,
        kind: 'script',
        fingerprint: stepFingerprint('script', scriptStepInput.parse(input)),
        target: describeScriptStep(input.script),
      });
      expect(await failure(script(input))).toMatchObject({ type: STEP_INTERRUPTED, nonRetryable: true });
      await expect(readFile(path.join(cwd, marker), 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
    });

    it('refuses a key used before for another script, and a timeout over 30 minutes', async () => {
      const key = newKey();
      await script({ key, script: 'true' });
      expect(await failure(script({ key, script: 'false' }))).toMatchObject({
        type: STEP_KEY_REUSED,
        nonRetryable: true,
      });
      expect(await failure(script({ key: newKey(), script: 'true', timeoutMs: 31 * 60_000 }))).toMatchObject({
        type: STEP_INVALID_INPUT,
        nonRetryable: true,
      });
    });
  });
});

/** A port nothing listens on: bound once, then closed. */
async function closedPort(): Promise<number> {
  const server = createTcpServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
