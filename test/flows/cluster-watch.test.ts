import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { WorkflowFailedError } from '@temporalio/client';
import type { WatchCheckpoint } from '../../domain/kube-watch-state';
import type { ClusterWatchInput, clusterWatchWorkflow } from '../../workflows/cluster-watch';
import { useFlowEnv } from '../harness/flow-env';
import { asActivities, createFakes, inputs, MINUTE, startInput } from './fakes';

/**
 * A cluster's watcher (workflows/cluster-watch.ts) with a fake watch activity: each round starts
 * from the checkpoint the last one returned, the run continues as new after `roundsPerRun`
 * carrying it, unreadable credentials are waited out, an unregistered cluster ends the watch and
 * any other failure fails it.
 */

let flow: Awaited<ReturnType<typeof useFlowEnv>>;
beforeAll(async () => {
  flow = await useFlowEnv();
}, 120_000);
afterAll(() => flow?.stop());

let clusters = 0;
const checkpoint = (rv: string): WatchCheckpoint => ({
  version: 1,
  resourceVersions: { pods: rv },
  workloads: {},
  unavailableSince: {},
  truncated: 0,
});
const notFound = () => ApplicationFailure.create({ type: 'ClusterNotFound', message: 'cluster is not registered' });

function watch(taskQueue: string, input: Omit<ClusterWatchInput, 'cluster'>) {
  const cluster = `prod-${++clusters}`;
  return flow.client.workflow.start<typeof clusterWatchWorkflow>('clusterWatchWorkflow', {
    taskQueue,
    workflowId: `cluster-watch-${cluster}`,
    args: [{ cluster, ...input }],
  });
}

describe('the cluster watcher', () => {
  it('starts each round from the last checkpoint, carries it across continue-as-new, and ends when the cluster is gone', async () => {
    const fakes = createFakes();
    fakes.watchCluster
      .mockResolvedValueOnce(checkpoint('100'))
      .mockResolvedValueOnce(checkpoint('200'))
      .mockRejectedValueOnce(notFound());
    await flow.run(asActivities(fakes), async (taskQueue) => {
      const watcher = await watch(taskQueue, { roundMs: MINUTE, roundsPerRun: 2 });
      await watcher.result();
      const cluster = watcher.workflowId.replace('cluster-watch-', '');
      expect(inputs(fakes.watchCluster)).toEqual([
        { cluster, roundMs: MINUTE },
        { cluster, roundMs: MINUTE, checkpoint: checkpoint('100') },
        { cluster, roundMs: MINUTE, checkpoint: checkpoint('200') },
      ]);
      expect(await startInput<ClusterWatchInput>(watcher)).toEqual({
        cluster,
        roundMs: MINUTE,
        roundsPerRun: 2,
        checkpoint: checkpoint('200'),
      });
    });
  });

  it('waits 5 minutes when the stored credentials cannot be decrypted, then watches again', async () => {
    const fakes = createFakes();
    const at: number[] = [];
    let calls = 0;
    fakes.watchCluster.mockImplementation(async () => {
      at.push(Context.current().info.currentAttemptScheduledTimestampMs);
      calls++;
      if (calls === 1)
        throw ApplicationFailure.nonRetryable(
          'credentials of cluster prod cannot be decrypted',
          'ClusterCredentialsUnreadable',
        );
      if (calls === 2) return checkpoint('300');
      throw notFound();
    });
    await flow.run(asActivities(fakes), async (taskQueue) => {
      const watcher = await watch(taskQueue, {});
      await watcher.result();
      expect(fakes.watchCluster).toHaveBeenCalledTimes(3);
      expect(at[1] - at[0]).toBeGreaterThanOrEqual(5 * MINUTE);
      expect(inputs(fakes.watchCluster)[2].checkpoint).toEqual(checkpoint('300'));
    });
  });

  it('fails on any other non-retryable failure of the watch', async () => {
    const fakes = createFakes();
    fakes.watchCluster.mockRejectedValue(ApplicationFailure.nonRetryable('bad checkpoint', 'InvalidInput'));
    await flow.run(asActivities(fakes), async (taskQueue) => {
      const watcher = await watch(taskQueue, {});
      await expect(watcher.result()).rejects.toBeInstanceOf(WorkflowFailedError);
      expect(fakes.watchCluster).toHaveBeenCalledTimes(1);
    });
  });
});
