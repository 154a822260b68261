import { CancellationScope } from '@temporalio/workflow';
import type { RemediationActivities } from '../../activities/remediation';
import { planStore } from './proxies';

/** The plan's record keeping: its state moves, its steps, its verification, its end. */
export type PlanRecords = Pick<
  RemediationActivities,
  'setPlanState' | 'recordStep' | 'recordVerification' | 'finishPlan'
>;

/**
 * The plan's records, written one after the other in the order asked, whether or not the plan
 * awaits each: a step's record lands before the next one and before the plan's end, and the plan
 * goes on while it is written. Activities, not local activities: the incident's handlers add
 * commands while a record is in flight, and a local activity's result can reach the workflow in a
 * later activation than the one that recorded it, which replays into a nondeterminism error. Not
 * cancellable: a resolve that cancels the plan must not cut off a record of what ran. (The
 * activities retry without a cap, so a record fails only when the store throws what no retry
 * can fix; that failure then fails every later write.)
 */
export function planRecords(): PlanRecords {
  let last: Promise<unknown> = Promise.resolve();
  const inOrder = <T>(write: () => Promise<T>): Promise<T> => {
    const next = last.then(() => CancellationScope.nonCancellable(write));
    last = next;
    return next;
  };
  return {
    setPlanState: (input) => inOrder(() => planStore.setPlanState(input)),
    recordStep: (input) => inOrder(() => planStore.recordStep(input)),
    recordVerification: (input) => inOrder(() => planStore.recordVerification(input)),
    finishPlan: (input) => inOrder(() => planStore.finishPlan(input)),
  };
}
