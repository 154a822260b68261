import { TestWorkflowEnvironment } from '@temporalio/testing';
import { stopHandOvers } from '../../operations/incident-handover';
import type { Worker } from '@temporalio/worker';
import path from 'path';
import { TASK_PROBLEMS_SETTING } from '../../cli/embedded/temporal';
import { TOOLS_DIR } from '../../cli/paths';
import { parseConfig } from '../../config/env';
import { createWorker, type WorkerOptions } from '../../worker/worker';
import { registerSearchAttributes, withoutKeepalive } from './flow-env';
import { useMongo } from './mongo';

let counter = 0;

export interface WorkflowEnvOptions {
  /** A workflows module other than Foghorn's own (harness self-test fixtures). */
  workflowsPath?: string;
  /** Extra environment for the worker's configuration (e.g. FOGHORN_LLM_BASE_URL). */
  env?: Record<string, string>;
  /** For tests that restart workers: see createWorker below. */
  withoutWorkflowCache?: boolean;
  /**
   * The Temporal CLI's dev server (real time) instead of the time-skipping test server, telling
   * runs to continue as new at this many history events (the test server never suggests it).
   */
  continueAsNewAt?: number;
  /**
   * The Temporal CLI's dev server (real time) instead of the time-skipping test server: for tests
   * that run in real time anyway (a real Kubernetes API server) or that race a workflow's commands
   * against the server's own tasks. The test server leaves a workflow stuck when it cancels an
   * activity the same task saw complete ("ACTIVITY_UNKNOWN", temporalio/sdk-typescript#1058),
   * which a real server takes in its stride.
   */
  realTime?: boolean;
  /** Wraps the worker's activities (see createWorker). */
  wrapActivities?: WorkerOptions['wrapActivities'];
}

/**
 * The workflow-test harness: the real time-skipping test server (no download: the bootstrapped
 * binary), a real MongoDB-wire server, and a worker with the real activities.
 */
export async function useWorkflowEnv(opts: WorkflowEnvOptions = {}) {
  const mongo = await useMongo();
  const env =
    opts.continueAsNewAt === undefined && !opts.realTime
      ? await TestWorkflowEnvironment.createTimeSkipping({
          server: { executable: { type: 'existing-path', path: path.join(TOOLS_DIR, 'temporal-test-server') } },
          plugins: [withoutKeepalive],
        })
      : await TestWorkflowEnvironment.createLocal({
          server: {
            executable: { type: 'existing-path', path: path.join(TOOLS_DIR, 'temporal') },
            extraArgs: [
              '--dynamic-config-value',
              TASK_PROBLEMS_SETTING,
              ...(opts.continueAsNewAt === undefined
                ? []
                : ['--dynamic-config-value', `limit.historyCount.suggestContinueAsNew=${opts.continueAsNewAt}`]),
            ],
          },
        });
  await registerSearchAttributes(env);
  const taskQueue = `test-${process.pid}-${++counter}`;
  const config = parseConfig({ FOGHORN_LOG_LEVEL: 'warn', FOGHORN_TASK_QUEUE: taskQueue, ...opts.env });
  const newWorker = (): Promise<Worker> =>
    createWorker({
      config,
      connection: env.nativeConnection,
      namespace: env.namespace ?? 'default',
      taskQueue,
      workflowsPath: opts.workflowsPath,
      // The time-skipping server never hands a stopped worker's sticky tasks to another worker
      // (a real server does after 5s), so restart tests run without the workflow cache.
      maxCachedWorkflows: opts.withoutWorkflowCache ? 0 : undefined,
      ...(opts.wrapActivities && { wrapActivities: opts.wrapActivities }),
    });
  const worker = await newWorker();
  return {
    env,
    client: env.client,
    worker,
    /** Another worker on the same queue (restart tests). */
    newWorker,
    taskQueue,
    config,
    mongo,
    stop: async () => {
      await stopHandOvers(env.client); // before its connection closes
      await env.teardown();
      await mongo.stop();
    },
  };
}
