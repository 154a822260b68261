import { proxyActivities } from '@temporalio/workflow';

const { noop } = proxyActivities<{ noop(): Promise<void> }>({ startToCloseTimeout: '10s' });

/** Three workflow tasks and two activities: nothing but Temporal's own hops. */
export async function twoHops(): Promise<void> {
  await noop();
  await noop();
}
