import { Connection } from '@temporalio/client';
import { mkdtempSync, readFileSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import path from 'path';
import { startEmbeddedMongo, type EmbeddedMongo } from '../../cli/embedded/mongo';
import { startEmbeddedTemporal, type EmbeddedTemporal } from '../../cli/embedded/temporal';
import { freePort } from '../harness/ports';
import { killAll, spawnCli, survivors, until, waitPolling, type CliProcess } from '../harness/processes';
import {
  makeTestCertificates,
  startTlsProxy,
  TEST_SERVER_NAME,
  type TestCertificates,
  type TlsProxy,
} from '../harness/tls-proxy';

/**
 * Foghorn against a Temporal that needs TLS (docs/temporal.md). The CLI's dev server has no TLS
 * flags, so a TLS-terminating proxy written here stands in front of the embedded one, as a load
 * balancer or Temporal Cloud's front end would: it requires a client certificate from the test's
 * CA and speaks h2. `foghorn worker` and `foghorn api` run as processes through it; a client
 * certificate from another CA, or a CA that did not sign the server's certificate, ends the
 * process at start with one line that says what to check.
 */

jest.setTimeout(10 * 60_000);

const TOKEN = 'fh_tls-admin-token-0123456789abcdefghijklmnop';
const API_KEY = 'tmprl-test-api-key-0123456789abcdef';

let dataDir: string;
let certs: TestCertificates;
let mongo: EmbeddedMongo;
let temporal: EmbeddedTemporal;
let proxy: TlsProxy; // mTLS, certificate for 127.0.0.1
let namedProxy: TlsProxy; // mTLS, certificate for TEST_SERVER_NAME only
let serverTlsProxy: TlsProxy; // no client certificate asked (as with an API key)

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'foghorn-temporal-tls-'));
  certs = makeTestCertificates(dataDir);
  mongo = await startEmbeddedMongo({ port: await freePort() });
  temporal = await startEmbeddedTemporal({ port: await freePort() });
  const server = { target: temporal.address, cert: certs.serverCert, key: certs.serverKey, ca: certs.caCert };
  proxy = await startTlsProxy(server);
  namedProxy = await startTlsProxy({ ...server, cert: certs.namedServerCert, key: certs.namedServerKey });
  serverTlsProxy = await startTlsProxy({ ...server, noClientCert: true });
});

afterAll(async () => {
  await killAll();
  for (const p of [proxy, namedProxy, serverTlsProxy]) await p?.close();
  await temporal?.stop();
  await mongo?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  expect(await survivors()).toEqual([]);
});

/** The environment of a process that reaches Temporal at `address` with `tls` settings. */
async function envFor(address: string, tls: Record<string, string>): Promise<NodeJS.ProcessEnv> {
  return {
    FOGHORN_LOG_LEVEL: 'warn',
    FOGHORN_DATA_DIR: dataDir,
    FOGHORN_ADMIN_TOKEN: TOKEN,
    FOGHORN_API_ADDR: `127.0.0.1:${await freePort()}`,
    FOGHORN_WEBHOOK_ADDR: `127.0.0.1:${await freePort()}`,
    MONGODB_URI: mongo.uri,
    TEMPORAL_ADDRESS: address,
    ...tls,
  };
}

const goodClient = () => ({
  TEMPORAL_TLS_CERT_PATH: certs.clientCert,
  TEMPORAL_TLS_KEY_PATH: certs.clientKey,
  TEMPORAL_TLS_CA_PATH: certs.caCert,
});

/** A process with its stderr kept apart (spawnCli's output interleaves both streams). */
function spawnWithStderr(args: string[], env: NodeJS.ProcessEnv): { proc: CliProcess; stderr: () => string } {
  const proc = spawnCli(args, env);
  let stderr = '';
  proc.child.stderr!.on('data', (d) => (stderr += d));
  return { proc, stderr: () => stderr };
}

async function waitReady(env: NodeJS.ProcessEnv, proc: CliProcess): Promise<string> {
  const base = `http://${env.FOGHORN_API_ADDR}`;
  await until(
    `API ${proc.pid} ready`,
    async () => {
      if (proc.child.exitCode !== null) throw new Error(`the API exited (${await proc.exited}):\n${proc.output()}`);
      return fetch(`${base}/readyz`).then(
        (r) => r.status === 200,
        () => false,
      );
    },
    180_000,
    proc.output,
  );
  return `${base}/api/v1`;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function call(api: string, method: string, p: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(api + p, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: await res.json().catch(() => undefined) };
}

/** Everything a process printed must hold none of the key material or the API key. */
function expectNoSecrets(output: string): void {
  expect(output).not.toContain('PRIVATE KEY');
  expect(output).not.toContain(readFileSync(certs.clientKey, 'utf8').split('\n')[1]);
  expect(output).not.toContain(API_KEY);
}

/** A process that must fail at start: exit code, and the one line it printed on stderr. */
async function failsAtStart(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | string; line: string }> {
  const { proc, stderr } = spawnWithStderr(args, env);
  let timer: NodeJS.Timeout | undefined;
  const code = await Promise.race([
    proc.exited,
    new Promise<string>((resolve) => (timer = setTimeout(() => resolve('still running'), 180_000))),
  ]);
  clearTimeout(timer);
  const lines = stderr()
    .split('\n')
    .filter((l) => l.trim() !== '');
  expect({ code, lines }).toEqual({ code: expect.any(Number), lines: [expect.any(String)] });
  expect(code).not.toBe(0);
  expect(lines[0]).not.toMatch(/^\s+at /);
  expectNoSecrets(proc.output());
  return { code, line: lines[0] };
}

it('a worker and an API through mTLS: an incident created through the API runs its workflow on that worker', async () => {
  const workerEnv = await envFor(proxy.address, goodClient());
  const worker = spawnCli(['worker'], workerEnv);
  await waitPolling(temporal.address, 'foghorn', worker, 180_000); // through the proxy: nothing else reaches it
  const apiEnv = await envFor(proxy.address, goodClient());
  const apiProc = spawnCli(['api'], apiEnv);
  const api = await waitReady(apiEnv, apiProc);

  const created = await call(api, 'POST', '/incidents', {
    resource: 'Deployment/tls-web',
    namespace: 'tls',
    signalType: 'Custom',
    severity: 'high',
    description: 'opened through TLS',
  });
  expect(created.status).toBe(201);
  const name: string = created.body.metadata.name;

  // The incident's workflow (id: its name) had its tasks done by this worker, seen from outside.
  const direct = await Connection.connect({ address: temporal.address });
  try {
    await until(
      `workflow ${name} run by worker ${worker.pid}`,
      async () => {
        const { history } = await direct.workflowService.getWorkflowExecutionHistory({
          namespace: 'default',
          execution: { workflowId: name },
        });
        return (history?.events ?? []).some((e) =>
          e.workflowTaskCompletedEventAttributes?.identity?.startsWith(`${worker.pid}@`),
        );
      },
      120_000,
      () => worker.output() + apiProc.output(),
    );
  } finally {
    await direct.close();
  }
  // An update round trip: API → Temporal → worker → API, through TLS both ways.
  const resolved = await call(api, 'POST', `/incidents/${name}/resolve?namespace=tls`, { resolution: 'over TLS' });
  expect(resolved).toMatchObject({ status: 200, body: { status: { state: 'Resolved' } } });
  expect(proxy.accepted()).toBeGreaterThanOrEqual(2);
  expect(proxy.refused.filter((r) => !/socket hang up|ECONNRESET/.test(r))).toEqual([]);

  await Promise.all([apiProc.stop(), worker.stop()]);
  expectNoSecrets(worker.output() + apiProc.output());
});

it('a client certificate from another CA: api, worker and gateway end at start with one line', async () => {
  const rogue = {
    TEMPORAL_TLS_CERT_PATH: certs.rogueClientCert,
    TEMPORAL_TLS_KEY_PATH: certs.rogueClientKey,
    TEMPORAL_TLS_CA_PATH: certs.caCert,
  };
  const refusedBefore = proxy.refused.length;
  const results = await Promise.all(
    [['api'], ['worker'], ['gateway', 'start']].map(async (args) =>
      failsAtStart(args, await envFor(proxy.address, rogue)),
    ),
  );
  for (const { code, line } of results) {
    expect(code).toBe(1);
    expect(line).toMatch(
      new RegExp(
        `^foghorn: Temporal at ${proxy.address} refused the TLS handshake: .* \\(check TEMPORAL_TLS_CERT_PATH / TEMPORAL_TLS_KEY_PATH: does it accept this client certificate\\?\\)$`,
      ),
    );
  }
  expect(proxy.refused.length).toBeGreaterThan(refusedBefore); // the proxy saw them and said no
});

it('a CA that did not sign the server’s certificate: one line that names TEMPORAL_TLS_CA_PATH', async () => {
  const wrongCa = { ...goodClient(), TEMPORAL_TLS_CA_PATH: certs.otherCaCert };
  const results = await Promise.all(
    [['api'], ['worker']].map(async (args) => failsAtStart(args, await envFor(proxy.address, wrongCa))),
  );
  for (const { code, line } of results) {
    expect(code).toBe(1);
    expect(line).toMatch(
      new RegExp(
        `^foghorn: Temporal at ${proxy.address} presented a certificate this process does not trust: .* \\(check TEMPORAL_TLS_CA_PATH\\)$`,
      ),
    );
  }
});

it('a certificate for a name, reached at 127.0.0.1: TEMPORAL_TLS_SERVER_NAME makes it match', async () => {
  const without = await failsAtStart(['api'], await envFor(namedProxy.address, goodClient()));
  expect(without.line).toMatch(/presented a certificate for another name: .* \(check TEMPORAL_TLS_SERVER_NAME\)$/);

  const env = await envFor(namedProxy.address, { ...goodClient(), TEMPORAL_TLS_SERVER_NAME: TEST_SERVER_NAME });
  const apiProc = spawnCli(['api'], env);
  await waitReady(env, apiProc); // /readyz asks Temporal through the proxy
  await apiProc.stop();
  expect(namedProxy.accepted()).toBeGreaterThanOrEqual(1);
});

it('an API key: TLS without a client certificate, and the key shows nowhere', async () => {
  const env = await envFor(serverTlsProxy.address, { TEMPORAL_API_KEY: API_KEY, TEMPORAL_TLS_CA_PATH: certs.caCert });
  const { proc, stderr } = spawnWithStderr(['api'], env);
  const api = await waitReady(env, proc);
  const ready = await fetch(new URL('/readyz', api)).then((r) => r.text());
  await proc.stop();
  expect(serverTlsProxy.accepted()).toBeGreaterThanOrEqual(1);
  expect(ready).not.toContain(API_KEY);
  expectNoSecrets(proc.output() + stderr());

  // A plaintext server while TLS is asked for: one line, no wait for the SDK's deadline.
  const plain = await failsAtStart(['api'], await envFor(temporal.address, { TEMPORAL_API_KEY: API_KEY }));
  expect(plain.line).toMatch(/^foghorn: Temporal at .* does not answer TLS \(.*\): for a plaintext server unset/);
});

it('a missing file, or TLS settings with the embedded Temporal, end the process at start', async () => {
  const missing = path.join(dataDir, 'missing.crt');
  const env = await envFor(proxy.address, { ...goodClient(), TEMPORAL_TLS_CERT_PATH: missing });
  const { proc, stderr } = spawnWithStderr(['worker'], env);
  expect(await proc.exited).toBe(2);
  expect(stderr().trim().split('\n')).toEqual([
    'invalid configuration:',
    `  - TEMPORAL_TLS_CERT_PATH="${missing}": cannot read the file (ENOENT)`,
  ]);

  const devEnv = await envFor('', { TEMPORAL_TLS: 'true' }); // empty: unset, as for every variable
  const dev = await failsAtStart(['dev'], devEnv);
  expect(dev.line).toMatch(
    /^foghorn dev failed to start: .*set TEMPORAL_ADDRESS too \(the embedded dev server has no TLS\)$/,
  );
});
