import { ApplicationFailure } from '@temporalio/common';
import { WorkflowFailedError } from '@temporalio/client';
import type { reconcilerWorkflow } from '../../workflows/reconciler';
import { useFlowEnv } from '../harness/flow-env';
import { asActivities, createFakes } from './fakes';

/** One pass of the reconciler (workflows/reconciler.ts) with fake activities: its summary, and a pass that fails. */

let flow: Awaited<ReturnType<typeof useFlowEnv>>;
beforeAll(async () => {
  flow = await useFlowEnv();
}, 120_000);
afterAll(() => flow?.stop());

let passes = 0;
const pass = (taskQueue: string) =>
  flow.client.workflow.execute<typeof reconcilerWorkflow>('reconcilerWorkflow', {
    taskQueue,
    workflowId: `reconciler-${++passes}`,
  });

describe('the reconciler', () => {
  it('repairs incidents, then hands over chat messages, and sums up both', async () => {
    const fakes = createFakes();
    const order: string[] = [];
    fakes.reconcileIncidents.mockImplementation(async () => (order.push('incidents'), 3));
    fakes.reconcileChats.mockImplementation(async () => (order.push('chats'), 1));
    const summary = await flow.run(asActivities(fakes), pass);
    expect(summary).toEqual({ incidentRepairs: 3, chatMessagesHandedOver: 1 });
    expect(order).toEqual(['incidents', 'chats']);
  });

  it('fails after three tries of a step (the schedule’s next pass follows), without the steps after it', async () => {
    const fakes = createFakes();
    fakes.reconcileIncidents.mockRejectedValue(ApplicationFailure.create({ message: 'store unavailable' }));
    await expect(flow.run(asActivities(fakes), pass)).rejects.toBeInstanceOf(WorkflowFailedError);
    expect(fakes.reconcileIncidents).toHaveBeenCalledTimes(3);
    expect(fakes.reconcileChats).not.toHaveBeenCalled();
  });
});
