import { Command } from 'commander';
import { connect } from 'net';
import type { Config } from '../config/env';
import { formatAdapterStatuses } from '../domain/gateway-status';
import { limitHeapGrowth } from './heap-growth';

/** True when something accepts TCP connections on the adapter's address. */
function listening(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: host === '0.0.0.0' ? '127.0.0.1' : host, port, timeout: 1_000 });
    const done = (up: boolean) => {
      socket.destroy();
      resolve(up);
    };
    socket
      .once('connect', () => done(true))
      .once('error', () => done(false))
      .once('timeout', () => done(false));
  });
}

/** `foghorn gateway start|status`: the chat gateway's own process, and what it is doing. */
export function gatewayCommand(config: () => Promise<Config>): Command {
  const gateway = new Command('gateway').description('the chat gateway (webhook channel)');
  gateway
    .command('start')
    .description('run the gateway: the webhook adapter starts when FOGHORN_WEBHOOK_ADDR is set')
    .action(async () => {
      limitHeapGrowth();
      const cfg = await config();
      // The servers' modules load only when the gateway runs (Temporal and Mongoose are slow to load).
      const { configSecrets, createLogger } = await import('../api/observability');
      const { startGateway } = await import('../gateway/gateway');
      const { disconnectMongo } = await import('../store/connection');
      const { connectStore, connectTemporal, DEFAULT_MONGODB_URI } = await import('./services');
      const { temporalConnectionOptions } = await import('./temporal-options');
      const { onShutdown } = await import('./shutdown');
      const logger = createLogger(cfg.FOGHORN_LOG_LEVEL, { knownSecrets: configSecrets(cfg) });
      if (!cfg.FOGHORN_WEBHOOK_ADDR) {
        console.error(
          'foghorn gateway: FOGHORN_WEBHOOK_ADDR is not set (e.g. FOGHORN_WEBHOOK_ADDR=:8085); no adapter to start',
        );
        process.exit(2);
      }
      await connectStore(cfg.MONGODB_URI ?? DEFAULT_MONGODB_URI, undefined, logger);
      const temporal = await connectTemporal(temporalConnectionOptions(cfg), cfg.TEMPORAL_NAMESPACE, { lazy: true });
      const running = await startGateway(cfg, temporal, logger);
      onShutdown([() => running.stop(), () => temporal.connection.close(), () => disconnectMongo()]);
    });
  gateway
    .command('status')
    .description('list the active adapters: address, path, callback host, secret set, queue depth, last delivery error')
    .action(async () => {
      const cfg = await config();
      const { gatewayStatus } = await import('../store/chat');
      const { withStore } = await import('./services');
      await withStore(cfg, async () => {
        const adapters = await gatewayStatus(cfg);
        console.log(formatAdapterStatuses(adapters));
        for (const a of adapters) {
          const { host, port } = cfg.FOGHORN_WEBHOOK_ADDR!;
          console.log(`  listening:      ${(await listening(host, port)) ? 'yes' : 'no'} (${a.name})`);
        }
      });
    });
  return gateway;
}
