import type { ReplayWorkerOptions, WorkerOptions } from '@temporalio/worker';

/**
 * How the workflow bundle is built, by every worker and by the replay test alike: webpack's
 * defaults, no aliases and no config hook. Workflows import domain/ only, and domain/ loads no
 * zod (the schemas are in contracts/, used at the edges), so the bundle has nothing to replace.
 */
export const WORKFLOW_BUNDLER_OPTIONS: NonNullable<WorkerOptions['bundlerOptions']> = {};

/** Interceptors of every workflow, by every worker and the replay test alike: the versioning baseline's guard. */
export const WORKFLOW_INTERCEPTOR_MODULES = [require.resolve('../workflows/baseline')];

/** The workflow code a worker runs, as the replay tests load it: any difference would replay other code. */
export const WORKFLOW_REPLAY_OPTIONS = {
  workflowsPath: require.resolve('../workflows'),
  bundlerOptions: WORKFLOW_BUNDLER_OPTIONS,
  interceptors: { workflowModules: WORKFLOW_INTERCEPTOR_MODULES },
} satisfies ReplayWorkerOptions;
