import { NativeConnection, Worker } from '@temporalio/worker';
import { activities as defaultActivities } from '../activities';

export interface WorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  /** Tests may pass extra workflows (a bundle path) or activities; production uses the defaults. */
  workflowsPath?: string;
  activities?: object;
}

/** A worker running Foghorn's workflows and activities on one task queue. */
export function createWorker(options: WorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    workflowsPath: options.workflowsPath ?? require.resolve('../workflows'),
    activities: options.activities ?? defaultActivities,
  });
}
