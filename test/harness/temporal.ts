import { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import path from 'path';
import { TOOLS_DIR } from '../../cli/paths';
import { createWorker } from '../../worker/worker';
import { useMongo } from './mongo';

let counter = 0;

/**
 * The workflow-test harness: the real time-skipping test server (no download: the bootstrapped
 * binary), a real MongoDB-wire server, and a worker with the real activities.
 */
export async function useWorkflowEnv(opts: { workflowsPath?: string; activities?: object } = {}) {
  const mongo = await useMongo();
  const env = await TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path: path.join(TOOLS_DIR, 'temporal-test-server') } },
  });
  const taskQueue = `test-${process.pid}-${++counter}`;
  const worker: Worker = await createWorker({
    connection: env.nativeConnection,
    namespace: env.namespace ?? 'default',
    taskQueue,
    ...opts,
  });
  return {
    env,
    client: env.client,
    worker,
    taskQueue,
    mongo,
    stop: async () => {
      await env.teardown();
      await mongo.stop();
    },
  };
}
