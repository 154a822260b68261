import http from 'http';
import type { AddressInfo } from 'net';
import { parseConfig } from '../../config/env';
import { useApi } from '../harness/api';
import { useMongo } from '../harness/mongo';

/**
 * FOGHORN_TRUST_PROXY behind a real ingress: a caller at 127.0.0.5 reaches an HTTP proxy that
 * forwards to the API from 127.0.0.9 and appends the caller to X-Forwarded-For, as ingress-nginx
 * does. The audit record of what the caller did names the caller only when the proxy is trusted.
 */
const CALLER = '127.0.0.5';
const INGRESS = '127.0.0.9';

/** An ingress in front of `target`: forwards every request from INGRESS, appending X-Forwarded-For. */
async function startIngress(target: string): Promise<{ url: string; close(): Promise<void> }> {
  const upstream = new URL(target);
  const server = http.createServer((req, res) => {
    const forwardedFor = [req.headers['x-forwarded-for'], req.socket.remoteAddress].filter(Boolean).join(', ');
    const out = http.request(
      {
        host: upstream.hostname,
        port: upstream.port,
        localAddress: INGRESS,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, 'x-forwarded-for': forwardedFor },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on('error', () => res.writeHead(502).end());
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** POST /tokens through the ingress from CALLER, with an optional X-Forwarded-For the caller made up. */
function createTokenVia(ingress: string, adminToken: string, user: string, spoofed?: string): Promise<number> {
  const body = JSON.stringify({ user, role: 'viewer' });
  const url = new URL('/api/v1/tokens', ingress);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        localAddress: CALLER,
        headers: {
          authorization: `Bearer ${adminToken}`,
          'content-type': 'application/json',
          ...(spoofed && { 'x-forwarded-for': spoofed }),
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('FOGHORN_TRUST_PROXY: audit sourceIP behind an ingress', () => {
  let mongo: Awaited<ReturnType<typeof useMongo>>;
  beforeAll(async () => {
    mongo = await useMongo();
  });
  afterAll(() => mongo?.stop());

  const cases: [string, false | number | string[], string | undefined, string][] = [
    ['one hop: the caller', 1, undefined, CALLER],
    ['the ingress by address: the caller', [`${INGRESS}/32`], undefined, CALLER],
    ['false: the ingress, whatever the headers say', false, undefined, INGRESS],
    ['another proxy trusted: the ingress', ['10.0.0.0/8'], undefined, INGRESS],
    ['one hop ignores what the caller made up', 1, '198.51.100.7', CALLER],
    ['a trusted chain names its first untrusted address', [INGRESS, CALLER], '198.51.100.7', '198.51.100.7'],
  ];

  it.each(cases)('%s', async (_name, trustProxy, spoofed, sourceIP) => {
    const api = await useApi({ mongo, trustProxy });
    const ingress = await startIngress(api.baseUrl);
    try {
      expect(await createTokenVia(ingress.url, api.tokens.admin, 'proxied-user', spoofed)).toBe(201);
      // Newest first: the cases run one after another, so this is the record of the call above.
      const audit = await api.call('GET', '/audit?action=token.create&limit=1');
      expect(audit.status).toBe(200);
      expect(audit.body.items[0]).toMatchObject({ action: 'token.create', sourceIP });
    } finally {
      await ingress.close();
      await api.stop();
    }
  });
});

describe('FOGHORN_TRUST_PROXY parsing', () => {
  const parse = (value?: string) => parseConfig(value === undefined ? {} : { FOGHORN_TRUST_PROXY: value });

  it('trusts loopback proxies by default', () => {
    expect(parse().FOGHORN_TRUST_PROXY).toEqual(['loopback']);
  });

  it.each([
    ['false', false],
    ['0', false],
    ['2', 2],
    ['10.0.0.0/8, fd00::/8,uniquelocal', ['10.0.0.0/8', 'fd00::/8', 'uniquelocal']],
    ['192.0.2.10', ['192.0.2.10']],
  ])('reads %j', (value, expected) => {
    expect(parse(value).FOGHORN_TRUST_PROXY).toEqual(expected);
  });

  it.each([
    ['true', 'FOGHORN_TRUST_PROXY="true": true would let any client choose its sourceIP'],
    ['10.0.0.0/33', 'not 10.0.0.0/33'],
    ['ingress.local', 'not ingress.local'],
    ['10.0.0.1/8/2', 'not 10.0.0.1/8/2'],
  ])('refuses %j with a clear message', (value, message) => {
    expect(() => parse(value)).toThrow(message);
  });
});
