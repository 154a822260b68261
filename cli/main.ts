#!/usr/bin/env node
import { Command, CommanderError, Option } from 'commander';
import type { Config } from '../config/env';
import { auditCommand } from './audit';
import { addClientCommands } from './client/commands';
import { EXIT_FAILED, EXIT_USAGE } from './client/errors';
import { gatewayCommand } from './gateway';
import { limitHeapGrowth } from './heap-growth';
import { tokenCommand } from './token';

/*
 * Only commander and the API-client commands load at start: the servers' modules (Temporal,
 * Mongoose, Express, pino…) are imported inside the actions that run them, so `foghorn
 * incidents list` starts in a fraction of the time `foghorn api` needs.
 */

let loaded: Config | undefined;

/**
 * Parses the environment once (secrets also from `<NAME>_FILE`), then removes the secrets from
 * it; later calls return the same configuration. A bad variable, or a bad escalation file, stops
 * the process with every problem listed (exit 2, as main's catch does for ConfigError).
 */
async function loadConfig(): Promise<Config> {
  const { loadConfigFromEnv } = await import('./config-loader');
  const { loadEscalationFile } = await import('./escalation-file');
  const { temporalConnectionOptions } = await import('./temporal-options');
  loaded ??= loadConfigFromEnv(process.env);
  // A bad escalation file stops every command at once, before any server starts.
  if (loaded.FOGHORN_ESCALATION_FILE) loadEscalationFile(loaded.FOGHORN_ESCALATION_FILE);
  temporalConnectionOptions(loaded); // so do bad Temporal TLS settings and files
  return loaded;
}

const program = new Command('foghorn').description('Foghorn incident operations').showHelpAfterError();

program
  .command('dev')
  .description(
    'run everything on this host: embedded Temporal + MongoDB-wire servers, worker, API and (with FOGHORN_WEBHOOK_ADDR) the gateway',
  )
  .option('--kube', 'also run a local Kubernetes control plane with fake nodes, registered as the `local` cluster')
  .option('--kube-port <port>', 'the local API server port (etcd takes the next two)', '16443')
  .action(async (opts: { kube?: boolean; kubePort: string }) => {
    limitHeapGrowth();
    const config = await loadConfig();
    const { dev } = await import('./dev');
    await dev(config, opts.kube ? { kubePort: Number(opts.kubePort) } : undefined);
  });

program
  .command('api')
  .description('run the HTTP API (MONGODB_URI and TEMPORAL_ADDRESS name the servers)')
  .action(async () => {
    limitHeapGrowth();
    const config = await loadConfig();
    const { configSecrets, createLogger } = await import('../api/observability');
    const { disconnectMongo } = await import('../store/connection');
    const { onShutdown } = await import('./shutdown');
    const services = await import('./services');
    const { stopHandOvers } = await import('../operations/incident-handover');
    const { close } = await import('../gateway/server');
    const logger = createLogger(config.FOGHORN_LOG_LEVEL, { knownSecrets: configSecrets(config) });
    await services.connectStore(config.MONGODB_URI ?? services.DEFAULT_MONGODB_URI, config, logger);
    await services.ensureAuditKey(config, { mirrorCheckpoints: true });
    await services.ensureAdminToken(config);
    const { temporalConnectionOptions } = await import('./temporal-options');
    const temporal = await services.connectTemporal(temporalConnectionOptions(config), config.TEMPORAL_NAMESPACE);
    const server = await services.startApi(config, logger, temporal);
    const checkpointer = services.startCheckpointer(logger);
    logger.info({ addr: server.address() }, 'API listening');
    onShutdown([
      () => close(server),
      () => stopHandOvers(temporal), // before its connection closes
      () => temporal.connection.close(),
      () => checkpointer.stop(),
      () => disconnectMongo(),
    ]);
  });

program
  .command('worker')
  .description('run a Temporal worker for Foghorn workflows and activities')
  .addOption(
    // foghorn dev's worker process (cli/embedded/worker.ts): secrets over IPC, bound to its parent.
    new Option('--supervised', 'run as the worker of foghorn dev, its parent').hideHelp(),
  )
  .action(async (opts: { supervised?: boolean }) => {
    const supervision = opts.supervised ? await import('./embedded/worker') : undefined;
    await supervision?.receiveSecrets();
    const config = await loadConfig();
    const { configSecrets, createLogger } = await import('../api/observability');
    const { disconnectMongo } = await import('../store/connection');
    const { onShutdown } = await import('./shutdown');
    const services = await import('./services');
    const logger = createLogger(config.FOGHORN_LOG_LEVEL, { knownSecrets: configSecrets(config) });
    await services.connectStore(config.MONGODB_URI ?? services.DEFAULT_MONGODB_URI, config, logger);
    // Under foghorn dev its API process signs the checkpoints and mirrors them: one writer.
    await services.ensureAuditKey(config, { mirrorCheckpoints: !supervision });
    const { temporalConnectionOptions } = await import('./temporal-options');
    const { worker, done } = await services.startWorker(config, temporalConnectionOptions(config), logger);
    const checkpointer = supervision ? undefined : services.startCheckpointer(logger);
    logger[supervision ? 'debug' : 'info']({ taskQueue: config.FOGHORN_TASK_QUEUE }, 'worker running');
    onShutdown([async () => worker.shutdown(), () => done, async () => checkpointer?.stop(), () => disconnectMongo()]);
    supervision?.reportReady();
  });

program.addCommand(tokenCommand(loadConfig));
program.addCommand(gatewayCommand(loadConfig));
program.addCommand(auditCommand(loadConfig));
addClientCommands(program);

/** Every command throws its usage errors (exitOverride) instead of exiting 1: main makes them 2. */
function throwUsageErrors(command: Command): void {
  command.exitOverride();
  command.commands.forEach(throwUsageErrors);
}
throwUsageErrors(program);

program.parseAsync(process.argv).catch(async (err: Error) => {
  // Usage errors (unknown command or option, missing argument, a value not among the choices)
  // exit 2 for every command; help and --version exit 0.
  if (err instanceof CommanderError) process.exit(err.exitCode === 0 ? 0 : EXIT_USAGE);
  const { ConfigError } = await import('../config/env');
  if (err instanceof ConfigError) {
    console.error(err.message); // one line per problem, as for a bad variable
    process.exit(EXIT_USAGE);
  }
  // Redacted: an upstream error may echo a credential (the logger's known secrets included).
  const { redactText } = await import('../domain/redact');
  console.error(`foghorn: ${redactText(err.message)}`);
  process.exit(EXIT_FAILED);
});
