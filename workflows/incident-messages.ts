import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type {
  AcknowledgeRequest,
  CorrelatedSignal,
  LiveState,
  ResolveRequest,
  SnoozeRequest,
} from '../domain/incident-requests';

/** The incident workflow's messages; their payload types are in domain/incident-requests.ts. */
export const acknowledgeUpdate = defineUpdate<void, [AcknowledgeRequest]>('acknowledge');
export const snoozeUpdate = defineUpdate<void, [SnoozeRequest]>('snooze');
/** Resolves `true`, or `false` when an at-source resolution left an Escalated incident open. */
export const resolveUpdate = defineUpdate<boolean, [ResolveRequest]>('resolve');
export const correlateSignal = defineSignal<[CorrelatedSignal]>('correlate');
export const liveStateQuery = defineQuery<LiveState>('liveState');
