import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { CLUSTER_NOT_FOUND, type ClusterPhase } from '../../domain/cluster';
import type { ClusterHealthInput, clusterHealthWorkflow } from '../../workflows/cluster-health';
import { useFlowEnv } from '../harness/flow-env';
import { asActivities, createFakes, inputs, startInput } from './fakes';

/**
 * A cluster's health checks (workflows/cluster-health.ts) with a fake check: one per interval on
 * a durable timer, continue-as-new after `checksPerRun` carrying the last phase, a failed check
 * waited out to the next tick, and the end once the cluster is no longer registered.
 */

let flow: Awaited<ReturnType<typeof useFlowEnv>>;
beforeAll(async () => {
  flow = await useFlowEnv();
}, 120_000);
afterAll(() => flow?.stop());

const INTERVAL = 30_000;
let clusters = 0;
const report = (phase: ClusterPhase) => ({
  phase,
  connected: phase === 'Connected',
  checkedAt: new Date().toISOString(),
  message: phase,
});
const gone = () => ApplicationFailure.create({ type: CLUSTER_NOT_FOUND, message: 'cluster prod is not registered' });

describe('cluster health checks', () => {
  it('checks every interval, continues as new after checksPerRun with the last phase, and ends when the cluster is gone', async () => {
    const fakes = createFakes();
    const at: number[] = [];
    const answers = [report('Connected'), report('Unreachable')];
    fakes.checkClusterHealth.mockImplementation(async () => {
      at.push(Context.current().info.currentAttemptScheduledTimestampMs);
      const next = answers.shift();
      if (!next) throw gone();
      return next;
    });
    const cluster = `prod-${++clusters}`;
    await flow.run(asActivities(fakes), async (taskQueue) => {
      const health = await flow.client.workflow.start<typeof clusterHealthWorkflow>('clusterHealthWorkflow', {
        taskQueue,
        workflowId: `cluster-health-${cluster}`,
        args: [{ cluster, intervalMs: INTERVAL, checksPerRun: 2 }],
      });
      await health.result(); // follows the continued run to its end
      expect(inputs(fakes.checkClusterHealth)).toEqual([{ cluster }, { cluster }, { cluster }]);
      // One check per interval, on the server's clock.
      expect(at[1] - at[0]).toBeGreaterThanOrEqual(INTERVAL);
      expect(at[2] - at[1]).toBeGreaterThanOrEqual(INTERVAL);
      // The second run knows the first one's last phase (a change across runs is noticed).
      expect(await startInput<ClusterHealthInput>(health)).toEqual({
        cluster,
        intervalMs: INTERVAL,
        checksPerRun: 2,
        lastPhase: 'Unreachable',
      });
    });
  });

  it('waits out a check that failed through its retries and checks again at the next tick', async () => {
    const fakes = createFakes();
    let calls = 0;
    fakes.checkClusterHealth.mockImplementation(async () => {
      calls++;
      if (calls <= 3) throw ApplicationFailure.create({ message: 'store unavailable' });
      throw gone();
    });
    const cluster = `prod-${++clusters}`;
    await flow.run(asActivities(fakes), (taskQueue) =>
      flow.client.workflow.execute<typeof clusterHealthWorkflow>('clusterHealthWorkflow', {
        taskQueue,
        workflowId: `cluster-health-${cluster}`,
        args: [{ cluster, intervalMs: INTERVAL }],
      }),
    );
    // Three attempts of the first check, then the next tick's check found the cluster gone.
    expect(fakes.checkClusterHealth).toHaveBeenCalledTimes(4);
  });
});
