import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import type { Config } from '../config/env';
import { splitResource, type Severity, type TimelineEvent } from '../domain/incident';
import { describeTarget, KUBE_ERROR_TYPES, MAX_REPLICAS, type KubeTarget } from '../domain/kube-actions';
import type { IncidentEvidence } from '../domain/evidence';
import { failureSignature, guidanceFrom, ruledOutBy, type RemediationGuidance } from '../domain/remediation-guidance';
import { lastActionOn } from '../store/kube-actions';
import { formatMemory, formatCpu, memoryBytes, cpuMillis } from '../domain/quantity';
import {
  ADMIN_APPROVAL_RISK,
  approvalNeed,
  actionsFingerprint,
  CIRCUIT_BREAKER_WINDOW_MS,
  FINAL_PLAN_STATES,
  INEFFECTIVE_WITHIN_MS,
  isKubeAction,
  PLAN_ABANDONED_RESULT,
  planRisk,
  ROLLOUT_CHANGING_STEPS,
  ROLLOUT_COOL_DOWN_MS,
  strategyKey,
  strategyText,
  templateVars,
  type ApprovalNeed,
  type PlanState,
  type RemediationOptions,
  type RunbookOption,
  type Strategy,
} from '../domain/remediation';
import { renderSteps, stepsFromSuggestions } from '../contracts/remediation';
import {
  firstState,
  publicStep,
  type KubeStepInput,
  type PreparedPlan,
  type ResolvedKubeStep,
  type Verdict,
} from '../domain/remediation-plan';
import { matchRunbooks } from '../domain/runbook-match';
import { formatDuration, parseDuration } from '../domain/duration';
import type { ActionOf, RunbookAction } from '../domain/runbook';
import { categoryForSignal } from '../domain/vocabulary';
import { appendAudit } from '../store/audit';
import { appendTimeline, getIncident, updateIncident, type IncidentRecord } from '../store/incidents';
import { getInsightByIncident, type InsightRecord } from '../store/insights';
import { allocateName } from '../store/names';
import {
  appendAgenticAction,
  createPlanOnce,
  getPlan,
  planByKey,
  plansThatHeld,
  recentRunbookFailures,
  recordStepOutcome,
  resolveStepOnce,
  setAgenticStepCount,
  endPlan,
  updatePlan,
  type PlanRecord,
} from '../store/remediations';
import { createRunbook, getRunbook, recordRunbookExecution, type RunbookRecord } from '../store/runbooks';
import { redact } from '../domain/redact';
import type { HttpStepResult, ScriptStepResult } from '../domain/remediation-steps';
import { kubeCall, rollbackIntent } from './kube-actions';
import { createRemediationStepActivities } from './remediation-steps';
import { clusterKnown, kubeConfigFor } from './kube/client';

async function mustGetIncident(name: string): Promise<IncidentRecord> {
  const incident = await getIncident(name);
  if (!incident) throw new Error(`incident ${name} does not exist`);
  return incident;
}
/** A plan's `Verification` event, keyed: recorded once however often it is written. */
function verificationEvent(plan: PlanRecord, verdict: Verdict, at: Date): { key: string; event: TimelineEvent } {
  return {
    key: `${plan.name}/verification`,
    event: {
      timestamp: at,
      type: 'Verification',
      source: 'remediation-engine',
      message: `${plan.name} verification ${verdict.passed ? 'passed' : 'failed'}: ${verdict.summary}`,
      details: { plan: plan.name, passed: verdict.passed, checked: verdict.checked, seen: verdict.seen },
    },
  };
}

async function mustGetPlan(name: string): Promise<PlanRecord> {
  const plan = await getPlan(name);
  if (!plan) throw new Error(`remediation plan ${name} does not exist`);
  return plan;
}

/** The failure a plan fixes: `<cluster>/<namespace>/<resource>/<signalType>`. */
const subjectOf = (incident: IncidentRecord) =>
  `${incident.cluster}/${incident.namespace}/${incident.resource}/${incident.signalType}`;

/**
 * Why a plan that changes the workload's rollout needs a person: another rollout-changing action
 * reached the same Deployment within the cool-down. Undefined when it may run on its own.
 */
async function rolloutCoolDown(incident: IncidentRecord, actions: RunbookAction[]): Promise<string | undefined> {
  const { kind, name } = splitResource(incident.resource);
  const changing = actions.filter((a) => (ROLLOUT_CHANGING_STEPS as readonly string[]).includes(a.type));
  if (changing.length === 0) return undefined;
  const deployments = new Set(
    changing.map((a) => (a.params as { deployment?: string }).deployment ?? (kind === 'Deployment' ? name : '')),
  );
  for (const deployment of deployments) {
    if (!deployment) continue;
    const target = describeTarget({
      kind: 'Deployment',
      namespace: incident.namespace,
      name: deployment,
      cluster: incident.cluster,
    });
    const last = await lastActionOn(
      incident.cluster,
      target,
      ROLLOUT_CHANGING_STEPS,
      new Date(Date.now() - ROLLOUT_COOL_DOWN_MS),
    );
    if (last)
      return `cool-down: ${last.action} (${last.key}) changed ${target} at ${new Date(last.doneAt).toISOString()}; another rollout change within ${formatDuration(ROLLOUT_COOL_DOWN_MS)} needs a person`;
  }
  return undefined;
}

const notApplicable = (message: string) => ApplicationFailure.nonRetryable(message, KUBE_ERROR_TYPES.notApplicable);

/** The steps an insight suggests that make a remediation (at least one that changes something). */
function generatedSteps(insight: { suggestedActions?: unknown[] } | undefined) {
  const suggested = (insight?.suggestedActions ?? []) as { action: string; params: Record<string, unknown> }[];
  const { steps } = stepsFromSuggestions(suggested);
  return steps.some((s) => s.type !== 'Notify' && s.type !== 'Wait') ? steps : [];
}

/** What a caller already holds of an incident, so a step need not read it again. */
interface Known {
  insight?: InsightRecord | undefined;
  /** The incident's category's runbooks (a plan's runbook is looked up among them first). */
  runbooks?: RunbookRecord[];
}

/** How a plan ends: its final state and result, and the verdict written with it (a verified runbook). */
export interface PlanEnd {
  plan: string;
  state: 'Completed' | 'Failed' | 'RolledBack';
  result: string;
  verification?: Verdict;
}

/**
 * A plan's end (the `finishPlan` activity): its record, the runbook's statistics, its
 * `Verification` and `RemediationCompleted|Failed` events; idempotent.
 */
async function finishPlan(input: PlanEnd): Promise<void> {
  const at = new Date();
  const ended = await endPlan(input.plan, { state: input.state, result: input.result, completedAt: at });
  if (ended?.runbook)
    await recordRunbookExecution(ended.runbook, {
      success: ended.state === 'Completed',
      durationMs: at.getTime() - new Date(ended.startedAt).getTime(),
      at,
    });
  const plan = ended ?? (await mustGetPlan(input.plan)); // a retry: ended by an earlier attempt
  const completed = plan.state === 'Completed';
  const endedAt = plan.completedAt ?? at;
  await appendTimeline(plan.issueRef, [
    ...(input.verification ? [verificationEvent(plan, input.verification, endedAt)] : []),
    {
      key: `${plan.name}/finished`,
      event: {
        timestamp: endedAt,
        type: completed ? 'RemediationCompleted' : 'RemediationFailed',
        source: 'remediation-engine',
        message: `${plan.name} ${plan.state}: ${plan.result}`,
        details: { plan: plan.name, state: plan.state, result: plan.result, attempt: plan.attempt },
      },
    },
  ]);
}

/**
 * The remediation engine's steps on an incident already read: its options, from its category's
 * runbooks and its insight, and an attempt's plan. The activities below read, then call them;
 * the triage (activities/incident-stages.ts) holds all three and calls them directly.
 */
export function createRemediationSteps(config: Config, llmConfigured: boolean) {
  const settings = {
    verifyWindowMs: config.FOGHORN_VERIFY_WINDOW,
    approvalTtlMs: config.FOGHORN_APPROVAL_TTL,
    riskThreshold: config.FOGHORN_APPROVAL_RISK_THRESHOLD,
  };

  /** The incident's runbook matches, usable strategies and the engine's settings. */
  async function options(
    incident: IncidentRecord,
    candidates: RunbookRecord[],
    insight: InsightRecord | undefined,
  ): Promise<RemediationOptions> {
    const byName = new Map(candidates.map((r) => [r.name, r]));
    const steps = generatedSteps(insight);
    const evidence = insight?.evidence as IncidentEvidence | undefined;
    const { ineffective, ruledOut } = await ineffectiveFixes(incident);
    const found = guidanceFrom(evidence, incident);
    // A step whose fix did not last is ruled out too: "restart, then a person if it returns".
    const guidance = { ...found, ruledOut: { ...ruledOut, ...found.ruledOut } };
    const guided = evidence !== undefined || Object.keys(ruledOut).length > 0;
    const runbooks = matchRunbooks(incident, candidates).map((m) => {
      const r = byName.get(m.runbook)!;
      const skipped = ineffective.get(`runbook:${r.name}`) ?? ruledOutBy(guidance, r.steps);
      return {
        name: r.name,
        tier: m.tier,
        maxAttempts: r.maxAttempts,
        usesKubernetes: r.steps.some((s) => isKubeAction(s.type)),
        ...(skipped && { skipped }),
      };
    });
    await recordSkipped(incident, runbooks);
    return {
      maxAttempts: config.FOGHORN_MAX_ATTEMPTS,
      clusterRegistered: await clusterKnown(incident.cluster),
      deployment: splitResource(incident.resource).kind === 'Deployment',
      runbooks,
      ...(insight &&
        steps.length > 0 &&
        !ruledOutBy(guidance, steps) && {
          generated: {
            insight: insight.name,
            fingerprint: actionsFingerprint(steps),
            usesKubernetes: steps.some((s) => isKubeAction(s.type)),
          },
        }),
      llm: llmConfigured,
      ...(guided && { guidance }),
      ...(ineffective.size > 0 && { ineffective: [...ineffective.keys()] }),
    };
  }

  /**
   * The fixes that held on this workload for this failure within the hour (the failure is back,
   * so they did not really fix it): strategy key → why it is skipped.
   */
  async function ineffectiveFixes(
    incident: IncidentRecord,
  ): Promise<{ ineffective: Map<string, string>; ruledOut: RemediationGuidance['ruledOut'] }> {
    const held = await plansThatHeld(subjectOf(incident), new Date(Date.now() - INEFFECTIVE_WITHIN_MS));
    const ineffective = new Map<string, string>();
    const ruledOut: RemediationGuidance['ruledOut'] = {};
    for (const p of held.filter((h) => h.issueRef !== incident.name && h.strategyKey)) {
      if (ineffective.has(p.strategyKey!)) continue;
      const why = `ineffective: plan ${p.name} (${p.strategy}) resolved ${p.issueRef} at ${new Date(p.completedAt!).toISOString()} and the same ${incident.signalType} on ${incident.resource} came back within the hour`;
      ineffective.set(p.strategyKey!, why);
      for (const a of p.actions)
        if (a.type === 'RestartDeployment' || a.type === 'RollbackDeployment') ruledOut[a.type] ??= why;
    }
    return { ineffective, ruledOut };
  }

  /** Each runbook the incident matched but may not run, on its timeline with why (keyed: once). */
  async function recordSkipped(incident: IncidentRecord, runbooks: RunbookOption[]): Promise<void> {
    const skipped = runbooks.filter((r) => r.skipped);
    if (skipped.length === 0) return;
    const at = new Date();
    await appendTimeline(
      incident.name,
      skipped.map((r) => ({
        key: `${incident.name}/skipped/${r.name}`,
        event: {
          timestamp: at,
          type: 'RunbookMatch' as const,
          source: 'remediation-engine',
          message: `Runbook ${r.name} skipped: ${r.skipped}`,
          details: { runbook: r.name, matchScore: 0, skipped: r.skipped },
        },
      })),
    );
  }

  /**
   * Makes attempt `attempt`'s plan once: its `RP-…` name, the steps with templates filled (or
   * why it cannot start), its risk and whether a person must approve it; `RemediationStarted`.
   * `remediating` moves the incident to `Remediating` in the same write (one-step triage).
   */
  async function prepare(
    incident: IncidentRecord,
    input: { attempt: number; strategy: Strategy; remediating?: boolean },
    known: Known = {},
  ): Promise<PreparedPlan> {
    const key = `${incident.name}/attempt/${input.attempt}`;
    // Only a retry can find its plan made; a first attempt that races one (a reset workflow)
    // gets the plan that holds from createPlanOnce.
    const existing = Context.current().info.attempt > 1 ? await planByKey(key) : undefined;
    const insight = 'insight' in known ? known.insight : await getInsightByIncident(incident.name);
    const plan = existing ?? (await makePlan(incident, key, input, { ...known, insight }));
    await updateIncident(incident.name, {
      remediationAttempts: input.attempt,
      ...(input.remediating && { state: 'Remediating' as const }),
      lastUpdated: new Date(),
    });
    await appendTimeline(incident.name, [
      {
        key: `${plan.name}/started`,
        event: {
          timestamp: plan.startedAt,
          type: 'RemediationStarted',
          source: 'remediation-engine',
          message: `Attempt ${plan.attempt}: plan ${plan.name}, ${plan.strategy}${plan.approvalRequired ? ' (approval required)' : ''}`,
          details: {
            plan: plan.name,
            attempt: plan.attempt,
            strategy: plan.strategy,
            riskScore: plan.riskScore,
            approvalRequired: plan.approvalRequired,
            approvalReasons: plan.approvalReasons,
            actions: plan.actions.map((a) => a.type),
          },
        },
      },
    ]);
    return prepared(plan, incident, insight);
  }

  async function makePlan(
    incident: IncidentRecord,
    key: string,
    input: { attempt: number; strategy: Strategy },
    known: Known,
  ): Promise<PlanRecord> {
    const { strategy } = input;
    const insight = 'insight' in known ? known.insight : await getInsightByIncident(incident.name);
    let steps: RunbookAction[] = [];
    let runbook: { name: string; automated: boolean; approvalRequired: boolean; verifyWindowMs?: number } | undefined;
    if (strategy.kind === 'runbook') {
      const r = known.runbooks?.find((c) => c.name === strategy.runbook) ?? (await getRunbook(strategy.runbook));
      if (r) {
        steps = r.steps;
        runbook = {
          name: r.name,
          automated: r.automated,
          approvalRequired: r.approvalRequired,
          ...(r.verificationWindow && { verifyWindowMs: parseDuration(r.verificationWindow) }),
        };
      }
    } else if (strategy.kind === 'generated') {
      steps = generatedSteps(insight);
    } else if (strategy.kind === 'evidence') {
      steps = strategy.actions;
    }
    const vars = templateVars({
      incident: incident.name,
      cluster: incident.cluster,
      namespace: incident.namespace,
      resource: incident.resource,
      severity: incident.severity,
      signalType: incident.signalType,
      labels: incident.labels ?? {},
      insightParams: ((insight?.suggestedActions ?? []) as { params?: Record<string, unknown> }[]).map(
        (a) => a.params ?? {},
      ),
    });
    const rendered =
      strategy.kind === 'runbook' && !runbook
        ? { ok: false as const, problem: `runbook ${strategy.runbook} no longer exists; no step was run` }
        : renderSteps(steps, vars);
    const actions = rendered.ok ? rendered.actions : steps;
    const risk = planRisk(incident.riskScore, actions);
    const recentFailures = runbook
      ? await recentRunbookFailures(runbook.name, new Date(Date.now() - CIRCUIT_BREAKER_WINDOW_MS))
      : 0;
    const coolDown = await rolloutCoolDown(incident, actions);
    const need: ApprovalNeed =
      strategy.kind === 'agentic'
        ? { required: false, requiredRole: 'operator', reasons: [] } // each proposed action is gated instead
        : approvalNeed({
            risk,
            threshold: settings.riskThreshold,
            runbook,
            recentFailures,
            coolDown,
            rollsBack: strategy.kind === 'evidence' && actions.some((a) => a.type === 'RollbackDeployment'),
          });
    const now = new Date();
    return createPlanOnce({
      name: await allocateName('RP', now),
      key,
      namespace: incident.namespace,
      issueRef: incident.name,
      cluster: incident.cluster,
      attempt: input.attempt,
      strategy: strategyText(strategy),
      strategyKind: strategy.kind,
      strategyKey: strategyKey(strategy),
      subject: subjectOf(incident),
      runbook: runbook?.name ?? '',
      // Made in its first state: a plan that needs no approval is Executing from the start, as its
      // workflow's search attributes say, and the workflow does not write it again.
      state: firstState({
        problem: !rendered.ok,
        approvalRequired: need.required,
        agentic: strategy.kind === 'agentic',
      }),
      result: rendered.ok ? '' : rendered.problem,
      agenticMode: strategy.kind === 'agentic',
      agenticStepCount: 0,
      actions,
      riskScore: risk,
      approvalRequired: need.required,
      approvalReasons: need.reasons,
      approval: '',
      verifyWindowMs: runbook?.verifyWindowMs ?? settings.verifyWindowMs,
      startedAt: now,
      ...(!rendered.ok && { completedAt: now }),
      creationTimestamp: now,
    });
  }

  function prepared(plan: PlanRecord, incident: IncidentRecord, insight: InsightRecord | undefined): PreparedPlan {
    const { kind, name } = splitResource(incident.resource);
    const signature = failureSignature(insight?.evidence as IncidentEvidence | undefined);
    return {
      name: plan.name,
      incident: incident.name,
      namespace: incident.namespace,
      cluster: incident.cluster,
      resource: { kind, name },
      attempt: plan.attempt,
      strategy: plan.strategy,
      agentic: plan.agenticMode,
      runbook: plan.runbook,
      actions: plan.actions.map(({ type, params, description }) =>
        publicStep({ type, params, description } as RunbookAction),
      ),
      ...(plan.state === 'Failed' && { problem: plan.result }),
      ...(plan.state === 'Executing' && { recordedExecuting: true }),
      riskScore: plan.riskScore,
      incidentRisk: incident.riskScore,
      approval: {
        required: plan.approvalRequired,
        reasons: plan.approvalReasons,
        requiredRole: plan.riskScore >= ADMIN_APPROVAL_RISK ? 'admin' : 'operator',
      },
      verifyWindowMs: plan.verifyWindowMs,
      approvalTtlMs: settings.approvalTtlMs,
      riskThreshold: settings.riskThreshold,
      ...(signature && { signature }),
    };
  }

  /**
   * The first plan a triage made, when a retry of that triage found its incident resolved: the
   * workflow never gets it, so it ends here as the workflow's `abandon` ends a plan a resolve
   * overtook (a plan never made, or ended already, is left as it is). Its triage gives back the
   * opening it held.
   */
  async function abandonFirstPlan(incident: string): Promise<void> {
    const plan = await planByKey(`${incident}/attempt/1`);
    if (plan && !FINAL_PLAN_STATES.includes(plan.state))
      await finishPlan({ plan: plan.name, state: 'Failed', result: PLAN_ABANDONED_RESULT });
  }

  return { options, prepare, abandonFirstPlan };
}

/**
 * The remediation engine's side effects (DESIGN §8): making a plan, the
 * concrete inputs of its Kubernetes steps, its timeline, audit and end. Each is idempotent: keyed
 * records (plan by `<incident>/attempt/<n>`, events and audit by plan and step).
 */
export function createRemediationActivities(config: Config, llmConfigured: boolean) {
  const { runHttpStep, runScriptStep } = createRemediationStepActivities(config);
  const { prepare } = createRemediationSteps(config, llmConfigured);
  /** Step `index` of a plan as recorded: its full params (headers, body, script) live only there. */
  const recordedStep = async <T extends RunbookAction['type']>(planName: string, index: number, type: T) => {
    const plan = await mustGetPlan(planName);
    const action = plan.actions[index];
    if (action?.type !== type) throw notApplicable(`step ${index + 1} of ${plan.name} is not ${type}`);
    return { key: `${plan.name}/${index}`, action: action as Extract<RunbookAction, { type: T }> };
  };
  /**
   * Failures without details (an HTTP failure's details carry the response body), keeping what
   * the retry needs: the type, whether to retry, and the receiver's Retry-After.
   */
  const bare = (err: unknown) =>
    err instanceof ApplicationFailure
      ? ApplicationFailure.create({
          message: err.message,
          type: err.type ?? undefined,
          nonRetryable: err.nonRetryable ?? undefined,
          nextRetryDelay: err.nextRetryDelay ?? undefined,
        })
      : err;

  /**
   * Makes attempt `attempt`'s plan once: its `RP-…` name, the steps with templates filled (or
   * why it cannot start), its risk and whether a person must approve it; `RemediationStarted`.
   * `remediating` moves the incident to `Remediating` in the same write (one-step triage).
   */
  async function preparePlan(input: {
    name: string;
    attempt: number;
    strategy: Strategy;
    remediating?: boolean;
  }): Promise<PreparedPlan> {
    return prepare(await mustGetIncident(input.name), input);
  }

  return {
    preparePlan,

    /** Runs HTTP step `index` of a plan as recorded (headers and body never pass through the workflow). */
    /** The response body stays out of the workflow: it may echo the request or carry tokens. */
    async runHttpPlanStep(input: { plan: string; index: number }): Promise<Omit<HttpStepResult, 'body'>> {
      const { key, action } = await recordedStep(input.plan, input.index, 'HttpRequest');
      const p = action.params;
      try {
        const { body: _body, ...result } = await runHttpStep({
          key,
          method: p.method,
          url: p.url as string,
          ...(p.headers && { headers: p.headers }),
          ...(p.body !== undefined && { body: p.body }),
          ...(p.expectStatus !== undefined && { expectStatus: p.expectStatus }),
        });
        return result;
      } catch (err) {
        throw bare(err);
      }
    },

    /** Runs RunScript step `index` of a plan as recorded (the script never passes through the workflow). */
    async runScriptPlanStep(input: { plan: string; index: number }): Promise<ScriptStepResult> {
      const { key, action } = await recordedStep(input.plan, input.index, 'RunScript');
      const { script, timeout } = action.params;
      return runScriptStep({ key, script, ...(timeout && { timeoutMs: parseDuration(timeout) }) });
    },

    async setPlanState(input: { plan: string; state: PlanState; approval?: string }): Promise<void> {
      await updatePlan(input.plan, { state: input.state, ...(input.approval && { approval: input.approval }) });
    },

    /**
     * The concrete inputs of Kubernetes step `index`, chosen once and recorded in the plan: the
     * target (the step's or the incident's), absolute replicas and limits from the values found.
     * A retry, or the execution after an approval, uses exactly what was recorded.
     */
    async resolveKubeStep(input: { plan: string; index: number }): Promise<ResolvedKubeStep> {
      const plan = await mustGetPlan(input.plan);
      const action = plan.actions[input.index];
      if (!action) throw notApplicable(`plan ${plan.name} has no step ${input.index + 1}`);
      if (action.resolved) return action.resolved as ResolvedKubeStep;
      const incident = await mustGetIncident(plan.issueRef);
      const resolved = await resolveKubeAction(plan, input.index, action, incident);
      return resolveStepOnce(plan.name, input.index, resolved);
    },

    /**
     * One step done (or failed): the plan, `ActionExecuted`, and audit `remediation.execute` by
     * system. `then`: the plan's next state, written with the step (its last step's, Verifying).
     */
    async recordStep(input: {
      plan: string;
      index: number;
      outcome: 'ok' | 'failed' | 'undone';
      result: string;
      params: Record<string, unknown>;
      type: string;
      then?: PlanState;
    }): Promise<void> {
      const at = new Date();
      const undo = input.outcome === 'undone';
      const stepNo = input.index + 1;
      const plan = await recordStepOutcome(input.plan, input.index, input.outcome, input.result, input.then);
      if (!plan) throw new Error(`remediation plan ${input.plan} does not exist`);
      const suffix = undo ? `undo/${input.index}` : `step/${input.index}`;
      const params = redact(input.params); // what people read: never a credential
      await appendTimeline(plan.issueRef, [
        {
          key: `${plan.name}/${suffix}`,
          event: {
            timestamp: at,
            type: 'ActionExecuted',
            source: 'remediation-engine',
            message: `${plan.name} step ${stepNo} ${input.type}${undo ? ' undone' : input.outcome === 'ok' ? '' : ' failed'}: ${input.result}`,
            details: {
              plan: plan.name,
              step: stepNo,
              action: input.type,
              params,
              outcome: input.outcome,
              result: input.result,
              ...(undo && { undo: true }),
            },
          },
        },
      ]);
      await appendAudit(
        {
          action: 'remediation.execute',
          user: 'system',
          role: 'system',
          sourceIP: 'internal',
          userAgent: 'foghorn',
          resource: plan.name,
          resourceType: 'Remediation',
          namespace: plan.namespace,
          details: {
            incident: plan.issueRef,
            runbook: plan.runbook,
            step: stepNo,
            action: input.type,
            params,
            result: input.result,
            outcome: input.outcome,
          },
        },
        at,
        `${plan.name}/audit/${suffix}`,
      );
    },

    /** An agent's proposed action joins the plan's `actions` (once per step); its index there. */
    async addAgenticAction(input: { plan: string; step: number; action: RunbookAction }): Promise<number> {
      return appendAgenticAction(input.plan, input.step, input.action);
    },

    /** `AgenticStep` on the timeline, counted in `agenticStepCount`. */
    async recordAgenticStep(input: {
      plan: string;
      step: number;
      reasoning: string;
      tool: string;
      params: Record<string, unknown>;
      observation: string;
    }): Promise<void> {
      const plan = await mustGetPlan(input.plan);
      await setAgenticStepCount(plan.name, input.step);
      await appendTimeline(plan.issueRef, [
        {
          key: `${plan.name}/agentic/${input.step}`,
          event: {
            timestamp: new Date(),
            type: 'AgenticStep',
            source: 'remediation-engine',
            message: `${plan.name} agent step ${input.step}: ${input.tool}${input.reasoning ? ` (${input.reasoning.slice(0, 300)})` : ''}`,
            details: {
              plan: plan.name,
              step: input.step,
              reasoning: input.reasoning,
              tool: input.tool,
              params: input.params,
              observation: input.observation,
            },
          },
        },
      ]);
    },

    /** What the agent is told about the incident. */
    async agenticContext(input: { name: string }) {
      const incident = await mustGetIncident(input.name);
      const insight = await getInsightByIncident(incident.name);
      return {
        incident: {
          name: incident.name,
          namespace: incident.namespace,
          cluster: incident.cluster,
          resource: incident.resource,
          signalType: incident.signalType,
          severity: incident.severity as Severity,
          description: incident.description,
        },
        insight: insight
          ? { rootCause: insight.rootCause, analysis: insight.analysis, recommendations: insight.recommendations }
          : null,
      };
    },

    /** `Verification` on the timeline: what was checked and what was seen. */
    async recordVerification(input: { plan: string } & Verdict): Promise<void> {
      const plan = await mustGetPlan(input.plan);
      await appendTimeline(plan.issueRef, [verificationEvent(plan, input, new Date())]);
    },

    /**
     * The plan's end: final state and result, `RemediationCompleted|Failed`, the runbook's
     * statistics; with `verification`, its `Verification` event first (one activity, not two).
     */
    async finishPlan(input: PlanEnd): Promise<void> {
      await finishPlan(input);
    },

    /**
     * A successful agentic plan, offered as a manual runbook that needs approval and waits for an
     * admin's review: it never runs by itself.
     */
    async offerRunbook(input: { plan: string }): Promise<string | null> {
      const plan = await mustGetPlan(input.plan);
      const incident = await mustGetIncident(plan.issueRef);
      const steps = plan.actions.map(({ type, params }) => ({ type, params }) as RunbookAction);
      if (steps.length === 0) return null;
      const name = `agentic-${plan.name.toLowerCase()}`;
      await createRunbook(
        {
          name,
          category: categoryForSignal(incident.signalType),
          description: `Proposed from the successful agentic plan ${plan.name} for ${incident.name} (${incident.signalType} on ${incident.resource}). Review the steps before enabling it.`,
          version: '0.1.0',
          automated: false,
          approvalRequired: true,
          severity: [incident.severity as Severity],
          targets: { signalTypes: [incident.signalType] as never, resourceKinds: [] },
          steps,
          maxAttempts: 1,
        },
        new Date(),
        { reviewPending: true, proposedBy: plan.name },
      );
      return name;
    },
  };
}

export type RemediationActivities = ReturnType<typeof createRemediationActivities>;

// ---------------------------------------------------------------------------------------------
// Resolving a Kubernetes step to the inputs of the action activities
// ---------------------------------------------------------------------------------------------

async function resolveKubeAction(
  plan: PlanRecord,
  index: number,
  action: RunbookAction,
  incident: IncidentRecord,
): Promise<ResolvedKubeStep> {
  const { kind, name } = splitResource(incident.resource);
  const key = `${plan.name}/${index}`;
  const base = {
    cluster: plan.cluster,
    namespace: (action.params as { namespace?: string }).namespace ?? incident.namespace,
  };
  const kc = await kubeConfigFor(plan.cluster);
  const apps = kc.makeApiClient(AppsV1Api);
  const core = kc.makeApiClient(CoreV1Api);

  const deploymentOf = (params: { deployment?: string }) => {
    const deployment = params.deployment ?? (kind === 'Deployment' ? name : undefined);
    if (!deployment)
      throw notApplicable(
        `${action.type} needs a Deployment: the incident is about ${incident.resource} and the step names none`,
      );
    return deployment;
  };
  const readDeployment = (deployment: string) => {
    const target: KubeTarget = {
      kind: 'Deployment',
      namespace: base.namespace,
      name: deployment,
      cluster: plan.cluster,
    };
    return kubeCall(target, (o) => apps.readNamespacedDeployment({ name: deployment, namespace: base.namespace }, o));
  };
  const revisionOf = (d: { metadata?: { annotations?: Record<string, string> } }) =>
    Number(d.metadata?.annotations?.['deployment.kubernetes.io/revision'] ?? 0) || 0;

  switch (action.type) {
    case 'RestartDeployment': {
      const deployment = deploymentOf(action.params);
      const d = await readDeployment(deployment);
      return {
        inputs: [{ action: 'RestartDeployment', input: { key, ...base, deployment } }],
        revisionBefore: revisionOf(d),
      };
    }
    case 'RollbackDeployment': {
      // The target is chosen now and pinned: the approval's preview shows it, and the step
      // writes exactly it (re-checked then: never a revision seen failing meanwhile).
      const p = action.params as ActionOf<'RollbackDeployment'>['params'];
      const deployment = deploymentOf(p);
      const d = await readDeployment(deployment);
      const target = { kind: 'Deployment', namespace: base.namespace, name: deployment, cluster: plan.cluster };
      const intent = await rollbackIntent(apps, d, target, p.toRevision);
      return {
        inputs: [{ action: 'RollbackDeployment', input: { key, ...base, deployment, toRevision: intent.revision } }],
        revisionBefore: revisionOf(d),
      };
    }
    case 'ScaleDeployment': {
      const p = action.params as ActionOf<'ScaleDeployment'>['params'];
      const deployment = deploymentOf(p);
      const d = await readDeployment(deployment);
      const current = d.spec?.replicas ?? 1;
      const ceiling = Math.min(p.maxReplicas ?? MAX_REPLICAS, MAX_REPLICAS);
      const replicas = p.replicas ?? Math.max(0, Math.min(ceiling, current + (p.replicasDelta ?? 0)));
      return { inputs: [{ action: 'ScaleDeployment', input: { key, ...base, deployment, replicas } }] };
    }
    case 'AdjustResources': {
      const p = action.params as ActionOf<'AdjustResources'>['params'];
      const deployment = deploymentOf(p);
      const d = await readDeployment(deployment);
      const containers = (d.spec?.template?.spec?.containers ?? []).filter(
        (c) => p.container === undefined || c.name === p.container,
      );
      if (containers.length === 0)
        throw notApplicable(`container ${p.container} not found in deployment ${base.namespace}/${deployment}`);
      const inputs: KubeStepInput[] = containers.map((c) => {
        const limits: { memory?: string; cpu?: string } = {};
        const current = (c.resources?.limits ?? {}) as Record<string, string>;
        if (p.memoryLimit) limits.memory = p.memoryLimit as string;
        if (p.memoryLimitIncreasePercent !== undefined) {
          if (!current.memory) throw notApplicable(`container ${c.name} has no memory limit to raise by a percentage`);
          limits.memory = formatMemory(
            Math.ceil((memoryBytes(current.memory) * (100 + p.memoryLimitIncreasePercent)) / 100),
          );
        }
        if (p.cpuLimit) limits.cpu = p.cpuLimit as string;
        if (p.cpuLimitIncreasePercent !== undefined) {
          if (!current.cpu) throw notApplicable(`container ${c.name} has no cpu limit to raise by a percentage`);
          limits.cpu = formatCpu(Math.ceil((cpuMillis(current.cpu) * (100 + p.cpuLimitIncreasePercent)) / 100));
        }
        return {
          action: 'AdjustResources',
          input: {
            key: containers.length > 1 ? `${key}/${c.name}` : key,
            ...base,
            deployment,
            container: c.name,
            limits,
          },
        };
      });
      return { inputs, revisionBefore: revisionOf(d) };
    }
    case 'DeletePod': {
      const p = action.params as ActionOf<'DeletePod'>['params'];
      if (p.labelSelector) {
        const target: KubeTarget = { kind: 'Pod', namespace: base.namespace, cluster: plan.cluster };
        const pods = await kubeCall(target, (o) =>
          core.listNamespacedPod({ namespace: base.namespace, labelSelector: p.labelSelector, limit: 50 }, o),
        );
        const names = pods.items.map((pod) => pod.metadata?.name ?? '').filter(Boolean);
        if (names.length === 0) throw notApplicable(`no pod matches ${p.labelSelector} in namespace ${base.namespace}`);
        return {
          inputs: names.map((pod) => ({ action: 'DeletePod', input: { key: `${key}/${pod}`, ...base, pod } })),
        };
      }
      const pod = (p.pod as string | undefined) ?? (kind === 'Pod' ? name : undefined);
      if (!pod)
        throw notApplicable(
          `DeletePod needs a pod: the incident is about ${incident.resource} and the step names none`,
        );
      return { inputs: [{ action: 'DeletePod', input: { key, ...base, pod } }] };
    }
    default:
      throw notApplicable(`${action.type} is not a Kubernetes action`);
  }
}
