import type { WorkerOptions } from '@temporalio/worker';

/**
 * How the workflow bundle is built, by every worker and by the replay test alike: `zod` resolves
 * to an inert placeholder (workflows/zod-placeholder.ts says why), so the schemas the domain
 * modules declare are not built again for each workflow in the sandbox.
 */
export const WORKFLOW_BUNDLER_OPTIONS: NonNullable<WorkerOptions['bundlerOptions']> = {
  webpackConfigHook: (config) => ({
    ...config,
    resolve: {
      ...config.resolve,
      alias: {
        ...(config.resolve?.alias as Record<string, string> | undefined),
        zod$: require.resolve('../workflows/zod-placeholder'),
      },
    },
  }),
};
