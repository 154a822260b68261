import { seedBuiltinRunbooks } from '../../store/runbooks';
import { useApi } from './api';
import { eventually } from './eventually';
import { useWorkflowEnv, type WorkflowEnvOptions } from './temporal';

/**
 * Everything together: the API on an ephemeral port, a worker with the real workflows and
 * activities on the time-skipping test server, one MongoDB-wire server for both.
 */
export async function useStack(opts: WorkflowEnvOptions = {}) {
  const wf = await useWorkflowEnv(opts);
  await seedBuiltinRunbooks(); // as every process start does
  const api = await useApi({ temporal: wf.client, taskQueue: wf.taskQueue, mongo: wf.mongo });
  let worker = wf.worker;
  let running = worker.run();
  return {
    ...api,
    wf,
    client: wf.client,
    /** Stops the worker (as a crash or deploy would) and starts a fresh one on the same queue. */
    restartWorker: async (whileStopped?: () => Promise<void>) => {
      worker.shutdown();
      await running;
      await whileStopped?.();
      worker = await wf.newWorker();
      running = worker.run();
    },
    /** Polls until `check` passes (workflows move asynchronously). */
    eventually,
    stop: async () => {
      worker.shutdown();
      await running;
      await api.stop();
      await wf.stop();
    },
  };
}
