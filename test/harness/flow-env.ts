import { TestWorkflowEnvironment } from '@temporalio/testing';
import {
  bundleWorkflowCode,
  DefaultLogger,
  makeTelemetryFilterString,
  Runtime,
  Worker,
  type WorkflowBundleOption,
} from '@temporalio/worker';
import type { ConnectionPlugin } from '@temporalio/client';
import fs from 'fs';
import path from 'path';
import { TOOLS_DIR } from '../../cli/paths';
import { WORKFLOW_REPLAY_OPTIONS } from '../../worker/workflow-bundle';
import { SEARCH_ATTRIBUTES } from '../../workflows/search-attributes';

/**
 * The fast layer's workflow harness (test/flows/): the time-skipping test server and a worker
 * whose activities are the test's fakes. Nothing else runs: no MongoDB, no API, no Kubernetes.
 * test/harness/temporal.ts builds on the same server (with real activities and a real store).
 */

/**
 * The SDK's client connection pings every 30 s, and the time-skipping test server (grpc-java)
 * permits one ping in 5 minutes: at the third strike it closes the connection with "too many
 * pings". That happens when `env.sleep` waits a minute and a half in real time (a loaded machine
 * running the timers' activities), and the SDK then retries the sleep, which is not idempotent:
 * it unlocks time skipping a second time and sleeps its whole duration again, so activities time
 * out in test time, timers overshoot, and an unbalanced unlock can leave time running at wall
 * speed for the rest of the file. Without keepalive pings, the connection is never closed.
 * (Also test/harness/temporal.ts's, for the slow layer.)
 */
export const withoutKeepalive: ConnectionPlugin = {
  name: 'foghorn-test-no-keepalive',
  configureConnection: (options) => ({
    ...options,
    channelArgs: { ...options.channelArgs, 'grpc.keepalive_time_ms': -1 },
  }),
};

/** Foghorn's search attributes, registered on a test server as the dev server does at start. */
export async function registerSearchAttributes(env: TestWorkflowEnvironment): Promise<void> {
  const KEYWORD = 2; // temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD
  await env.connection.operatorService.addSearchAttributes({
    namespace: env.namespace ?? 'default',
    searchAttributes: Object.fromEntries(SEARCH_ATTRIBUTES.map((key) => [key.name, KEYWORD])),
  });
}

/** The bootstrapped time-skipping server (`npm run bootstrap -- --test`): no download. */
export async function createTimeSkippingEnv(): Promise<TestWorkflowEnvironment> {
  const server = path.join(TOOLS_DIR, 'temporal-test-server');
  if (!fs.existsSync(server)) throw new Error(`${server} is missing: run \`npm run bootstrap\` first`);
  const env = await TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path: server } },
    plugins: [withoutKeepalive],
  });
  await registerSearchAttributes(env);
  return env;
}

/** Set by test/harness/flow-bundle-setup.ts (the fast layer's globalSetup): the bundle built once for all files. */
export const FLOW_BUNDLE_VARIABLE = 'FOGHORN_FLOW_BUNDLE';

/** Foghorn's workflows bundled as every worker bundles them (worker/workflow-bundle.ts), interceptors included. */
export async function buildWorkflowBundle(): Promise<{ code: string }> {
  const { code } = await bundleWorkflowCode({
    workflowsPath: WORKFLOW_REPLAY_OPTIONS.workflowsPath,
    workflowInterceptorModules: WORKFLOW_REPLAY_OPTIONS.interceptors.workflowModules,
    logger: new DefaultLogger('WARN'),
  });
  return { code };
}

let bundle: Promise<WorkflowBundleOption> | undefined;

/**
 * The workflow bundle: the one the fast layer's globalSetup wrote, else (a file run by the full
 * suite's config) built once for this test file.
 */
export function workflowBundle(): Promise<WorkflowBundleOption> {
  const built = process.env[FLOW_BUNDLE_VARIABLE];
  bundle ??= built && fs.existsSync(built) ? Promise.resolve({ codePath: built }) : buildWorkflowBundle();
  return bundle;
}

/** Activity functions by name, as Worker.create takes them. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the fakes' signatures are the activities' own
export type ActivityFns = Record<string, (...args: any[]) => Promise<unknown>>;

let queues = 0;
let runtimeInstalled = false;

/** Workers' and workflows' logs at WARN and up only: a test's output shows its failures, not each worker's start. */
function installQuietRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  Runtime.install({
    logger: new DefaultLogger('WARN'),
    telemetryOptions: {
      logging: { forward: {}, filter: makeTelemetryFilterString({ core: 'WARN', other: 'ERROR' }) },
    },
  });
}

/**
 * One time-skipping server for a test file and a way to run a worker of Foghorn's workflows
 * with given activities (a fresh task queue per worker, so a test never sees another's tasks).
 */
export async function useFlowEnv() {
  installQuietRuntime();
  const [env, code] = await Promise.all([createTimeSkippingEnv(), workflowBundle()]);
  /** A worker of Foghorn's workflows with `activities`, on a task queue of its own. */
  const worker = async (activities: ActivityFns): Promise<{ worker: Worker; taskQueue: string }> => {
    const taskQueue = `flows-${process.pid}-${++queues}`;
    return {
      worker: await Worker.create({
        connection: env.nativeConnection,
        namespace: env.namespace ?? 'default',
        taskQueue,
        workflowBundle: code,
        activities,
      }),
      taskQueue,
    };
  };
  return {
    env,
    client: env.client,
    worker,
    /** Runs `test` while a worker with `activities` runs (stopped after it). */
    async run<T>(activities: ActivityFns, test: (taskQueue: string) => Promise<T>): Promise<T> {
      const { worker: running, taskQueue } = await worker(activities);
      return running.runUntil(() => test(taskQueue));
    },
    stop: () => env.teardown(),
  };
}
