import type { Client } from '@temporalio/client';
import type { Server } from 'http';
import type { Logger } from 'pino';
import type { Config } from '../config/env';
import { startSweeper } from './dispatch';
import { close, createGatewayApp, listen } from './server';

export interface RunningGateway {
  server: Server;
  /** 503 for new requests, finish the ones in flight, stop the sweeper. */
  stop(): Promise<void>;
}

/** The start-up warnings the spec asks for when the webhook is half configured. */
export function configurationWarnings(config: Config): string[] {
  const warnings: string[] = [];
  if (!config.FOGHORN_WEBHOOK_SECRET)
    warnings.push('FOGHORN_WEBHOOK_SECRET is not set: every request to the webhook is refused with 401');
  if (!config.FOGHORN_WEBHOOK_CALLBACK_URL)
    warnings.push(
      'FOGHORN_WEBHOOK_CALLBACK_URL is not set: messages are accepted and run, but replies are only recorded, not sent',
    );
  return warnings;
}

/** Starts the webhook adapter (FOGHORN_WEBHOOK_ADDR must be set) and its dispatch sweeper. */
export async function startGateway(config: Config, client: Client, logger: Logger): Promise<RunningGateway> {
  if (!config.FOGHORN_WEBHOOK_ADDR)
    throw new Error('FOGHORN_WEBHOOK_ADDR is not set: the webhook adapter has no address');
  for (const warning of configurationWarnings(config)) logger.warn(warning);
  const dispatcher = { client, taskQueue: config.FOGHORN_TASK_QUEUE };
  const { app, beginShutdown, drain } = createGatewayApp(config, dispatcher, logger);
  const { host, port } = config.FOGHORN_WEBHOOK_ADDR;
  const server = await listen(app, host, port);
  const sweeper = startSweeper(dispatcher, logger);
  logger.info({ addr: server.address(), path: config.FOGHORN_WEBHOOK_PATH }, 'webhook adapter listening');
  return {
    server,
    stop: async () => {
      beginShutdown();
      await close(server);
      await sweeper.stop();
      await drain();
    },
  };
}
