import { condition, patched } from '@temporalio/workflow';
import type { Triage } from '../../activities/incident-stages';
import { budgetRanOutReason, remediationBudgetMs } from '../../domain/escalation-policy';
import { REMEDIATION_BUDGET } from '../patches';
import { startLadder } from './escalate';
import { incidentStore } from './proxies';
import { isResolved, type IncidentRun, type RemediationBudget } from './state';

/**
 * A bounded time to a human (docs/escalation.md, "The remediation budget"): from the incident's
 * move to Remediating, automation has its policy's budget for the severity (critical 10m by
 * default). When it runs out while a plan still runs (or waits for its approval, or the next one
 * is prepared), the ladder starts at once beside automation and the incident stays Remediating;
 * if automation gives up later, the incident is Escalated without a second ladder. A durable
 * timer, cancelled when automation ends: it never holds a resolved incident's run open. Runs that
 * reached Remediating before the patch have no budget.
 */
export function startBudget(run: IncidentRun, triaged: Triage): void {
  if (run.budget || !patched(REMEDIATION_BUDGET)) return;
  const ms = triaged.remediationBudgetMs ?? remediationBudgetMs({}, run.input.severity);
  const budget: RemediationBudget = {
    ms,
    endsAt: new Date(Date.now() + ms).toISOString(),
    attempt: 1,
    maxAttempts: triaged.maxAttempts,
    over: false,
    watching: Promise.resolve(),
  };
  run.budget = budget;
  budget.watching = watch(run, budget);
}

/** Automation ended: the timer is cancelled, and what the budget started is finished first. */
export async function endBudget(run: IncidentRun): Promise<void> {
  const { budget } = run;
  if (!budget) return;
  budget.over = true;
  await budget.watching;
}

const done = (run: IncidentRun, budget: RemediationBudget) => budget.over || isResolved(run);

async function watch(run: IncidentRun, budget: RemediationBudget): Promise<void> {
  if (await condition(() => done(run, budget), budget.ms)) return;
  if (run.ladderStarted) return;
  const reason = budgetRanOutReason({
    budgetMs: budget.ms,
    attempt: budget.attempt,
    maxAttempts: budget.maxAttempts,
    ...(run.plan && { plan: { name: run.plan.name, waiting: !!run.plan.waiting } }),
  });
  const choice = await incidentStore.chooseEscalation({ incident: run.name });
  // Automation ended meanwhile: its own end (a resolve, or the escalation) says what happened.
  if (done(run, budget)) return;
  const said = reason.charAt(0).toUpperCase() + reason.slice(1);
  await incidentStore.noteLadder({
    incident: run.name,
    message: choice.none
      ? `${said}; the escalation policy ${choice.ladder.policy} pages nobody`
      : `${said}; the incident stays Remediating and escalation policy ${choice.ladder.policy} pages its level 1 now`,
  });
  // As the timeline says, even if automation gave up meanwhile: its escalation finds the ladder running.
  if (!choice.none) await startLadder(run, choice.ladder, reason);
}
