import type { ReplayWorkerOptions } from '@temporalio/worker';

/**
 * How every worker and the replay tests load Foghorn's workflows. The bundle is webpack's default:
 * workflows import domain/ only, which loads no zod, so nothing needs replacing. Interceptors of
 * every workflow: the versioning baseline's guard.
 */
export const WORKFLOW_INTERCEPTOR_MODULES = [require.resolve('../workflows/baseline')];

/** The workflow code a worker runs, as the replay tests load it: any difference would replay other code. */
export const WORKFLOW_REPLAY_OPTIONS = {
  workflowsPath: require.resolve('../workflows'),
  interceptors: { workflowModules: WORKFLOW_INTERCEPTOR_MODULES },
} satisfies ReplayWorkerOptions;
