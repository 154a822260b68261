import { execFileSync } from 'child_process';
import { readFileSync, writeFileSync } from 'fs';
import { connect, type Server, type Socket } from 'net';
import path from 'path';
import { createServer } from 'tls';

/** PEM files made with openssl for one test: two CAs, and certificates signed by them. */
export interface TestCertificates {
  /** The CA that signed the server's and the good client's certificates. */
  caCert: string;
  /** A CA nobody else uses: it signed the rogue client certificate. */
  otherCaCert: string;
  /** The server's certificate (SAN: localhost, 127.0.0.1 and `serverName`) and key. */
  serverCert: string;
  serverKey: string;
  /** A server certificate for `serverName` only (connecting to 127.0.0.1 needs the override). */
  namedServerCert: string;
  namedServerKey: string;
  clientCert: string;
  clientKey: string;
  /** A client certificate signed by `otherCaCert`: the proxy must refuse it. */
  rogueClientCert: string;
  rogueClientKey: string;
}

/** The name `namedServerCert` is issued for. */
export const TEST_SERVER_NAME = 'temporal.foghorn.test';

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** A CA (self-signed, EC P-256 for speed) named `name`: `<name>.crt`, `<name>.key`. */
function makeCa(dir: string, name: string): void {
  openssl(dir, [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.crt`,
    '-days',
    '2',
    '-subj',
    `/CN=${name}`,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
}

/** A leaf certificate `<name>.crt`/`<name>.key` signed by the CA `ca`, with extensions `ext`. */
function makeLeaf(dir: string, name: string, ca: string, ext: string): void {
  openssl(dir, [
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.csr`,
    '-subj',
    `/CN=${name}`,
  ]);
  writeFileSync(path.join(dir, `${name}.ext`), ext);
  openssl(dir, [
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    `${ca}.crt`,
    '-CAkey',
    `${ca}.key`,
    '-CAcreateserial',
    '-out',
    `${name}.crt`,
    '-days',
    '2',
    '-extfile',
    `${name}.ext`,
  ]);
}

/** Makes every certificate a TLS test needs in `dir` (openssl, a second or two). */
export function makeTestCertificates(dir: string): TestCertificates {
  makeCa(dir, 'ca');
  makeCa(dir, 'other-ca');
  const leaf = (usage: string, san?: string) =>
    ['basicConstraints=CA:FALSE', `extendedKeyUsage=${usage}`, ...(san ? [`subjectAltName=${san}`] : [])].join('\n');
  makeLeaf(dir, 'server', 'ca', leaf('serverAuth', `DNS:localhost,IP:127.0.0.1,DNS:${TEST_SERVER_NAME}`));
  makeLeaf(dir, 'named-server', 'ca', leaf('serverAuth', `DNS:${TEST_SERVER_NAME}`));
  makeLeaf(dir, 'client', 'ca', leaf('clientAuth'));
  makeLeaf(dir, 'rogue-client', 'other-ca', leaf('clientAuth'));
  const file = (name: string) => path.join(dir, name);
  return {
    caCert: file('ca.crt'),
    otherCaCert: file('other-ca.crt'),
    serverCert: file('server.crt'),
    serverKey: file('server.key'),
    namedServerCert: file('named-server.crt'),
    namedServerKey: file('named-server.key'),
    clientCert: file('client.crt'),
    clientKey: file('client.key'),
    rogueClientCert: file('rogue-client.crt'),
    rogueClientKey: file('rogue-client.key'),
  };
}

export interface TlsProxy {
  /** host:port to give TEMPORAL_ADDRESS. */
  address: string;
  /** Handshakes it refused, with the reason (a client certificate from another CA, …). */
  refused: string[];
  /** Handshakes it completed (a verified client certificate each). */
  accepted(): number;
  close(): Promise<void>;
}

/**
 * A TLS-terminating proxy in front of a plaintext gRPC server, as a load balancer or Temporal
 * Cloud's front end would be: it requires a client certificate signed by `ca`, speaks h2 (gRPC
 * needs ALPN h2) and pipes the decrypted bytes to `target`.
 */
export async function startTlsProxy(opts: {
  target: string;
  cert: string;
  key: string;
  ca: string;
  /** Ask for no client certificate (server-side TLS only, as with an API key). */
  noClientCert?: boolean;
}): Promise<TlsProxy> {
  const [targetHost, targetPort] = [opts.target.slice(0, opts.target.lastIndexOf(':')), opts.target.split(':').pop()];
  const refused: string[] = [];
  let accepted = 0;
  const sockets = new Set<Socket>();
  const server = createServer(
    {
      cert: readFileSync(opts.cert),
      key: readFileSync(opts.key),
      ca: readFileSync(opts.ca),
      requestCert: !opts.noClientCert,
      rejectUnauthorized: !opts.noClientCert,
      ALPNProtocols: ['h2'],
    },
    (secure) => {
      accepted += 1;
      const upstream = connect({ host: targetHost, port: Number(targetPort) });
      for (const s of [secure, upstream]) {
        sockets.add(s);
        s.once('close', () => sockets.delete(s));
        s.on('error', () => undefined); // the other side's close ends this one too
      }
      secure.pipe(upstream).pipe(secure);
      secure.once('close', () => upstream.destroy());
      upstream.once('close', () => secure.destroy());
    },
  );
  server.on('tlsClientError', (err) => refused.push(err.message));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    address: `127.0.0.1:${port}`,
    refused,
    accepted: () => accepted,
    close: () => closeServer(server, sockets),
  };
}

function closeServer(server: Server, sockets: Set<Socket>): Promise<void> {
  for (const s of sockets) s.destroy();
  return new Promise((resolve) => server.close(() => resolve()));
}
