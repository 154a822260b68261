import { CancellationScope, isCancellation } from '@temporalio/workflow';
import {
  AGENTIC_BUDGET_MS,
  AGENTIC_MAX_STEPS,
  clipObservation,
  type AgenticDecision,
  type AgenticStepRecord,
} from '../../domain/agentic';
import { formatDuration } from '../../domain/duration';
import { approvalNeed, planRisk } from '../../domain/remediation';
import type { RunbookAction } from '../../domain/runbook';
import { failureText } from '../failure-text';
import { agent, kubeReads, planStore } from './proxies';
import { approvalText, askApproval } from './approval';
import { moveTo, type PlanExecution } from './state';
import { runStep } from './steps';

/** How the agent's loop ended. */
export type AgentEnd =
  | { kind: 'fixed' }
  | { kind: 'stop'; result: string }
  | { kind: 'approval'; status: 'rejected' | 'expired'; name: string; result: string };

/**
 * Observe → decide → act, at most AGENTIC_MAX_STEPS steps within AGENTIC_BUDGET_MS; every action
 * the model picks passes the approval gate, and a person's time to decide is not charged to the
 * budget (it bounds the agent, not the approver).
 */
export async function runAgent(execution: PlanExecution): Promise<AgentEnd> {
  const { plan } = execution;
  const context = await planStore.agenticContext({ name: plan.incident });
  const steps: AgenticStepRecord[] = [];
  const started = Date.now();
  let waited = 0;
  for (let n = 1; n <= AGENTIC_MAX_STEPS; n++) {
    if (Date.now() - started - waited > AGENTIC_BUDGET_MS)
      return {
        kind: 'stop',
        result: `the agent used its ${formatDuration(AGENTIC_BUDGET_MS)} budget without a verdict`,
      };
    let decision: AgenticDecision;
    try {
      decision = await agent.agenticDecide({ ...context, steps, stepNumber: n, maxSteps: AGENTIC_MAX_STEPS });
    } catch (err) {
      if (isCancellation(err)) throw err;
      return { kind: 'stop', result: `the model failed at step ${n}: ${failureText(err)}` };
    }
    const record = async (tool: string, params: Record<string, unknown>, observation: string) => {
      const step = { step: n, reasoning: decision.reasoning, tool, params, observation };
      await planStore.recordAgenticStep({ plan: plan.name, ...step });
      steps.push(step);
    };
    if (decision.kind === 'verdict') {
      await record('finish', { verdict: decision.verdict }, decision.summary);
      if (decision.verdict === 'fixed') return { kind: 'fixed' };
      return { kind: 'stop', result: `the agent gave up at step ${n}: ${decision.summary}` };
    }
    if (decision.kind === 'read') {
      await record(decision.tool, decision.params as Record<string, unknown>, await observe(execution, decision));
      continue;
    }
    const acted = await act(execution, n, decision);
    if (acted.kind === 'refused') return acted.end;
    waited += acted.waited;
    await record(decision.action, decision.params, acted.observation);
  }
  return { kind: 'stop', result: `the agent used its ${AGENTIC_MAX_STEPS} steps without a verdict` };
}

/** `waited`: how long a person took to approve it. */
type Acted = { kind: 'ran'; observation: string; waited: number } | { kind: 'refused'; end: AgentEnd };

/** The model's action: appended to the plan, approved when its risk needs it, then run. */
async function act(
  execution: PlanExecution,
  n: number,
  decision: Extract<AgenticDecision, { kind: 'action' }>,
): Promise<Acted> {
  const { plan } = execution;
  const action = { type: decision.action, params: decision.params } as RunbookAction;
  const index = await planStore.addAgenticAction({ plan: plan.name, step: n, action });
  const risk = planRisk(plan.incidentRisk, [action]);
  const need = approvalNeed({ risk, threshold: plan.riskThreshold });
  let waited = 0;
  if (need.required) {
    const asked = Date.now();
    const decided = await askApproval(execution, {
      key: `${plan.name}/${n}`,
      actions: [action],
      need,
      risk,
      indexes: [index],
    });
    waited = Date.now() - asked;
    if (decided.status !== 'approved')
      return {
        kind: 'refused',
        end: {
          kind: 'approval',
          status: decided.status,
          name: decided.name,
          result: approvalText(decided, decided.name),
        },
      };
    await moveTo(execution, 'Executing');
  }
  let observation: string;
  try {
    observation = await CancellationScope.nonCancellable(() => runStep(execution, index, action));
  } catch (err) {
    if (isCancellation(err)) throw err;
    observation = `action failed: ${failureText(err)}`;
  }
  return { kind: 'ran', observation, waited };
}

/** A read the model asked for: its answer clipped, or why it failed (the model sees either). */
async function observe(execution: PlanExecution, d: Extract<AgenticDecision, { kind: 'read' }>): Promise<string> {
  const { plan } = execution;
  const where = { cluster: plan.cluster, namespace: plan.namespace };
  /** The object the model named: namespaced to the incident's namespace unless it is a Node. */
  const named = <K extends string>(params: { kind: K; name: string }) => ({
    cluster: plan.cluster,
    kind: params.kind,
    name: params.name,
    ...(params.kind !== 'Node' && { namespace: plan.namespace }),
  });
  try {
    switch (d.tool) {
      case 'get_resource':
        return clipObservation(await kubeReads.kubeGetResource(named(d.params)));
      case 'list_pods':
        return clipObservation(
          await kubeReads.kubeListPods({ ...where, kind: 'Deployment', name: plan.resource.name }),
        );
      case 'recent_events':
        return clipObservation(await kubeReads.kubeRecentEvents(named(d.params)));
      case 'log_tail':
        return clipObservation(await kubeReads.kubeLogTail({ ...where, ...d.params }));
    }
  } catch (err) {
    if (isCancellation(err)) throw err;
    return `read failed: ${failureText(err)}`;
  }
}
