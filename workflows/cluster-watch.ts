/**
 * The watcher of one registered cluster (id `cluster-watch-<name>`, started by the cluster's
 * registration, cancelled by its deletion). The watch itself is a long-running activity that
 * heartbeats its checkpoint: a worker that dies hands it to another worker, which relists the
 * cluster and diffs it against that checkpoint (and ingestion's record). Each round returns the
 * checkpoint, the next round starts from it, and the history is renewed (continue-as-new) every
 * few rounds. The workflow carries the cluster's name and the checkpoint only, never credentials.
 */
import {
  ActivityFailure,
  ApplicationFailure,
  continueAsNew,
  isCancellation,
  log,
  proxyActivities,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type { KubeWatchActivities } from '../activities/kube-watch';
import type { WatchCheckpoint } from '../domain/kube-watch-state';
import { PATIENT_RETRY } from './store-options';

/** One round of watching: the activity that lists and watches the cluster. */
const { watchCluster } = proxyActivities<KubeWatchActivities>({
  // A round watches 15 min by default; the heartbeat timeout notices a dead worker long before.
  startToCloseTimeout: '1h',
  heartbeatTimeout: '30s',
  // Unlimited: the cluster may be unreachable for hours. An unknown cluster stops it; its
  // unreadable credentials are thrown non-retryable by the activity and waited out below.
  retry: { ...PATIENT_RETRY, nonRetryableErrorTypes: ['ClusterNotFound'] },
});

export interface ClusterWatchInput {
  cluster: string;
  checkpoint?: WatchCheckpoint;
  /** How long one activity round watches (tests shorten it); default 15 min. */
  roundMs?: number;
  /** Rounds before continue-as-new (tests shorten it); default 50. */
  roundsPerRun?: number;
}

/** Rounds per run before continue-as-new (each round adds a handful of history events). */
const ROUNDS_PER_RUN = 50;

/** Wait before another round when the cluster's stored credentials cannot be decrypted. */
const CREDENTIALS_RETRY = '5m';

const failedWith = (err: unknown, type: string): boolean =>
  err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.type === type;

export async function clusterWatchWorkflow(input: ClusterWatchInput): Promise<void> {
  let checkpoint = input.checkpoint;
  const rounds = input.roundsPerRun ?? ROUNDS_PER_RUN;
  for (let round = 0; round < rounds; round++) {
    try {
      checkpoint = await watchCluster({
        cluster: input.cluster,
        ...(checkpoint && { checkpoint }),
        ...(input.roundMs && { roundMs: input.roundMs }),
      });
    } catch (err) {
      if (isCancellation(err)) throw err; // the cluster was deleted: ends as Cancelled
      if (failedWith(err, 'ClusterNotFound')) return; // registration gone without a cancel (e.g. deleted while no worker ran): nothing to watch
      // Stored credentials that cannot be decrypted (a changed FOGHORN_SECRET_KEY, a damaged
      // record): not the end of the watch, since a fixed key brings it back; a durable wait, then
      // another round.
      if (failedWith(err, 'ClusterCredentialsUnreadable')) {
        log.error('cluster credentials unreadable; the watch tries again later', {
          cluster: input.cluster,
          retryIn: CREDENTIALS_RETRY,
        });
        await sleep(CREDENTIALS_RETRY);
        continue;
      }
      throw err;
    }
    if (workflowInfo().continueAsNewSuggested) break;
  }
  await continueAsNew<typeof clusterWatchWorkflow>({ ...input, ...(checkpoint && { checkpoint }) });
}
