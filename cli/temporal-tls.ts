import { isIP } from 'net';
import { checkServerIdentity, connect } from 'tls';
import type { TemporalConnectionOptions } from './temporal-options';

/**
 * Why a TLS handshake with Temporal failed, in one line that names the settings to check, or
 * undefined when the server was not reached at all (an outage, not a configuration: the SDK's
 * own connection reports it, or retries it for a lazy one). `afterHandshake`: the error came once
 * our side had finished, which under TLS 1.3 is when a server refuses a client certificate.
 */
export function describeTlsFailure(
  address: string,
  err: { code?: string; reason?: string; message: string },
  afterHandshake: boolean,
): string | undefined {
  const code = err.code ?? '';
  const reason = (err.reason ?? err.message).replace(/\s+/g, ' ').replace(/[\s:]+$/, '');
  const closed = afterHandshake && (code === 'ECONNRESET' || code === 'EOF');
  if (/^ERR_SSL_(SSLV3|TLSV1|TLSV13)_ALERT_/.test(code) || closed)
    return `Temporal at ${address} refused the TLS handshake: ${closed ? 'it closed the connection after the handshake' : reason} (check TEMPORAL_TLS_CERT_PATH / TEMPORAL_TLS_KEY_PATH: does it accept this client certificate?)`;
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID')
    return `Temporal at ${address} presented a certificate for another name: ${reason} (check TEMPORAL_TLS_SERVER_NAME)`;
  if (SERVER_CERT_REJECTED.has(code))
    return `Temporal at ${address} presented a certificate this process does not trust: ${reason} (check TEMPORAL_TLS_CA_PATH)`;
  if (/^ERR_SSL_(WRONG_VERSION_NUMBER|PACKET_LENGTH_TOO_LONG|RECORD_LAYER_FAILURE|HTTP_REQUEST)$/.test(code))
    return `Temporal at ${address} does not answer TLS (${reason}): for a plaintext server unset TEMPORAL_TLS and the TEMPORAL_TLS_* and TEMPORAL_API_KEY settings`;
  if (code.startsWith('ERR_SSL_') || code.startsWith('ERR_OSSL_'))
    return `the TLS handshake with Temporal at ${address} failed: ${reason} (check the TEMPORAL_TLS_* settings)`;
  return undefined;
}

/** OpenSSL's verdicts on a server certificate (Node's err.code for them). */
const SERVER_CERT_REJECTED = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_SIGNATURE_FAILURE',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'INVALID_CA',
  'INVALID_PURPOSE',
]);

/** HTTP/2's client preface and an empty SETTINGS frame: any gRPC server answers with its SETTINGS. */
const H2_PREFACE = Buffer.concat([
  Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'),
  Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]),
]);

export class TemporalTlsError extends Error {}

/**
 * Before the SDK connects: one TLS handshake with the same certificates, CA and name, then
 * HTTP/2's preface, to fail at start with the reason. The SDK's own errors do not give it: the
 * client waits out its deadline ("Failed to connect before the deadline"), the worker's Rust core
 * prints a transport error's debug form. Throws TemporalTlsError with one line when the handshake
 * is refused either way; returns when it succeeds, when TLS is off, and when nothing answers.
 */
export async function checkTemporalTls(options: TemporalConnectionOptions, timeoutMs = 10_000): Promise<void> {
  const { tls } = options;
  if (!tls) return;
  const i = options.address.lastIndexOf(':');
  const host = options.address.slice(0, i);
  const name = tls.serverNameOverride ?? host;
  const failure = await new Promise<string | undefined>((resolve) => {
    let handshakeDone = false;
    const socket = connect({
      host,
      port: Number(options.address.slice(i + 1)),
      ...(isIP(name) ? {} : { servername: name }), // SNI takes no IP; Node checks an IP against the host
      ...(tls.serverRootCACertificate && { ca: Buffer.from(tls.serverRootCACertificate) }),
      ...(tls.clientCertPair && {
        cert: Buffer.from(tls.clientCertPair.crt),
        key: Buffer.from(tls.clientCertPair.key),
      }),
      checkServerIdentity: (_host, cert) => checkServerIdentity(name, cert), // as the SDK checks it
      ALPNProtocols: ['h2'],
    });
    const finish = (result: string | undefined) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => finish(undefined), timeoutMs);
    socket.once('secureConnect', () => {
      handshakeDone = true;
      if (socket.alpnProtocol !== 'h2')
        return finish(
          `Temporal at ${options.address} answered TLS without HTTP/2 (ALPN h2), which gRPC needs: is it Temporal's gRPC port?`,
        );
      socket.write(H2_PREFACE);
    });
    socket.once('data', () => finish(undefined)); // the server's SETTINGS: it took the certificate
    socket.once('error', (err) => finish(describeTlsFailure(options.address, err, handshakeDone)));
    socket.once('end', () =>
      finish(handshakeDone ? describeTlsFailure(options.address, { code: 'EOF', message: 'EOF' }, true) : undefined),
    );
  });
  if (failure) throw new TemporalTlsError(failure);
}
