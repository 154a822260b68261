import type { TLSConfig } from '@temporalio/client';
import { createPrivateKey, X509Certificate } from 'crypto';
import { readFileSync } from 'fs';
import { ConfigError, type Config } from '../config/env';

/** Where Temporal is when nothing says otherwise and nothing is embedded: a local install. */
export const DEFAULT_TEMPORAL_ADDRESS = '127.0.0.1:7233';

export type TemporalSettings = Pick<
  Config,
  | 'TEMPORAL_ADDRESS'
  | 'TEMPORAL_TLS'
  | 'TEMPORAL_TLS_CERT_PATH'
  | 'TEMPORAL_TLS_KEY_PATH'
  | 'TEMPORAL_TLS_CA_PATH'
  | 'TEMPORAL_TLS_SERVER_NAME'
  | 'TEMPORAL_API_KEY'
>;

/**
 * What every connection to Temporal is made with: the client's `Connection.connect`/`lazy` and
 * the worker's `NativeConnection.connect` take these same fields. Holds the API key and the
 * client key: never log it (the configuration's secrets are redacted, this object is not).
 */
export interface TemporalConnectionOptions {
  address: string;
  /** Absent: plaintext. `{}`: TLS with the system's roots and no client certificate. */
  tls?: TLSConfig;
  /** Sent by the SDK as `Authorization: Bearer <key>` on every call. */
  apiKey?: string;
}

const TLS_SETTINGS = [
  'TEMPORAL_TLS_CERT_PATH',
  'TEMPORAL_TLS_KEY_PATH',
  'TEMPORAL_TLS_CA_PATH',
  'TEMPORAL_TLS_SERVER_NAME',
  'TEMPORAL_API_KEY',
] as const;

/** The TLS settings that are set (each of them means TLS). */
function tlsSettingsSet(config: TemporalSettings): string[] {
  return TLS_SETTINGS.filter((name) => config[name] !== undefined);
}

/** True when the settings ask for TLS: TEMPORAL_TLS=true, a TLS file or name, or an API key. */
export function temporalTlsRequested(config: TemporalSettings): boolean {
  return config.TEMPORAL_TLS === true || tlsSettingsSet(config).length > 0;
}

const errorCode = (err: unknown) => (err as NodeJS.ErrnoException).code ?? 'error';

/**
 * The connection options from the configuration, the PEM files read now (`read`, for tests).
 * `address` replaces TEMPORAL_ADDRESS (foghorn dev's embedded server). Throws ConfigError with
 * one line per problem, each naming the setting and its path, never a file's content: cert and
 * key set apart, TEMPORAL_TLS=false with TLS settings set, an unreadable or non-PEM file, a key
 * that is not the certificate's.
 */
export function temporalConnectionOptions(
  config: TemporalSettings,
  opts: { address?: string; read?: (file: string) => Buffer } = {},
): TemporalConnectionOptions {
  const read = opts.read ?? ((file: string) => readFileSync(file));
  const address = opts.address ?? config.TEMPORAL_ADDRESS ?? DEFAULT_TEMPORAL_ADDRESS;
  const problems: string[] = [];
  const { TEMPORAL_TLS_CERT_PATH: certPath, TEMPORAL_TLS_KEY_PATH: keyPath, TEMPORAL_TLS_CA_PATH: caPath } = config;
  if (!certPath !== !keyPath)
    problems.push(
      `${certPath ? 'TEMPORAL_TLS_CERT_PATH' : 'TEMPORAL_TLS_KEY_PATH'} is set without ${certPath ? 'TEMPORAL_TLS_KEY_PATH' : 'TEMPORAL_TLS_CERT_PATH'}: set both (the client certificate and its key) or neither`,
    );
  const needTls = tlsSettingsSet(config);
  if (config.TEMPORAL_TLS === false && needTls.length > 0)
    // An API key over plaintext would be readable by anyone on the path.
    problems.push(`TEMPORAL_TLS=false, but ${needTls.join(', ')} need TLS: unset TEMPORAL_TLS or them`);

  /** A file's content, or undefined with the problem recorded. */
  const load = (name: string, file: string | undefined, check: (pem: Buffer) => string | undefined) => {
    if (!file) return undefined;
    let pem: Buffer;
    try {
      pem = read(file);
    } catch (err) {
      problems.push(`${name}=${JSON.stringify(file)}: cannot read the file (${errorCode(err)})`);
      return undefined;
    }
    const wrong = check(pem);
    if (wrong) problems.push(`${name}=${JSON.stringify(file)}: ${wrong}`);
    return wrong ? undefined : pem;
  };
  const certificate = (pem: Buffer) => {
    try {
      new X509Certificate(pem);
      return undefined;
    } catch {
      return 'not a PEM certificate';
    }
  };
  const crt = load('TEMPORAL_TLS_CERT_PATH', certPath, certificate);
  const key = load('TEMPORAL_TLS_KEY_PATH', keyPath, (pem) => {
    try {
      createPrivateKey(pem);
      return undefined;
    } catch {
      return 'not a PEM private key (an encrypted key must be decrypted first: openssl pkey)';
    }
  });
  const ca = load('TEMPORAL_TLS_CA_PATH', caPath, certificate);
  if (crt && key && !new X509Certificate(crt).checkPrivateKey(createPrivateKey(key)))
    problems.push(
      `TEMPORAL_TLS_KEY_PATH=${JSON.stringify(keyPath)}: not the key of the certificate in TEMPORAL_TLS_CERT_PATH=${JSON.stringify(certPath)}`,
    );
  if (problems.length > 0) throw new ConfigError(problems);

  if (!temporalTlsRequested(config)) return { address };
  const tls: TLSConfig = {
    ...(ca && { serverRootCACertificate: ca }),
    ...(crt && key && { clientCertPair: { crt, key } }),
    ...(config.TEMPORAL_TLS_SERVER_NAME && { serverNameOverride: config.TEMPORAL_TLS_SERVER_NAME }),
  };
  return { address, tls, ...(config.TEMPORAL_API_KEY && { apiKey: config.TEMPORAL_API_KEY }) };
}
