import {
  DefaultLogger,
  NativeConnection,
  Runtime,
  Worker,
  type LogLevel,
  type WorkerOptions as SdkWorkerOptions,
} from '@temporalio/worker';
import { Client } from '@temporalio/client';
import { createActivities } from '../activities';
import type { Config } from '../domain/config';

export interface WorkerOptions {
  config: Config;
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  /** Tests of the harness itself pass a fixture bundle; production uses Foghorn's workflows. */
  workflowsPath?: string;
  /** Workflow cache size; 0 disables sticky execution (the test server never moves sticky tasks). */
  maxCachedWorkflows?: SdkWorkerOptions['maxCachedWorkflows'];
}

const temporalLevels: Record<string, LogLevel> = {
  fatal: 'ERROR',
  error: 'ERROR',
  warn: 'WARN',
  info: 'INFO',
  debug: 'DEBUG',
  trace: 'TRACE',
  silent: 'ERROR',
};
let runtimeInstalled = false;

/**
 * Configures the SDK runtime once per process: our log level, and no signal handlers of its
 * own — the CLI owns SIGINT/SIGTERM and shuts the worker down in order with everything else.
 */
export function installRuntime(level: string): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  Runtime.install({ logger: new DefaultLogger(temporalLevels[level] ?? 'INFO'), shutdownSignals: [] });
}

/** A worker running Foghorn's workflows and activities on one task queue. */
export function createWorker(options: WorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    workflowsPath: options.workflowsPath ?? require.resolve('../workflows'),
    // The agent's incident tools act through Temporal, over the worker's own connection.
    activities: createActivities({
      config: options.config,
      client: new Client({ connection: options.connection, namespace: options.namespace }),
      taskQueue: options.taskQueue,
    }),
    ...(options.maxCachedWorkflows !== undefined && { maxCachedWorkflows: options.maxCachedWorkflows }),
  });
}
