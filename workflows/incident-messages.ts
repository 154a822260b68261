import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type {
  AcknowledgeRequest,
  CorrelatedSignal,
  LiveState,
  ResolveRequest,
  SignalsQueued,
  SnoozeRequest,
} from '../domain/incident-requests';

/** The incident workflow's messages; their payload types are in domain/incident-requests.ts. */
export const acknowledgeUpdate = defineUpdate<void, [AcknowledgeRequest]>('acknowledge');
export const snoozeUpdate = defineUpdate<void, [SnoozeRequest]>('snooze');
/** Resolves `true`, or `false` when an at-source resolution left an Escalated incident open. */
export const resolveUpdate = defineUpdate<boolean, [ResolveRequest]>('resolve');
/** One signal per call: what ingestion sent before the inbox, and still sends to a resolved incident. */
export const correlateSignal = defineSignal<[CorrelatedSignal]>('correlate');
export const signalsQueuedSignal = defineSignal<[SignalsQueued]>('signalsQueued');
export const liveStateQuery = defineQuery<LiveState>('liveState');
