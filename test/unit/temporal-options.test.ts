import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import path from 'path';
import { Writable } from 'stream';
import { configSecrets, createLogger } from '../../api/observability';
import { loadConfigFromEnv } from '../../cli/config-loader';
import { describeTlsFailure } from '../../cli/temporal-tls';
import { temporalConnectionOptions, temporalTlsRequested } from '../../cli/temporal-options';
import { ConfigError, parseConfig } from '../../config/env';
import { makeTestCertificates } from '../harness/tls-proxy';

const API_KEY = 'tmprl-api-key-0123456789abcdef';

/** The ConfigError `fn` throws (the test fails when it throws none). */
function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('no ConfigError');
}

describe('Temporal connection options', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'foghorn-temporal-tls-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const certs = makeTestCertificates(dir);
  const options = (env: Record<string, string>) => temporalConnectionOptions(parseConfig(env));

  it('are plaintext to 127.0.0.1:7233 when nothing is set, and to TEMPORAL_ADDRESS when it is', () => {
    expect(options({})).toEqual({ address: '127.0.0.1:7233' });
    expect(options({ TEMPORAL_ADDRESS: 'temporal:7233' })).toEqual({ address: 'temporal:7233' });
    expect(temporalConnectionOptions(parseConfig({}), { address: '127.0.0.1:17233' })).toEqual({
      address: '127.0.0.1:17233',
    });
    expect(temporalTlsRequested(parseConfig({ TEMPORAL_TLS: 'false' }))).toBe(false);
  });

  it('use TLS with the system roots for TEMPORAL_TLS=true', () => {
    expect(options({ TEMPORAL_ADDRESS: 'temporal.example.com:7233', TEMPORAL_TLS: 'true' })).toEqual({
      address: 'temporal.example.com:7233',
      tls: {},
    });
  });

  it('carry the client certificate pair, the CA and the server name, read from their files', () => {
    const built = options({
      TEMPORAL_TLS_CERT_PATH: certs.clientCert,
      TEMPORAL_TLS_KEY_PATH: certs.clientKey,
      TEMPORAL_TLS_CA_PATH: certs.caCert,
      TEMPORAL_TLS_SERVER_NAME: 'temporal.internal',
    });
    expect(built.tls).toEqual({
      clientCertPair: { crt: readFileSync(certs.clientCert), key: readFileSync(certs.clientKey) },
      serverRootCACertificate: readFileSync(certs.caCert),
      serverNameOverride: 'temporal.internal',
    });
    expect(built.apiKey).toBeUndefined();
    // A CA alone (server-side TLS, no client certificate) is TLS too.
    expect(options({ TEMPORAL_TLS_CA_PATH: certs.caCert }).tls).toEqual({
      serverRootCACertificate: readFileSync(certs.caCert),
    });
  });

  it('send an API key with TLS on (Temporal Cloud), also from TEMPORAL_API_KEY_FILE', () => {
    expect(options({ TEMPORAL_ADDRESS: 'us-east-1.aws.api.temporal.io:7233', TEMPORAL_API_KEY: API_KEY })).toEqual({
      address: 'us-east-1.aws.api.temporal.io:7233',
      tls: {},
      apiKey: API_KEY,
    });
    const keyFile = path.join(dir, 'api-key');
    writeFileSync(keyFile, `${API_KEY}\n`, { mode: 0o600 });
    const env: Record<string, string | undefined> = { TEMPORAL_API_KEY_FILE: keyFile };
    expect(temporalConnectionOptions(loadConfigFromEnv(env)).apiKey).toBe(API_KEY);
    expect(env).toEqual({}); // scrubbed: no child process inherits it
  });

  it('never show the API key in logged configuration or a configuration error', () => {
    let logged = '';
    const stream = new Writable({ write: (chunk, _enc, done) => ((logged += chunk), done()) });
    const config = parseConfig({ TEMPORAL_API_KEY: API_KEY, TEMPORAL_TLS: 'true' });
    const logger = createLogger('info', { pretty: false, stream, knownSecrets: configSecrets(config) });
    logger.info({ config }, 'configuration');
    logger.info({ temporal: temporalConnectionOptions(config) }, `connecting with ${API_KEY}`);
    expect(logged).toContain('TEMPORAL_API_KEY');
    expect(logged).not.toContain(API_KEY);

    const error = configError(() => parseConfig({ TEMPORAL_API_KEY: API_KEY, TEMPORAL_TLS: 'yes' }));
    expect(error.problems).toEqual(['TEMPORAL_TLS="yes": must be true or false']);
    const bad = configError(() =>
      temporalConnectionOptions(parseConfig({ TEMPORAL_API_KEY: API_KEY, TEMPORAL_TLS: 'false' })),
    );
    expect(bad.problems).toEqual(['TEMPORAL_TLS=false, but TEMPORAL_API_KEY need TLS: unset TEMPORAL_TLS or them']);
    expect(bad.message).not.toContain(API_KEY);
  });

  it('need the client certificate and its key together', () => {
    expect(configError(() => options({ TEMPORAL_TLS_CERT_PATH: certs.clientCert })).problems).toEqual([
      'TEMPORAL_TLS_CERT_PATH is set without TEMPORAL_TLS_KEY_PATH: set both (the client certificate and its key) or neither',
    ]);
    expect(configError(() => options({ TEMPORAL_TLS_KEY_PATH: certs.clientKey })).problems).toEqual([
      'TEMPORAL_TLS_KEY_PATH is set without TEMPORAL_TLS_CERT_PATH: set both (the client certificate and its key) or neither',
    ]);
    expect(
      configError(() =>
        options({ TEMPORAL_TLS_CERT_PATH: certs.clientCert, TEMPORAL_TLS_KEY_PATH: certs.rogueClientKey }),
      ).problems,
    ).toEqual([
      `TEMPORAL_TLS_KEY_PATH="${certs.rogueClientKey}": not the key of the certificate in TEMPORAL_TLS_CERT_PATH="${certs.clientCert}"`,
    ]);
  });

  it('name the setting and the path of a file that cannot be read or is no PEM, never its content', () => {
    const missing = path.join(dir, 'missing.crt');
    const error = configError(() =>
      options({
        TEMPORAL_TLS_CERT_PATH: missing,
        TEMPORAL_TLS_KEY_PATH: certs.clientCert, // a certificate where the key belongs
        TEMPORAL_TLS_CA_PATH: certs.clientKey, // a key where the CA belongs
      }),
    );
    expect(error.problems).toEqual([
      `TEMPORAL_TLS_CERT_PATH="${missing}": cannot read the file (ENOENT)`,
      `TEMPORAL_TLS_KEY_PATH="${certs.clientCert}": not a PEM private key (an encrypted key must be decrypted first: openssl pkey)`,
      `TEMPORAL_TLS_CA_PATH="${certs.clientKey}": not a PEM certificate`,
    ]);
    expect(error.message).not.toContain('-----BEGIN');
    // Unreadable (a directory), through the same loader the CLI uses at start.
    expect(configError(() => options({ TEMPORAL_TLS_CA_PATH: dir })).problems).toEqual([
      `TEMPORAL_TLS_CA_PATH="${dir}": cannot read the file (EISDIR)`,
    ]);
  });

  it('reject a server name that is not a host name', () => {
    expect(configError(() => parseConfig({ TEMPORAL_TLS_SERVER_NAME: 'https://x' })).problems).toEqual([
      'TEMPORAL_TLS_SERVER_NAME="https://x": must be a host name such as temporal.example.com',
    ]);
  });
});

describe('a failed TLS handshake with Temporal', () => {
  const at = '10.0.0.1:7233';
  it('names what to check, in one line', () => {
    const alert = {
      code: 'ERR_SSL_TLSV1_ALERT_UNKNOWN_CA',
      reason: 'tlsv1 alert unknown ca',
      message: 'x:\nSSL alert',
    };
    expect(describeTlsFailure(at, alert, true)).toBe(
      'Temporal at 10.0.0.1:7233 refused the TLS handshake: tlsv1 alert unknown ca (check TEMPORAL_TLS_CERT_PATH / TEMPORAL_TLS_KEY_PATH: does it accept this client certificate?)',
    );
    expect(describeTlsFailure(at, { code: 'ECONNRESET', message: 'read ECONNRESET' }, true)).toMatch(
      /refused the TLS handshake: it closed the connection after the handshake/,
    );
    expect(
      describeTlsFailure(
        at,
        { code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', message: 'unable to verify the first certificate' },
        false,
      ),
    ).toBe(
      'Temporal at 10.0.0.1:7233 presented a certificate this process does not trust: unable to verify the first certificate (check TEMPORAL_TLS_CA_PATH)',
    );
    expect(
      describeTlsFailure(
        at,
        { code: 'ERR_TLS_CERT_ALTNAME_INVALID', message: "Host: a. is not in the cert's altnames: DNS:b" },
        false,
      ),
    ).toMatch(/for another name: .* \(check TEMPORAL_TLS_SERVER_NAME\)$/);
    expect(
      describeTlsFailure(
        at,
        { code: 'ERR_SSL_WRONG_VERSION_NUMBER', reason: 'wrong version number', message: '' },
        false,
      ),
    ).toMatch(/does not answer TLS \(wrong version number\)/);
    for (const failure of [alert, { code: 'CERT_HAS_EXPIRED', message: 'certificate has expired' }])
      expect(describeTlsFailure(at, failure, false)).not.toMatch(/\n/);
  });

  it('is no verdict when nothing answered: an outage is the SDK connection’s to report', () => {
    for (const code of ['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ETIMEDOUT'])
      expect(describeTlsFailure(at, { code, message: code }, false)).toBeUndefined();
    expect(describeTlsFailure(at, { code: 'ECONNRESET', message: 'reset' }, false)).toBeUndefined();
  });
});
