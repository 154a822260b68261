import { defineQuery, defineSignal } from '@temporalio/workflow';

/** Signals the incident workflow sends its escalation ladder (`<incident>-escalation`). */
export const ladderAcknowledgedSignal = defineSignal<[{ by: string; at: string }]>('acknowledged');
/** Re-snooze replaces: the latest `until` is the one that counts. */
export const ladderSnoozedSignal = defineSignal<[{ until: string }]>('snoozed');
export const ladderResolvedSignal = defineSignal('resolved');

export interface LadderState {
  /** 1-based level last notified (0: none yet). */
  level: number;
  attempt: number;
  state: string;
}
export const ladderStateQuery = defineQuery<LadderState>('ladderState');
