import { defineSignal } from '@temporalio/workflow';

/** The incident workflow tells the running plan that a new firing signal joined the incident. */
export const signalJoinedSignal = defineSignal<[{ signalType: string; at: string }]>('signalJoined');
