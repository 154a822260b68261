/**
 * Health of one cluster, for as long as it is registered: a check every 30 s (durable timer),
 * continue-as-new every `checksPerRun` checks. Phase changes are logged (Unreachable → Connected
 * is how a recovery shows). Ends when the cluster is no longer registered; cancelled on delete.
 */
import {
  ActivityFailure,
  ApplicationFailure,
  continueAsNew,
  isCancellation,
  log,
  proxyActivities,
  sleep,
} from '@temporalio/workflow';
import type { ClusterHealthActivities } from '../activities/cluster-health';
import { CLUSTER_NOT_FOUND, type ClusterPhase } from '../domain/cluster';

/**
 * A check stays short (5 s per API call, a few calls); an unreachable cluster is a result, not
 * a failure, so retries only cover the store or the worker going away. An unregistered cluster
 * is not retried: the workflow ends (its registration was deleted).
 */
const { checkClusterHealth } = proxyActivities<ClusterHealthActivities>({
  startToCloseTimeout: '2m',
  retry: {
    initialInterval: '2s',
    backoffCoefficient: 2,
    maximumInterval: '30s',
    maximumAttempts: 3,
    nonRetryableErrorTypes: [CLUSTER_NOT_FOUND],
  },
});

export interface ClusterHealthInput {
  /** The cluster's name: never credentials (activities look them up by name). */
  cluster: string;
  /** Time between checks, ms (default 30 s). */
  intervalMs?: number;
  /** Checks per run before continue-as-new keeps the history short (default 100). */
  checksPerRun?: number;
  /** The phase of the last check of the previous run, so a change across runs is noticed. */
  lastPhase?: ClusterPhase;
}

export const CLUSTER_HEALTH_INTERVAL_MS = 30_000;
const CHECKS_PER_RUN = 100;

/** Whether an activity failed with the ApplicationFailure `type` (e.g. CLUSTER_NOT_FOUND); for any cluster workflow. */
export const activityFailedWith = (err: unknown, type: string): boolean =>
  err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.type === type;

export async function clusterHealthWorkflow(input: ClusterHealthInput): Promise<void> {
  const intervalMs = input.intervalMs ?? CLUSTER_HEALTH_INTERVAL_MS;
  const checksPerRun = input.checksPerRun ?? CHECKS_PER_RUN;
  let lastPhase = input.lastPhase;
  for (let i = 0; i < checksPerRun; i++) {
    try {
      const report = await checkClusterHealth({ cluster: input.cluster });
      if (report.phase !== lastPhase)
        log.info('cluster phase changed', { cluster: input.cluster, from: lastPhase ?? 'none', to: report.phase });
      lastPhase = report.phase;
    } catch (err) {
      if (isCancellation(err)) throw err;
      if (activityFailedWith(err, CLUSTER_NOT_FOUND)) {
        log.info('cluster is no longer registered: health checks end', { cluster: input.cluster });
        return;
      }
      // The store or the worker failed through every retry: try again at the next tick.
      log.warn('cluster health check failed', { cluster: input.cluster, error: (err as Error).message });
    }
    await sleep(intervalMs);
  }
  await continueAsNew<typeof clusterHealthWorkflow>({ ...input, ...(lastPhase && { lastPhase }) });
}
