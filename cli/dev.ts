import { chmod, mkdir } from 'fs/promises';
import path from 'path';
import { configSecrets, createLogger } from '../api/observability';
import type { Config } from '../config/env';
import { temporalConnectionOptions, temporalTlsRequested } from './temporal-options';
import { redactText } from '../domain/redact';
import { disconnectMongo } from '../store/connection';
import { startGateway } from '../gateway/gateway';
import { stopHandOvers } from '../operations/incident-handover';
import { startDevKube } from './embedded/dev-kube';
import { startEmbeddedMongo } from './embedded/mongo';
import type { ServerProcess } from './embedded/process';
import { supervise } from './embedded/supervise';
import { startEmbeddedTemporal } from './embedded/temporal';
import { secretEnv, startWorkerProcess } from './embedded/worker';
import { close } from '../gateway/server';
import {
  connectStore,
  connectTemporal,
  ensureAdminToken,
  ensureAuditKey,
  startApi,
  startCheckpointer,
} from './services';
import { onShutdown } from './shutdown';

/** First starts of the worker process before `foghorn dev` gives up (about 20 s of pauses). */
const WORKER_START_TRIES = 5;

/** A listen address as a URL host: the wildcard is reached through loopback. */
const shownAddr = ({ host, port }: { host: string; port: number }) =>
  `${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`;

/**
 * The data directory (admin token, H2 database, audit key) for Foghorn's user only, mode 700:
 * created so, and an existing one tightened, so the agent shell's user cannot read it.
 */
export async function preparePrivateDataDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
}

/**
 * `foghorn dev` (what `npm start` runs): the whole product on one host. Embedded Temporal dev
 * server and MongoDB-wire server with data under FOGHORN_DATA_DIR, unless TEMPORAL_ADDRESS /
 * MONGODB_URI point elsewhere; then the worker in a child process of its own (supervised like the
 * servers: restarted when it dies, stopped with us) and the API and the gateway in this process.
 */
export async function dev(config: Config, kubeOptions?: { kubePort: number }): Promise<void> {
  const logger = createLogger(config.FOGHORN_LOG_LEVEL, { knownSecrets: configSecrets(config) });
  const dataDir = path.resolve(config.FOGHORN_DATA_DIR);
  await preparePrivateDataDir(dataDir);
  const children: Array<Pick<ServerProcess, 'stop'>> = [];
  const stopChildren = () => Promise.all(children.map((c) => c.stop()));
  // Registered first so a failure half-way through start-up still stops what did start.
  const steps: Array<() => Promise<unknown>> = [];
  onShutdown([() => Promise.all(steps.map((s) => s())), stopChildren]);

  try {
    if (!config.TEMPORAL_ADDRESS && temporalTlsRequested(config))
      throw new Error(
        'TEMPORAL_TLS and the TEMPORAL_TLS_* and TEMPORAL_API_KEY settings are for an external Temporal: set TEMPORAL_ADDRESS too (the embedded dev server has no TLS)',
      );
    let mongoUri = config.MONGODB_URI;
    if (!mongoUri) {
      const mongo = await supervise(
        'MongoDB-wire server',
        () =>
          startEmbeddedMongo({
            port: config.FOGHORN_MONGO_PORT,
            h2File: path.join(dataDir, 'mongo.h2'),
            maxHeap: config.FOGHORN_MONGO_HEAP,
          }),
        logger,
      );
      children.push(mongo);
      mongoUri = mongo.uri;
    }
    let temporalAddress = config.TEMPORAL_ADDRESS;
    let temporalUi: string | undefined;
    if (!temporalAddress) {
      const temporal = await supervise(
        'Temporal dev server',
        () =>
          startEmbeddedTemporal({
            port: config.FOGHORN_TEMPORAL_PORT,
            uiPort: config.FOGHORN_TEMPORAL_UI_PORT,
            dbFile: path.join(dataDir, 'temporal.db'),
            namespace: config.TEMPORAL_NAMESPACE,
            memory: config.FOGHORN_TEMPORAL_MEMORY,
          }),
        logger,
      );
      children.push(temporal);
      temporalAddress = temporal.address;
      temporalUi = temporal.uiUrl;
    }

    // Before the worker starts: the worker finds the `local` cluster through KUBECONFIG.
    const kube = kubeOptions && (await startDevKube(path.join(dataDir, 'kube'), kubeOptions.kubePort));
    if (kube) {
      children.push(kube);
      process.env.KUBECONFIG = kube.kubeconfigPath;
    }

    await connectStore(mongoUri, config, logger);
    await ensureAuditKey(config, { mirrorCheckpoints: true }); // before the worker reads the key file
    const admin = await ensureAdminToken(config);
    const temporal = await connectTemporal(
      temporalConnectionOptions(config, { address: temporalAddress }),
      config.TEMPORAL_NAMESPACE,
    );
    // Started first (bundling the workflows takes longest), ready by the time the API is.
    const starting = supervise(
      'worker',
      () =>
        startWorkerProcess({
          env: {
            ...process.env,
            TEMPORAL_ADDRESS: temporalAddress,
            ...(kube && { KUBECONFIG: kube.kubeconfigPath }),
          },
          secrets: { ...secretEnv(config), MONGODB_URI: mongoUri },
          heapMiB: config.FOGHORN_WORKER_HEAP,
        }),
      logger,
      // The API may be ready (and its servers killed and restarted) before the worker connects.
      WORKER_START_TRIES,
    );
    starting.then(
      (w) => children.unshift(w),
      () => undefined,
    ); // stopped before the servers it needs
    const server = await startApi(config, logger, temporal);
    const gateway = config.FOGHORN_WEBHOOK_ADDR ? await startGateway(config, temporal, logger) : undefined;
    const worker = await starting;
    const checkpointer = startCheckpointer(logger);
    steps.push(async () => {
      await gateway?.stop();
      await close(server);
      await worker.stop();
      await stopHandOvers(temporal); // before its connection closes
      await temporal.connection.close();
      await checkpointer.stop(); // the last audit record written is in the final checkpoint
      await disconnectMongo();
    });

    console.log(
      [
        '',
        'Foghorn is running.',
        `  Console:      http://${shownAddr(config.FOGHORN_API_ADDR)}/  (sign in with the admin token below)`,
        `  API:          http://${shownAddr(config.FOGHORN_API_ADDR)}${config.FOGHORN_BASE_PATH}`,
        `  Health:       http://${shownAddr(config.FOGHORN_API_ADDR)}/readyz`,
        ...(config.FOGHORN_WEBHOOK_ADDR
          ? [`  Webhook:      http://${shownAddr(config.FOGHORN_WEBHOOK_ADDR)}${config.FOGHORN_WEBHOOK_PATH}`]
          : []),
        `  Temporal UI:  ${temporalUi ?? '(external Temporal at ' + temporalAddress + ')'}`,
        `  MongoDB:      ${redactText(mongoUri)}`, // an external URI may carry a password
        ...(kube ? [`  Kubernetes:   ${kube.server} (cluster \`local\`, KUBECONFIG=${kube.kubeconfigPath})`] : []),
        `  Admin token:  ${admin.token}`,
        `                (from ${admin.source})`,
        'Press Ctrl-C to stop.',
        '',
      ].join('\n'),
    );
  } catch (err) {
    console.error(`foghorn dev failed to start: ${(err as Error).message}`);
    await stopChildren();
    process.exit(1);
  }
}
