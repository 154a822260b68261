import { Client, Connection } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { randomBytes } from 'crypto';
import { link, mkdir, readFile, unlink, writeFile } from 'fs/promises';
import type { Server } from 'http';
import path from 'path';
import type { Logger } from 'pino';
import { createApp } from '../api/app';
import { temporalUiNamespaceUrl, type Config } from '../config/env';
import type { TemporalConnectionOptions } from './temporal-options';
import { connectMongo, disconnectMongo, watchMongo } from '../store/connection';
import {
  claimAuditChain,
  configureAuditCheckpointFile,
  configureAuditKey,
  hasKeyedAuditRecords,
  startAuditCheckpointer,
} from '../store/audit';
import { seedBuiltinRunbooks } from '../store/runbooks';
import { listPolicies, provisionEscalationFile } from '../store/escalation-config';
import { unpagedIncidents } from '../domain/escalation-policy';
import { generateToken, seedAdminToken } from '../store/tokens';
import { ensureReconcilerSchedule } from '../operations/reconciler-schedule';
import { ensureClusterWorkflows } from '../operations/clusters';
import { configureSecretKey, generateSecretKey } from '../store/cluster-secrets';
import { createWorker, installRuntime } from '../worker/worker';
import { listen } from '../gateway/server';
import { loadEscalationFile } from './escalation-file';
import { checkTemporalTls } from './temporal-tls';

/** The default when no embedded server runs and nothing is configured: a local install. */
export const DEFAULT_MONGODB_URI = 'mongodb://127.0.0.1:27017/foghorn';

/** Runs a one-shot CLI command against the store (MONGODB_URI or the local default). */
export async function withStore<T>(config: Config, fn: () => Promise<T>): Promise<T> {
  await connectMongo(config.MONGODB_URI ?? DEFAULT_MONGODB_URI);
  try {
    return await fn();
  } finally {
    await disconnectMongo();
  }
}

/**
 * Connects Mongoose and brings the store up to date (indexes, built-in runbooks, and with
 * `config` the escalation file), and watches the connection for the process's lifetime
 * (watchMongo). A bad escalation file throws ConfigError before connecting.
 */
export async function connectStore(
  uri: string,
  config?: Config,
  logger?: Pick<Logger, 'warn' | 'info'>,
): Promise<void> {
  const escalation = config?.FOGHORN_ESCALATION_FILE ? loadEscalationFile(config.FOGHORN_ESCALATION_FILE) : undefined;
  await connectMongo(uri, { countCommandsIn: config?.FOGHORN_STORE_COMMAND_COUNTS });
  watchMongo(uri, {
    lost: (reason) => logger?.warn({ reason }, 'MongoDB connection lost: requests that need it answer 503'),
    back: (downMs) => logger?.info({ downMs }, 'MongoDB connection back'),
    replaced: (downMs) =>
      logger?.warn({ downMs }, 'MongoDB answered a new connection while this process stayed disconnected: reconnected'),
  });
  await seedBuiltinRunbooks();
  if (config && escalation) {
    await ensureSecretKey(config); // the file's targets are stored sealed
    await provisionEscalationFile(escalation);
  }
}

/**
 * A secret kept in a file of the data directory (mode 600): read it, or make one with `make`.
 * The new one is written aside, then linked into place: link() is atomic and refuses an existing
 * file, so processes starting at once all end up with the same secret, never a half-written one.
 */
async function readOrCreateSecretFile(file: string, make: () => string | Promise<string>): Promise<string> {
  const existing = (await readFile(file, 'utf8').catch(() => '')).trim();
  if (existing) return existing;
  const secret = await make();
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  await writeFile(tmp, secret + '\n', { mode: 0o600, flag: 'wx' });
  try {
    await link(tmp, file);
    return secret;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return (await readFile(file, 'utf8')).trim();
  } finally {
    await unlink(tmp);
  }
}

/**
 * The admin token: FOGHORN_ADMIN_TOKEN when set, else the one kept in the data directory,
 * else a new one written there (mode 600). Seeded into the token store each start.
 */
export async function ensureAdminToken(config: Config): Promise<{ token: string; source: string }> {
  if (config.FOGHORN_ADMIN_TOKEN) {
    await seedAdminToken(config.FOGHORN_ADMIN_TOKEN);
    return { token: config.FOGHORN_ADMIN_TOKEN, source: 'FOGHORN_ADMIN_TOKEN' };
  }
  const file = path.resolve(config.FOGHORN_DATA_DIR, 'admin-token');
  const token = await readOrCreateSecretFile(file, generateToken);
  await seedAdminToken(token);
  return { token, source: file };
}

/**
 * The audit key (docs/audit.md), handed to the store: FOGHORN_AUDIT_KEY (or _FILE) when set,
 * else the one kept in the data directory, else a new one written there (mode 600) — unless the
 * chain already holds keyed records, which a new key could never verify: then stop, loudly. Also
 * stops when the chain was started with another key (store/audit.ts claimAuditChain).
 * Long-running processes also mirror the newest checkpoint to <data dir>/audit-checkpoint.json.
 * Call after the store is connected.
 */
export async function ensureAuditKey(
  config: Config,
  opts: { mirrorCheckpoints?: boolean } = {},
): Promise<{ source: string }> {
  const dataDir = path.resolve(config.FOGHORN_DATA_DIR);
  configureAuditCheckpointFile(opts.mirrorCheckpoints ? path.join(dataDir, 'audit-checkpoint.json') : undefined);
  const retiredKeys = config.FOGHORN_AUDIT_RETIRED_KEYS ?? [];
  if (config.FOGHORN_AUDIT_KEY) {
    configureAuditKey(config.FOGHORN_AUDIT_KEY, { retiredKeys });
    await claimAuditChain();
    return { source: 'FOGHORN_AUDIT_KEY' };
  }
  const file = path.join(dataDir, 'audit-key');
  const key = await readOrCreateSecretFile(file, async () => {
    if (await hasKeyedAuditRecords())
      throw new Error(
        `the audit log in MongoDB was written with an audit key that this process does not have (no FOGHORN_AUDIT_KEY, no ${file}): set FOGHORN_AUDIT_KEY or FOGHORN_AUDIT_KEY_FILE to that key`,
      );
    return randomBytes(32).toString('base64url');
  });
  configureAuditKey(key, { retiredKeys });
  await claimAuditChain();
  return { source: file };
}

/**
 * The key that encrypts cluster credentials (store/cluster-secrets.ts): FOGHORN_SECRET_KEY (or
 * _FILE) when set, else the one kept in the data directory, else a new one written there
 * (mode 600). Losing it makes stored credentials unreadable: clusters must be registered again.
 */
export async function ensureSecretKey(config: Config): Promise<{ source: string }> {
  const retiredKeys = config.FOGHORN_SECRET_RETIRED_KEYS ?? []; // what they sealed still opens
  if (config.FOGHORN_SECRET_KEY) {
    configureSecretKey(config.FOGHORN_SECRET_KEY, { retiredKeys });
    return { source: 'FOGHORN_SECRET_KEY' };
  }
  const file = path.resolve(config.FOGHORN_DATA_DIR, 'secret-key');
  configureSecretKey(await readOrCreateSecretFile(file, generateSecretKey), { retiredKeys });
  return { source: file };
}

/**
 * Signed checkpoints of the audit head: one now, one a minute, one on stop() — stop it before
 * disconnecting MongoDB. Failures are logged (message only) and retried at the next tick.
 */
export function startCheckpointer(logger: Logger, intervalMs = 60_000): { stop(): Promise<void> } {
  return startAuditCheckpointer({
    intervalMs,
    onError: (err) => logger.warn({ error: (err as Error).message }, 'audit checkpoint failed'),
  });
}

/** An SDK connection error in one line that names the server (main prints it). */
function cannotConnect(address: string, err: unknown): Error {
  const { message, cause } = err as Error;
  const detail = cause instanceof Error ? `${message}: ${cause.message}` : message;
  return new Error(`cannot connect to Temporal at ${address}: ${detail.replace(/\s+/g, ' ').trim()}`);
}

/**
 * A Temporal client (options: temporal-options.ts). `lazy` connects on first use instead of
 * failing now: the gateway must start (and store messages) during a Temporal outage; its sweeper
 * hands them over later. A refused TLS handshake fails now even so: that is configuration, not an
 * outage.
 */
export async function connectTemporal(
  options: TemporalConnectionOptions,
  namespace: string,
  opts: { lazy?: boolean } = {},
): Promise<Client> {
  await checkTemporalTls(options);
  const connection = opts.lazy
    ? Connection.lazy(options)
    : await Connection.connect(options).catch((err: unknown) => {
        throw cannotConnect(options.address, err);
      });
  return new Client({ connection, namespace });
}

export async function startApi(config: Config, logger: Logger, temporal: Client): Promise<Server> {
  await ensureSecretKey(config); // cluster registration seals credentials
  const app = createApp({
    basePath: config.FOGHORN_BASE_PATH,
    rateLimitPerMinute: config.FOGHORN_RATE_LIMIT,
    logger,
    temporal,
    taskQueue: config.FOGHORN_TASK_QUEUE,
    alertnameMap: config.FOGHORN_ALERTNAME_MAP,
    pagerDutyUrl: config.FOGHORN_PAGERDUTY_URL,
    slaTargets: config.FOGHORN_SLA_TARGETS,
    temporalUi: temporalUiNamespaceUrl(config),
    trustProxy: config.FOGHORN_TRUST_PROXY,
  });
  const { host, port } = config.FOGHORN_API_ADDR;
  return listen(app, host, port);
}

/**
 * Says once, as the worker starts, what would page nobody (docs/escalation.md, "When nobody would
 * be paged"): an approval nobody hears of expires, an escalation nobody hears of waits. The
 * sentences are returned too. Call after the secret key is configured (policies are sealed).
 */
export async function warnWhenNobodyIsPaged(config: Config, logger: Pick<Logger, 'warn'>): Promise<string[]> {
  const missing = unpagedIncidents(await listPolicies(), !!config.FOGHORN_WEBHOOK_HOME_CHANNEL);
  if (missing.length) logger.warn({ missing }, `${missing.join('; ')}: approvals and escalations page nobody`);
  return missing;
}

export async function startWorker(
  config: Config,
  temporal: TemporalConnectionOptions,
  logger: Logger,
): Promise<{ worker: Worker; done: Promise<void> }> {
  installRuntime(logger);
  await checkTemporalTls(temporal);
  const connection = await NativeConnection.connect(temporal).catch((err: unknown) => {
    throw cannotConnect(temporal.address, err);
  });
  const worker = await createWorker({
    config,
    connection,
    maxCachedWorkflows: config.FOGHORN_WORKFLOW_CACHE,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: config.FOGHORN_TASK_QUEUE,
  });
  const client = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE });
  await ensureReconcilerSchedule(client, config.FOGHORN_TASK_QUEUE, config.FOGHORN_RECONCILE_INTERVAL);
  await ensureSecretKey(config); // activities open cluster credentials
  await warnWhenNobodyIsPaged(config, logger);
  await ensureClusterWorkflows({ client, taskQueue: config.FOGHORN_TASK_QUEUE });
  const done = worker.run().finally(() => connection.close());
  return { worker, done };
}
