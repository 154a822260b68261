import { defineSignal, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { Endpoint } from '../../activities/notifications';
import type { Ladder } from '../../domain/escalation-policy';
import { notificationQueue } from '../notify';
import { ESCALATION_STATE, INCIDENT, NAMESPACE } from '../search-attributes';

export interface EscalationWorkflowInput {
  incident: string;
  namespace: string;
  /** The policy's timings only: targets are read by the activities, never carried. */
  ladder: Ladder;
  /** Why automation gave up (or why the ladder started while it runs): the notifications say it. */
  reason: string;
  acknowledged: boolean;
  snoozeUntil?: string;
  /**
   * L1's endpoints, read by the triage that escalated (no maintenance window held the namespace):
   * the first rung goes out without reading them again. Absent, the ladder reads them itself.
   */
  level1?: Endpoint[];
  /** Carried across continue-as-new. */
  carried?: LadderPosition;
}

/** Where the ladder stands: what a new run (continue-as-new) takes over. */
export interface LadderPosition {
  /** 0-based: the level notified last. */
  level: number;
  attempt: number;
  /** Time left on the clock to the next rung (frozen while snoozed). */
  remainingMs?: number;
  /** The endpoints that track state (PagerDuty, webhooks): they hear the acknowledge and the resolve. */
  notified: Endpoint[];
  acknowledgeSent: boolean;
  /** The maintenance window holding the next rung (`<name>@<until>`), said once per window. */
  heldFor?: string;
}

/** One run of a ladder: what its handlers, clock and rungs share. */
export interface LadderRun extends LadderPosition {
  readonly input: EscalationWorkflowInput;
  readonly queue: ReturnType<typeof notificationQueue>;
  acknowledged: boolean;
  /** Epoch ms; 0 when never snoozed. */
  snoozeUntil: number;
  resolved: boolean;
  /** The published ESCALATION_STATE: `starting`, `L<n>`, `snoozed`, `held`, `acknowledged`, `exhausted`, `resolved`. */
  state: string;
  /** What the next notifications say: the input's reason, until the incident tells another. */
  reason: string;
}

/**
 * A ladder started by the remediation budget while automation ran hears why it now pages on:
 * automation gave up (the incident is Escalated). Its next levels say so; L1 is not paged again.
 */
export const ladderReasonSignal = defineSignal<[{ reason: string }]>('reason');

export function startLadderRun(input: EscalationWorkflowInput): LadderRun {
  const { carried } = input;
  return {
    input,
    queue: notificationQueue(input.incident),
    acknowledged: input.acknowledged,
    snoozeUntil: input.snoozeUntil ? Date.parse(input.snoozeUntil) : 0,
    resolved: false,
    level: carried?.level ?? 0,
    attempt: carried?.attempt ?? 1,
    remainingMs: carried?.remainingMs,
    notified: carried?.notified ?? [],
    acknowledgeSent: carried?.acknowledgeSent ?? false,
    heldFor: carried?.heldFor,
    state: 'starting',
    reason: input.reason,
  };
}

export function publish(run: LadderRun, next: string): void {
  if (next === run.state) return;
  run.state = next;
  upsertSearchAttributes([
    { key: ESCALATION_STATE, value: next },
    { key: INCIDENT, value: run.input.incident },
    { key: NAMESPACE, value: run.input.namespace },
  ]);
}

export const muted = (run: LadderRun): boolean => run.snoozeUntil > Date.now();
export const stopped = (run: LadderRun): boolean => run.resolved || run.acknowledged;
/** History is long enough to continue as new, and no delivery is in flight. */
export const timeToContinue = (run: LadderRun): boolean => workflowInfo().continueAsNewSuggested && run.queue.idle();
