import { createHmac, createCipheriv, createDecipheriv, createHash, randomBytes } from 'crypto';
import { KubeConfig } from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import { serverUrlProblem } from '../domain/cluster';
import { ClusterSecretModel } from './models/cluster-secret';

/**
 * Cluster credentials encrypted at rest (AES-256-GCM) with FOGHORN_SECRET_KEY, or the key kept
 * in the data directory (cli/services.ts ensureSecretKey). The key lives in this module only;
 * plaintext leaves it only as the return value of readClusterSecret. The secret's name is bound
 * into the ciphertext (additional authenticated data), so a document copied under another
 * cluster's name does not open.
 */

const ALGORITHM = 'aes-256-gcm';
const IV_BYTES = 12; // 96 bits, the size GCM is designed for
const KEY_BYTES = 32;

interface SecretKey {
  id: string;
  key: Buffer;
}

/** Retired keys first, the current key (the one that seals new writes) last. */
let keys: SecretKey[] = [];

/** A 32-byte key given as base64 (standard or url-safe) or 64 hex digits. */
export function parseSecretKey(text: string): Buffer {
  const trimmed = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64');
  if (key.length !== KEY_BYTES)
    throw new Error('the secret key must be 32 bytes, given as base64 or 64 hex digits (openssl rand -base64 32)');
  return key;
}

/** A fingerprint naming the key in stored documents; reveals nothing usable about the key. */
const keyId = (key: Buffer) =>
  createHash('sha256').update('foghorn-secret-key-id:').update(key).digest('hex').slice(0, 16);

/** Sets the key (and any retired ones, oldest first); undefined clears them (tests). */
export function configureSecretKey(key: string | undefined, opts: { retiredKeys?: readonly string[] } = {}): void {
  if (key === undefined) {
    keys = [];
    return;
  }
  keys = [...(opts.retiredKeys ?? []), key].map((k) => {
    const buf = parseSecretKey(k);
    return { id: keyId(buf), key: buf };
  });
}

/**
 * The key of the change record's content hashes (derived from the current secret key): a
 * Secret's hash in a change record cannot be checked against guessed values without it.
 */
export function contentHashKey(): Buffer {
  return createHmac('sha256', currentKey().key).update('foghorn-content-hash').digest();
}

export const generateSecretKey = () => randomBytes(KEY_BYTES).toString('base64');

function currentKey(): SecretKey {
  const key = keys[keys.length - 1];
  if (!key)
    throw new Error(
      'secret key not configured: set FOGHORN_SECRET_KEY (or FOGHORN_SECRET_KEY_FILE), or let foghorn use <data dir>/secret-key',
    );
  return key;
}

export interface SealedSecret {
  keyId: string;
  algorithm: typeof ALGORITHM;
  iv: string;
  tag: string;
  ciphertext: string;
}

/** Encrypts `plaintext` for the secret `name` (a fresh random IV every call). */
export function sealSecret(name: string, plaintext: string): SealedSecret {
  const { id, key } = currentKey();
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv(ALGORITHM, key, iv);
  cipher.setAAD(Buffer.from(name, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return {
    keyId: id,
    algorithm: ALGORITHM,
    iv: iv.toString('base64'),
    tag: cipher.getAuthTag().toString('base64'),
    ciphertext: ciphertext.toString('base64'),
  };
}

/** A stored secret that the configured keys cannot open (another key, or altered); carries no content. */
export class SecretUnreadableError extends Error {
  override name = 'SecretUnreadableError';
}

/** Decrypts a sealed secret; throws SecretUnreadableError when the key is unknown or it was altered. */
export function openSecret(name: string, sealed: SealedSecret): string {
  const entry = keys.find((k) => k.id === sealed.keyId);
  if (!entry)
    throw new SecretUnreadableError(
      `secret ${name} was sealed with key ${sealed.keyId}, which is not configured (FOGHORN_SECRET_KEY)`,
    );
  try {
    const decipher = createDecipheriv(ALGORITHM, entry.key, Buffer.from(sealed.iv, 'base64'));
    decipher.setAAD(Buffer.from(name, 'utf8'));
    decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
    const plain = Buffer.concat([decipher.update(Buffer.from(sealed.ciphertext, 'base64')), decipher.final()]);
    return plain.toString('utf8');
  } catch {
    // The cipher's own error says nothing useful and must not carry data.
    throw new SecretUnreadableError(`secret ${name} failed to decrypt: it was altered or sealed with another key`);
  }
}

/**
 * Stores (or replaces) the secret `name` for `cluster`. Idempotent by name; the version grows
 * with each write so cached plaintext is dropped.
 */
export async function writeClusterSecret(name: string, cluster: string, plaintext: string, now = new Date()) {
  const sealed = sealSecret(name, plaintext);
  await ClusterSecretModel.updateOne(
    { name },
    { $set: { cluster, ...sealed, updatedAt: now }, $inc: { version: 1 }, $setOnInsert: { createdAt: now } },
    { upsert: true },
  );
}

/**
 * The revision of a stored secret (cheap: no ciphertext is read), or undefined when absent.
 * Version plus IV: the IV is fresh on every write, so a secret deleted and written again (its
 * version restarting at 1) still gets a new revision.
 */
export async function clusterSecretRevision(name: string): Promise<string | undefined> {
  const doc = await ClusterSecretModel.findOne({ name }, { _id: 0, version: 1, iv: 1 }).lean<{
    version: number;
    iv: string;
  }>();
  return doc ? `${doc.version}/${doc.iv}` : undefined;
}

/** The decrypted secret and its revision, or undefined when no such secret is stored. */
export async function readClusterSecret(name: string): Promise<{ plaintext: string; revision: string } | undefined> {
  const doc = await ClusterSecretModel.findOne({ name }, { _id: 0 }).lean<SealedSecret & { version: number }>();
  if (!doc) return undefined;
  return { plaintext: openSecret(name, doc), revision: `${doc.version}/${doc.iv}` };
}

export async function deleteClusterSecret(name: string): Promise<boolean> {
  const res = await ClusterSecretModel.deleteOne({ name });
  return res.deletedCount > 0;
}

// ---------------------------------------------------------------------------------------------
// What a stored credential may be: one context's cluster and user, all data inline.
// ---------------------------------------------------------------------------------------------

/** A kubeconfig that cannot be stored; the message names the problem, never a value. */
export class KubeconfigError extends Error {}

const pemToBase64 = (text: string) =>
  text.trimStart().startsWith('-----BEGIN') ? Buffer.from(text, 'utf8').toString('base64') : text.trim();

/** The kubeconfig as a plain object; undefined when it is no YAML/JSON mapping. */
function parseKubeconfig(text: string): { users?: unknown } | undefined {
  try {
    const doc: unknown = parseYaml(text, { merge: true });
    return doc !== null && typeof doc === 'object' && !Array.isArray(doc) ? doc : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Parses a kubeconfig and reduces it to its current context's cluster and user. Refused: no
 * current context or server; a server that is not https (but for loopback) or carries a
 * user:password; a `proxy-url` (requests would go elsewhere); `exec` and `auth-provider` users
 * (they would run programs or call identity providers inside Foghorn's worker); file references
 * (they would read the worker's files). Returns the reduced kubeconfig (JSON, which is YAML) to store.
 */
export function normalizeKubeconfig(text: string): { kubeconfig: string; server: string } {
  const doc = parseKubeconfig(text);
  if (!doc) throw new KubeconfigError('kubeconfig does not parse as a kubeconfig (YAML or JSON)');
  // client-node reads a user's token-file while parsing, so it is refused before parsing, in
  // every user. The object checked is the one parsed (as JSON), so no two parsers disagree.
  const users = Array.isArray(doc.users) ? (doc.users as { user?: Record<string, unknown> }[]) : [];
  if (users.some((u) => u?.user?.['token-file'] !== undefined))
    throw new KubeconfigError('file references are not accepted: inline the data (token, *-data fields)');
  const kc = new KubeConfig();
  try {
    kc.loadFromString(JSON.stringify(doc));
  } catch {
    throw new KubeconfigError('kubeconfig does not parse as a kubeconfig (YAML or JSON)');
  }
  const context = kc.getContextObject(kc.getCurrentContext());
  if (!context) throw new KubeconfigError('kubeconfig has no current-context (or it names no context)');
  const cluster = kc.getCluster(context.cluster);
  if (!cluster?.server) throw new KubeconfigError('the current context of the kubeconfig has no cluster server');
  const problem = serverUrlProblem(cluster.server);
  if (problem) throw new KubeconfigError(problem);
  if (cluster.proxyUrl)
    throw new KubeconfigError('proxy-url is not accepted: Foghorn connects to the API server directly');
  const user = kc.getUser(context.user) ?? { name: 'user' };
  if (user.exec || user.authProvider)
    throw new KubeconfigError(
      'exec and auth-provider credentials are not accepted: give a token or client certificate',
    );
  if (user.certFile || user.keyFile || cluster.caFile)
    throw new KubeconfigError('file references are not accepted: inline the data (*-data fields)');
  const reduced = new KubeConfig();
  reduced.loadFromClusterAndUser(cluster, user);
  return { kubeconfig: reduced.exportConfig(), server: cluster.server };
}

/** A bearer token + server (+ CA as PEM or base64) as a kubeconfig to store. */
export function credentialsToKubeconfig(c: {
  server: string;
  token: string;
  caData?: string;
  insecureSkipTLSVerify?: boolean;
}): { kubeconfig: string; server: string } {
  const kc = new KubeConfig();
  kc.loadFromClusterAndUser(
    {
      name: 'cluster',
      server: c.server,
      skipTLSVerify: c.insecureSkipTLSVerify ?? false,
      ...(c.caData && { caData: pemToBase64(c.caData) }),
    },
    { name: 'user', token: c.token },
  );
  return normalizeKubeconfig(kc.exportConfig());
}
