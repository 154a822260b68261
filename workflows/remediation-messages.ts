import { defineSignal } from '@temporalio/workflow';

/** The incident workflow tells the running plan that a new firing signal joined the incident. */
export const signalJoinedSignal = defineSignal<[{ signalType: string; at: string }]>('signalJoined');
/** The alert source cleared while the plan runs: a plan still waiting for its approval ends. */
export const sourceResolvedSignal = defineSignal('sourceResolved');
