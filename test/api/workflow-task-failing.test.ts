import { REPORTED_PROBLEMS } from '../../api/temporal-metrics';
import { useStack } from '../harness/stack';

/**
 * A workflow whose task keeps failing makes no progress and answers nothing, and no repair of
 * the reconciler's can help it: /metrics counts such workflows from what Temporal reports
 * (`TemporalReportedProblems`), on the real dev server, which flags a workflow after two failed
 * tasks in a row (as `foghorn dev`'s does).
 */
describe('GET /metrics: workflows whose task keeps failing', () => {
  let stack: Awaited<ReturnType<typeof useStack>>;
  beforeAll(async () => {
    stack = await useStack({ realTime: true });
  }, 120_000);
  afterAll(() => stack?.stop());

  const taskFailing = async () => {
    const res = await stack.call('GET', '/metrics', { token: null });
    expect(res.status).toBe(200);
    const line = /^foghorn_workflows_task_failing (\d+)$/m.exec(res.text);
    expect(line).not.toBeNull();
    return Number(line![1]);
  };

  it('counts a running workflow while its task fails, and not once it is gone', async () => {
    expect(await taskFailing()).toBe(0);
    // A workflow type this worker's bundle does not have: every task of it fails, as a run that
    // no longer replays (a nondeterminism error after a bad deploy) does.
    const handle = await stack.client.workflow.start('workflowFromAnotherDeploy', {
      taskQueue: stack.wf.taskQueue,
      workflowId: 'task-failing-1',
    });
    expect(await stack.eventually(taskFailing, (n) => n === 1, 60_000)).toBe(1);
    const { status, typedSearchAttributes } = await handle.describe();
    expect(status.name).toBe('RUNNING');
    expect(typedSearchAttributes.get(REPORTED_PROBLEMS)).toContain('category=WorkflowTaskFailed');

    // Terminated (or reset, or fixed and its next task done): no longer counted.
    await handle.terminate('stuck: terminated by an operator');
    expect(await stack.eventually(taskFailing, (n) => n === 0, 30_000)).toBe(0);
  }, 120_000);
});
