import { CancellationScope } from '@temporalio/workflow';
import type { ApprovalOutcome } from '../../domain/approval-requests';
import type { PlanState } from '../../domain/remediation';
import type { KubeStepInput, PreparedPlan, Verdict } from '../../domain/remediation-plan';
import type { PlanRecords } from './records';

/** What a running plan is told by its incident: new firing signals that joined, its alert clearing at source. */
export interface PlanInbox {
  joined: number;
  sourceCleared: boolean;
  /**
   * When the incident's remediation budget ends (RFC 3339): a step's retries never outlast it
   * (steps.ts). Absent for runs from before the budget. Here, not on PlanRun, because the
   * execution holds this very object.
   */
  budgetEndsAt?: string;
}

/** How the incident runs a plan: what it tells the plan, and how the plan's state is published. */
export interface PlanRun {
  inbox: PlanInbox;
  /** Publishes the plan's state in the incident workflow's search attributes. */
  publish: (state: PlanState) => void;
  /** The state the incident published as the plan started: not published again. */
  published?: string;
}

export interface RemediationOutcome {
  state: Extract<PlanState, 'Completed' | 'Failed' | 'RolledBack'>;
  result: string;
  /** Set when the plan waited for a person and did not get a yes. */
  approval?: Exclude<ApprovalOutcome['status'], 'approved'>;
  approvalName?: string;
  /** The alert cleared at source while the plan still waited for its approval: nothing ran. */
  sourceResolved?: boolean;
}

/** A Kubernetes step that ran: how to describe and how to undo it. */
export interface ExecutedStep {
  index: number;
  type: string;
  undo: KubeStepInput[];
}

/** One remediation attempt while it runs. */
export interface PlanExecution {
  readonly plan: PreparedPlan;
  readonly inbox: PlanInbox;
  readonly records: PlanRecords;
  readonly publish: (state: PlanState) => void;
  state: PlanState;
  /** The state the plan's start published already: not published again. */
  published?: string;
  /** When the last Kubernetes step ran: verification reads the target from then on. */
  fixedAt: string;
  /** The Kubernetes steps that ran, in order: what a rollback undoes. */
  executed: ExecutedStep[];
  /** An approval asked for whose workflow has not answered: expired if the plan is cancelled. */
  undecided?: string;
}

/** `recorded`: the plan record says `next` already (made so, or written with the last step). */
export async function moveTo(execution: PlanExecution, next: PlanState, recorded = false): Promise<void> {
  if (!recorded) await execution.records.setPlanState({ plan: execution.plan.name, state: next });
  execution.state = next;
  if (execution.published !== next) execution.publish(next);
  execution.published = undefined;
}

/** Ends the plan: its record (even when cancelled), its published state, the outcome. */
export async function finish(
  execution: PlanExecution,
  end: RemediationOutcome['state'],
  result: string,
  extra: Partial<RemediationOutcome> = {},
  verification?: Verdict,
): Promise<RemediationOutcome> {
  const { plan, records } = execution;
  await CancellationScope.nonCancellable(() =>
    records.finishPlan({ plan: plan.name, state: end, result, ...(verification && { verification }) }),
  );
  execution.state = end;
  execution.publish(end);
  return { state: end, result, ...extra };
}

/** A plan a person did not approve (or whose approval expired): nothing more runs. */
export function refused(
  execution: PlanExecution,
  decision: { status: 'rejected' | 'expired'; name: string; result: string },
): Promise<RemediationOutcome> {
  return finish(execution, 'Failed', decision.result, {
    approval: decision.status,
    approvalName: decision.name,
    ...(execution.inbox.sourceCleared && decision.status === 'expired' && { sourceResolved: true }),
  });
}
