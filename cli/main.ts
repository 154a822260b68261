#!/usr/bin/env node
import { Command } from 'commander';
import { configSecrets, createLogger } from '../api/observability';
import { ConfigError, type Config } from '../domain/config';
import { loadConfigFromEnv } from './config-loader';
import { loadEscalationFile } from './escalation-file';
import { disconnectMongo } from '../store/connection';
import { dev } from './dev';
import {
  closeServer,
  connectStore,
  connectTemporal,
  DEFAULT_MONGODB_URI,
  DEFAULT_TEMPORAL_ADDRESS,
  ensureAdminToken,
  ensureAuditKey,
  startApi,
  startCheckpointer,
  startWorker,
} from './services';
import { onShutdown } from './shutdown';
import { gatewayCommand } from './gateway';
import { tokenCommand } from './token';
import { auditCommand } from './audit';

let loaded: Config | undefined;

/**
 * Parses the environment once (secrets also from `<NAME>_FILE`), then removes the secrets from
 * it; later calls return the same configuration. A bad variable, or a bad escalation file, stops
 * the process with every problem listed.
 */
function loadConfig(): Config {
  try {
    loaded ??= loadConfigFromEnv(process.env);
    // A bad escalation file stops every command at once, before any server starts.
    if (loaded.FOGHORN_ESCALATION_FILE) loadEscalationFile(loaded.FOGHORN_ESCALATION_FILE);
    return loaded;
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
}

const program = new Command('foghorn').description('Foghorn incident operations').showHelpAfterError();

program
  .command('dev')
  .description(
    'run everything on this host: embedded Temporal + MongoDB-wire servers, worker, API and (with FOGHORN_WEBHOOK_ADDR) the gateway',
  )
  .option('--kube', 'also run a local Kubernetes control plane with fake nodes, registered as the `local` cluster')
  .option('--kube-port <port>', 'the local API server port (etcd takes the next two)', '16443')
  .action((opts: { kube?: boolean; kubePort: string }) =>
    dev(loadConfig(), opts.kube ? { kubePort: Number(opts.kubePort) } : undefined),
  );

program
  .command('api')
  .description('run the HTTP API (MONGODB_URI and TEMPORAL_ADDRESS name the servers)')
  .action(async () => {
    const config = loadConfig();
    const logger = createLogger(config.FOGHORN_LOG_LEVEL, { knownSecrets: configSecrets(config) });
    await connectStore(config.MONGODB_URI ?? DEFAULT_MONGODB_URI, config);
    await ensureAuditKey(config, { mirrorCheckpoints: true });
    await ensureAdminToken(config);
    const temporal = await connectTemporal(
      config.TEMPORAL_ADDRESS ?? DEFAULT_TEMPORAL_ADDRESS,
      config.TEMPORAL_NAMESPACE,
    );
    const server = await startApi(config, logger, temporal);
    const checkpointer = startCheckpointer(logger);
    logger.info({ addr: server.address() }, 'API listening');
    onShutdown([
      () => closeServer(server),
      () => temporal.connection.close(),
      () => checkpointer.stop(),
      () => disconnectMongo(),
    ]);
  });

program
  .command('worker')
  .description('run a Temporal worker for Foghorn workflows and activities')
  .action(async () => {
    const config = loadConfig();
    const logger = createLogger(config.FOGHORN_LOG_LEVEL, { knownSecrets: configSecrets(config) });
    await connectStore(config.MONGODB_URI ?? DEFAULT_MONGODB_URI, config);
    await ensureAuditKey(config, { mirrorCheckpoints: true });
    const { worker, done } = await startWorker(config, config.TEMPORAL_ADDRESS ?? DEFAULT_TEMPORAL_ADDRESS);
    const checkpointer = startCheckpointer(logger);
    logger.info({ taskQueue: config.FOGHORN_TASK_QUEUE }, 'worker running');
    onShutdown([async () => worker.shutdown(), () => done, () => checkpointer.stop(), () => disconnectMongo()]);
  });

program.addCommand(tokenCommand(loadConfig));
program.addCommand(gatewayCommand(loadConfig));
program.addCommand(auditCommand(loadConfig));

program.parseAsync(process.argv).catch((err: Error) => {
  if (err instanceof ConfigError) {
    console.error(err.message); // one line per problem, as for a bad variable
    process.exit(2);
  }
  console.error(`foghorn: ${err.message}`);
  process.exit(1);
});
