import { CancellationScope, condition, isCancellation } from '@temporalio/workflow';
import type { Triage } from '../../activities/incident-stages';
import { SYSTEM_ACTOR } from '../../domain/incident-requests';
import {
  chooseStrategy,
  FINAL_PLAN_STATES,
  giveUpReason,
  PLAN_ABANDONED_RESULT,
  type PlanState,
  type Strategy,
} from '../../domain/remediation';
import { startsExecuting, type PreparedPlan } from '../../domain/remediation-plan';
import { runRemediation, type PlanInbox, type RemediationOutcome } from '../remediation';
import { endBudget, startBudget } from './budget';
import { incidentStore } from './proxies';
import { isResolved, publish, publishPlanState, resolveAs, type IncidentRun } from './state';

/**
 * The remediation engine (DESIGN §8): one attempt at a time, strategy by strategy, until one is
 * verified (the incident is resolved by `system`) or none is left, the attempts are used up, or a
 * person said no. Returns why automation gave up (the escalation's message), or undefined when
 * the incident was resolved. A resolve by a person cancels the running plan, which stops after
 * its step in flight.
 */
export async function remediate(run: IncidentRun, triaged: Triage): Promise<string | undefined> {
  try {
    return await attempts(run, triaged);
  } finally {
    await endBudget(run);
  }
}

async function attempts(run: IncidentRun, triaged: Triage): Promise<string | undefined> {
  const { firstPlan, ...options } = triaged;
  if (isResolved(run)) {
    if (firstPlan) await abandon(firstPlan);
    return undefined;
  }
  const tried: Strategy[] = [];
  for (let attempt = 1; !isResolved(run); attempt++) {
    const giveUp = giveUpReason(options, tried);
    if (giveUp) return giveUp;
    const strategy = chooseStrategy(options, tried)!;
    tried.push(strategy);
    if (run.budget) run.budget.attempt = attempt;
    // The move to Remediating is written with the plan.
    const remediating = run.live.state !== 'Remediating';
    const plan =
      attempt === 1 && firstPlan
        ? firstPlan
        : await CancellationScope.nonCancellable(() =>
            incidentStore.preparePlan({ name: run.name, attempt, strategy, ...(remediating && { remediating }) }),
          );
    if (remediating && !isResolved(run)) {
      run.live.state = 'Remediating'; // published with the plan's first state
      startBudget(run, triaged);
    }
    if (isResolved(run)) {
      await abandon(plan);
      return undefined;
    }
    const outcome = await runPlan(run, plan);
    if (isResolved(run)) return undefined;
    if (outcome.state === 'Completed') {
      resolveAs(run, {
        resolution: `Remediated automatically by plan ${plan.name} (${plan.strategy}): ${outcome.result}`,
        actor: SYSTEM_ACTOR,
        atSource: false,
        automatic: true,
      });
      return undefined;
    }
    if (outcome.sourceResolved && run.sourceResolution) {
      resolveAs(run, run.sourceResolution);
      return undefined;
    }
    if (outcome.approval)
      return `Remediation plan ${plan.name} was not approved (${outcome.result}); escalated to on-call`;
  }
  return undefined;
}

/** Resolved while the plan was being made: it never starts, and its record says so. */
async function abandon(plan: PreparedPlan): Promise<void> {
  await CancellationScope.nonCancellable(() =>
    incidentStore.finishPlan({ plan: plan.name, state: 'Failed', result: PLAN_ABANDONED_RESULT }),
  );
}

/**
 * Runs one attempt in this run, cancelled (and awaited) when a person resolves meanwhile. The
 * plan's first state is published with the incident's; a verified plan's end with the resolve
 * that follows it, any other end at once.
 */
async function runPlan(run: IncidentRun, plan: PreparedPlan): Promise<RemediationOutcome> {
  const inbox: PlanInbox = { joined: 0, sourceCleared: false, ...(run.budget && { budgetEndsAt: run.budget.endsAt }) };
  const first = startsExecuting(plan) ? 'Executing' : 'Pending';
  const running = { name: plan.name, inbox, waiting: first === 'Pending' };
  run.plan = running;
  publish(run, first);
  const publishState = (state: PlanState) => {
    running.waiting = state === 'Pending';
    if (FINAL_PLAN_STATES.includes(state)) run.planEnd = state;
    else publishPlanState(state);
  };
  const outcome = await settle(run, plan, (scope) =>
    scope.run(() => runRemediation(plan, { inbox, publish: publishState, published: first })),
  );
  if (run.planEnd && (outcome.state !== 'Completed' || isResolved(run))) {
    publishPlanState(run.planEnd);
    run.planEnd = undefined;
  }
  return outcome;
}

/** The attempt's outcome: a failed one when it was cancelled, or when the plan failed as code. */
async function settle(
  run: IncidentRun,
  plan: PreparedPlan,
  start: (scope: CancellationScope) => Promise<RemediationOutcome>,
): Promise<RemediationOutcome> {
  const scope = new CancellationScope();
  const running = start(scope);
  // (Rejected only if this workflow itself is cancelled, which cancels the scope anyway.)
  void condition(() => isResolved(run)).then(
    () => scope.cancel(),
    () => undefined,
  );
  try {
    return await running;
  } catch (err) {
    if (isCancellation(err) || isResolved(run))
      return { state: 'Failed', result: 'cancelled: the incident was resolved' };
    // A plan that failed as code (a bug, not a failed fix) counts as a failed attempt; its record
    // is closed here (a no-op when the plan closed it itself).
    const result = `the plan failed unexpectedly: ${(err as Error).message}`;
    await CancellationScope.nonCancellable(() =>
      incidentStore.finishPlan({ plan: plan.name, state: 'Failed', result }),
    );
    return { state: 'Failed', result };
  } finally {
    run.plan = undefined;
  }
}
