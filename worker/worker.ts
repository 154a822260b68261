import {
  LogTimestamp,
  makeTelemetryFilterString,
  NativeConnection,
  Runtime,
  Worker,
  type LogLevel,
  type LogMetadata,
  type Logger as TemporalLogger,
  type WorkerOptions as SdkWorkerOptions,
} from '@temporalio/worker';
import { Client } from '@temporalio/client';
import { createActivities, type Activities } from '../activities';
import type { Config } from '../config/env';
import type { Logger as PinoLogger } from 'pino';
import { WORKFLOW_INTERCEPTOR_MODULES } from './workflow-bundle';

export interface WorkerOptions {
  config: Config;
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  /** Tests of the harness itself pass a fixture bundle; production uses Foghorn's workflows. */
  workflowsPath?: string;
  /** Workflow cache size; 0 disables sticky execution (the test server never moves sticky tasks). */
  maxCachedWorkflows?: SdkWorkerOptions['maxCachedWorkflows'];
  /** Tests wrap an activity to act at a chosen moment (a resolve while the triage runs). */
  wrapActivities?: (activities: Activities) => Activities;
}

const pinoLevels: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

/**
 * The SDK's log records written by our logger (same format, same redaction of secrets: an
 * activity failure may carry request data). The worker's own info chatter — webpack bundle
 * stats, "Workflow bundle created", state changes — is debug here: quiet by default, warnings
 * and errors (a failed bundle included) as they are.
 */
export function temporalLogger(logger: PinoLogger): TemporalLogger {
  const log = (level: LogLevel, message: string, meta: LogMetadata = {}) => {
    const { [LogTimestamp]: _timestamp, ...fields } = meta;
    const sdkChatter = fields.sdkComponent === 'worker' && level === 'INFO';
    logger[sdkChatter ? 'debug' : pinoLevels[level]](fields, message);
  };
  return {
    log,
    trace: (message, meta) => log('TRACE', message, meta),
    debug: (message, meta) => log('DEBUG', message, meta),
    info: (message, meta) => log('INFO', message, meta),
    warn: (message, meta) => log('WARN', message, meta),
    error: (message, meta) => log('ERROR', message, meta),
  };
}

let runtimeInstalled = false;

/**
 * Configures the SDK runtime once per process: our logger (the Rust core's warnings are forwarded
 * to it too), and no signal handlers of its own — the CLI owns SIGINT/SIGTERM and shuts the
 * worker down in order with everything else.
 */
export function installRuntime(logger: PinoLogger): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  Runtime.install({
    logger: temporalLogger(logger),
    telemetryOptions: { logging: { forward: {}, filter: makeTelemetryFilterString({ core: 'WARN', other: 'ERROR' }) } },
    shutdownSignals: [],
  });
}

/** A worker running Foghorn's workflows and activities on one task queue. */
export function createWorker(options: WorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    workflowsPath: options.workflowsPath ?? require.resolve('../workflows'),
    interceptors: { workflowModules: WORKFLOW_INTERCEPTOR_MODULES },
    // The agent's incident tools act through Temporal, over the worker's own connection.
    activities: (options.wrapActivities ?? ((activities) => activities))(
      createActivities({
        config: options.config,
        client: new Client({ connection: options.connection, namespace: options.namespace }),
        taskQueue: options.taskQueue,
      }),
    ),
    ...(options.maxCachedWorkflows !== undefined && { maxCachedWorkflows: options.maxCachedWorkflows }),
  });
}
