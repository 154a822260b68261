import { fingerprint } from './fingerprint';
import type { UserRole } from './roles';
import { canonicalJson, KUBE_ACTION_TYPES, type KubeActionType } from './kube-actions';
import { ruledOutBy, type EvidencePlan, type RemediationGuidance } from './remediation-guidance';
import type { ActionType, RunbookAction } from './runbook';

/**
 * The remediation engine's vocabulary (DESIGN §8): plan states, strategies and how the next one
 * is chosen, plan risk and when a person must approve. Pure: the incident and plan workflows
 * call these directly, so every decision replays identically.
 */

export const PLAN_STATES = ['Pending', 'Executing', 'Verifying', 'Completed', 'Failed', 'RolledBack'] as const;
export type PlanState = (typeof PLAN_STATES)[number];
export const FINAL_PLAN_STATES: readonly PlanState[] = ['Completed', 'Failed', 'RolledBack'];
/** The result of a plan its incident's resolve overtook before it started: it never ran, nor said a state. */
export const PLAN_ABANDONED_RESULT = 'cancelled: the incident was resolved before the plan started';

export const APPROVAL_STATUSES = ['pending', 'approved', 'rejected', 'expired'] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];

// ---------------------------------------------------------------------------------------------
// Strategies
// ---------------------------------------------------------------------------------------------

const TIER_TEXT = { 1: 'category+severity+kind', 2: 'category+severity', 3: 'category' } as const;

export type Strategy =
  | { kind: 'runbook'; runbook: string; tier: 1 | 2 | 3 }
  | { kind: 'generated'; insight: string; fingerprint: string }
  | { kind: 'agentic' }
  | ({ kind: 'evidence' } & Pick<EvidencePlan, 'summary' | 'actions'> & { plan: EvidencePlan['kind'] });

/** The plan's `strategy` text (spec: names the runbook and match tier, or agentic mode). */
export function strategyText(s: Strategy): string {
  if (s.kind === 'runbook') return `runbook ${s.runbook} (tier ${s.tier}: ${TIER_TEXT[s.tier]})`;
  if (s.kind === 'generated') return `generated from insight ${s.insight}`;
  if (s.kind === 'evidence') return `from the evidence: ${s.summary}`;
  return 'agentic';
}

/**
 * What a strategy is, across incidents: `runbook:<name>`, `generated:<fingerprint>`, `agentic`,
 * `evidence:<plan>`. A fix that held but whose failure came back within the hour is remembered
 * as ineffective by this key.
 */
export function strategyKey(s: Strategy): string {
  if (s.kind === 'runbook') return `runbook:${s.runbook}`;
  if (s.kind === 'generated') return `generated:${s.fingerprint}`;
  if (s.kind === 'evidence') return `evidence:${s.plan}`;
  return 'agentic';
}

/** A fix counts as ineffective when the same failure returns to the same workload this soon after it held. */
export const INEFFECTIVE_WITHIN_MS = 60 * 60 * 1000;
/** At most one rollout-changing action per workload this often, unless a person approves another. */
export const ROLLOUT_COOL_DOWN_MS = 10 * 60 * 1000;
/** The steps that change a Deployment's template (a rollout). */
export const ROLLOUT_CHANGING_STEPS: readonly KubeActionType[] = [
  'RestartDeployment',
  'RollbackDeployment',
  'AdjustResources',
];

/** A matched runbook as strategy selection sees it. */
export interface RunbookOption {
  name: string;
  tier: 1 | 2 | 3;
  /** How many plans of this runbook one incident may run (the runbook's `maxAttempts`). */
  maxAttempts: number;
  /** True when a step acts on Kubernetes (it needs the incident's cluster registered). */
  usesKubernetes: boolean;
  /** Why it may not run for this incident (a step the evidence rules out, a fix found ineffective). */
  skipped?: string;
}

/** Everything strategy selection needs, gathered once per incident by an activity. */
export interface RemediationOptions {
  /** FOGHORN_MAX_ATTEMPTS. */
  maxAttempts: number;
  /** Foghorn can reach the incident's cluster: registered, or `local` from the environment. */
  clusterRegistered: boolean;
  /** The incident is about a Deployment (the only kind the agent and the actions change). */
  deployment: boolean;
  runbooks: RunbookOption[];
  /** The runbook generated from the insight's suggested actions, when any are runnable. */
  generated?: { insight: string; fingerprint: string; usesKubernetes: boolean };
  /** An LLM is configured (FOGHORN_LLM_BASE_URL). */
  llm: boolean;
  /** What the evidence calls for (domain/remediation-guidance.ts); absent without evidence. */
  guidance?: RemediationGuidance;
  /** Strategy keys (strategyKey) whose fix held on this workload and the same failure came back within the hour. */
  ineffective?: string[];
}

/**
 * The next strategy (DESIGN §8), or null when none is left: matched runbooks by tier, then the
 * runbook generated from the insight (never twice with the same action list), then the agentic
 * loop — each once; attempts left over then go to the runbooks again, up to each one's
 * `maxAttempts` (fewest runs first, tier order). A strategy that needs the Kubernetes API of a
 * cluster Foghorn cannot reach is not a candidate: it could only fail.
 */
export function chooseStrategy(options: RemediationOptions, tried: readonly Strategy[]): Strategy | null {
  const reachable = (usesKubernetes: boolean) => !usesKubernetes || options.clusterRegistered;
  const runs = (name: string) => tried.filter((t) => t.kind === 'runbook' && t.runbook === name).length;
  // The evidence first: its plan, or a person at once. A plan the evidence called for that did
  // not hold hands over to a person too (its rollback is never undone into the failing template).
  const guided = evidenceStrategy(options, tried);
  if (guided !== undefined) return guided;
  const runbooks = options.runbooks.filter((r) => reachable(r.usesKubernetes) && !r.skipped);
  const fresh = runbooks.find((r) => runs(r.name) === 0);
  if (fresh) return { kind: 'runbook', runbook: fresh.name, tier: fresh.tier };
  const g = options.generated;
  if (g && reachable(g.usesKubernetes) && !tried.some((t) => t.kind === 'generated' && t.fingerprint === g.fingerprint))
    return { kind: 'generated', insight: g.insight, fingerprint: g.fingerprint };
  if (options.llm && options.clusterRegistered && options.deployment && !tried.some((t) => t.kind === 'agentic'))
    return { kind: 'agentic' };
  const again = runbooks.filter((r) => runs(r.name) < r.maxAttempts).sort((a, b) => runs(a.name) - runs(b.name))[0]; // stable: tier order among equals
  return again ? { kind: 'runbook', runbook: again.name, tier: again.tier } : null;
}

/**
 * The strategy the evidence decides (docs/remediation.md §2): null when it says a person must
 * act (it escalates, or its plan was tried and did not hold), its plan when it has one not yet
 * tried, or undefined when the runbooks decide.
 */
function evidenceStrategy(options: RemediationOptions, tried: readonly Strategy[]): Strategy | null | undefined {
  const g = options.guidance;
  if (!g) return undefined;
  if (g.escalate) return null;
  if (tried.some((t) => t.kind === 'evidence')) return null;
  const plan = g.plan;
  const spent = options.ineffective?.includes(`evidence:${plan?.kind}`) || (plan && ruledOutBy(g, plan.actions));
  if (!plan || !options.clusterRegistered || spent) return undefined;
  return { kind: 'evidence', plan: plan.kind, summary: plan.summary, actions: plan.actions };
}

/**
 * Why automation gives up on the incident before its next attempt (the escalation's message,
 * ending "; escalated to on-call"), or undefined while `chooseStrategy` has one to run.
 */
export function giveUpReason(options: RemediationOptions, tried: readonly Strategy[]): string | undefined {
  const attempt = tried.length + 1;
  if (attempt > options.maxAttempts)
    return `${options.maxAttempts} remediation attempt(s) failed; escalated to on-call`;
  if (chooseStrategy(options, tried)) return undefined;
  if (options.guidance?.escalate) return `${options.guidance.escalate}; escalated to on-call`;
  const guided = tried.find((t) => t.kind === 'evidence');
  if (guided)
    return `The plan the evidence called for (${guided.summary}) did not hold: a person takes over; escalated to on-call`;
  const skipped = options.runbooks.filter((r) => r.skipped).map((r) => `runbook ${r.name}: ${r.skipped}`);
  if (attempt === 1 && skipped.length > 0)
    return `No automatic remediation strategy is available (${skipped.join('; ')}); escalated to on-call`;
  return attempt === 1
    ? 'No automatic remediation strategy is available; escalated to on-call'
    : `No remediation strategy left after ${attempt - 1} failed attempt(s); escalated to on-call`;
}

export const isKubeAction = (type: string): type is KubeActionType =>
  (KUBE_ACTION_TYPES as readonly string[]).includes(type);

/** A stable short fingerprint of an action list: equal lists, equal fingerprints. */
export function actionsFingerprint(actions: readonly { type: string; params: unknown }[]): string {
  const text = canonicalJson(actions.map((a) => ({ type: a.type, params: a.params })));
  return fingerprint(text);
}

// ---------------------------------------------------------------------------------------------
// Risk and approval
// ---------------------------------------------------------------------------------------------

/**
 * Points a step adds to the incident's risk: how much it can hurt if it is the wrong move.
 * Deleting, rolling back and arbitrary scripts or requests lose state or reach outside the
 * workload; restarts and resource changes roll pods; waiting and notifying change nothing.
 */
export const ACTION_RISK: Readonly<Record<ActionType, number>> = {
  DeletePod: 15,
  RollbackDeployment: 15,
  RunScript: 20,
  HttpRequest: 10,
  ScaleDeployment: 10,
  AdjustResources: 10,
  RestartDeployment: 5,
  Wait: 0,
  Notify: 0,
};
/** Scaling to zero replicas takes the workload down: as destructive as a delete. */
const SCALE_TO_ZERO_RISK = 30;

export function actionRisk(action: { type: string; params: Record<string, unknown> }): number {
  if (action.type === 'ScaleDeployment' && action.params.replicas === 0) return SCALE_TO_ZERO_RISK;
  return ACTION_RISK[action.type as ActionType] ?? 20;
}

/** Plan risk: the incident's risk plus each step's weight, capped at 100. */
export function planRisk(incidentRisk: number, actions: readonly { type: string; params: Record<string, unknown> }[]) {
  return Math.min(100, incidentRisk + actions.reduce((sum, a) => sum + actionRisk(a), 0));
}

/** At or above this plan risk an approval needs an admin. */
export const ADMIN_APPROVAL_RISK = 85;

export interface ApprovalNeed {
  required: boolean;
  requiredRole: UserRole;
  /** Why, in words: shown on the timeline, in the plan and in the approval. */
  reasons: string[];
}

/** When a person must approve a plan (DESIGN §8, issue 10 §2), and who may. */
export function approvalNeed(input: {
  risk: number;
  threshold: number;
  runbook?: { name: string; automated: boolean; approvalRequired: boolean };
  /** Failed plans of this runbook in the last hour (the circuit breaker). */
  recentFailures?: number;
  /** Another rollout change reached the workload within the cool-down (ROLLOUT_COOL_DOWN_MS). */
  coolDown?: string;
  /** The plan rolls a release back (the evidence's rollback): as the built-in rollback runbooks, a person confirms. */
  rollsBack?: boolean;
}): ApprovalNeed {
  const reasons: string[] = [];
  if (input.coolDown) reasons.push(input.coolDown);
  if (input.rollsBack) reasons.push('a rollback discards a release someone shipped: a person confirms it');
  const r = input.runbook;
  if (r?.approvalRequired) reasons.push(`runbook ${r.name} requires approval`);
  if (r && !r.automated) reasons.push(`runbook ${r.name} is manual (not automated)`);
  if ((input.recentFailures ?? 0) >= CIRCUIT_BREAKER_FAILURES)
    reasons.push(`circuit breaker: ${input.recentFailures} plans of runbook ${r?.name ?? '?'} failed in the last hour`);
  if (input.risk >= input.threshold) reasons.push(`plan risk ${input.risk} ≥ threshold ${input.threshold}`);
  return {
    required: reasons.length > 0,
    requiredRole: input.risk >= ADMIN_APPROVAL_RISK ? 'admin' : 'operator',
    reasons,
  };
}

/** Failed plans of one runbook within CIRCUIT_BREAKER_WINDOW_MS that make its next plans ask first. */
export const CIRCUIT_BREAKER_FAILURES = 3;
export const CIRCUIT_BREAKER_WINDOW_MS = 60 * 60 * 1000;

// ---------------------------------------------------------------------------------------------
// Templates: `{{namespace}}`, `{{deployment}}` … in step params
// ---------------------------------------------------------------------------------------------

const TEMPLATE_RE = /\{\{\s*([A-Za-z][\w.-]*)\s*\}\}/g;
const WHOLE_TEMPLATE_RE = /^\{\{\s*([A-Za-z][\w.-]*)\s*\}\}$/;

/** True when the text holds at least one `{{name}}`. */
export const hasTemplate = (text: string) => new RegExp(TEMPLATE_RE.source).test(text);

/**
 * Fills `{{name}}` in every string of `value` from `vars`. A string that is one whole template
 * whose value is numeric becomes a number (so `replicas: "{{replicas}}"` can fill a number).
 * Names without a value are collected in `missing`, and their text is left as it was.
 */
export function renderTemplates(value: unknown, vars: Readonly<Record<string, string>>, missing: Set<string>): unknown {
  if (typeof value === 'string') {
    const whole = WHOLE_TEMPLATE_RE.exec(value);
    if (whole) {
      const v = vars[whole[1]];
      if (v === undefined) missing.add(whole[1]);
      else if (/^-?\d+$/.test(v)) return Number(v);
      return v ?? value;
    }
    return value.replace(TEMPLATE_RE, (text, key: string) => {
      const v = vars[key];
      if (v === undefined) missing.add(key);
      return v ?? text;
    });
  }
  if (Array.isArray(value)) return value.map((v) => renderTemplates(v, vars, missing));
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, renderTemplates(v, vars, missing)]),
    );
  return value;
}

/** What a template may name: the incident, its resource, its labels, and the insight's action params. */
export function templateVars(input: {
  incident: string;
  cluster: string;
  namespace: string;
  resource: string;
  severity: string;
  signalType: string;
  labels: Record<string, string>;
  insightParams: readonly Record<string, unknown>[];
}): Record<string, string> {
  const [kind, name] = input.resource.split('/');
  const vars: Record<string, string> = {};
  // The insight's params first: the incident's own facts win over a model's suggestion.
  for (const params of input.insightParams)
    for (const [k, v] of Object.entries(params))
      if ((typeof v === 'string' || typeof v === 'number') && vars[k] === undefined) vars[k] = String(v);
  for (const [k, v] of Object.entries(input.labels)) vars[`labels.${k}`] = v;
  Object.assign(vars, {
    incident: input.incident,
    cluster: input.cluster,
    namespace: input.namespace,
    resource: input.resource,
    resourceKind: kind,
    resourceName: name,
    severity: input.severity,
    signalType: input.signalType,
  });
  if (input.labels.memory_limit && vars.memoryLimit === undefined) vars.memoryLimit = input.labels.memory_limit;
  const lower = kind.toLowerCase();
  if (['deployment', 'statefulset', 'daemonset', 'pod', 'node'].includes(lower)) vars[lower] = name;
  return vars;
}

/** What a template may put into a script, a URL, a header or a body: no shell or URL syntax. */
const SAFE_VALUE = /^[A-Za-z0-9._-]*$/;

/**
 * Incident labels and a model's suggestions are not trusted: a value filled into a RunScript
 * script, or into an HttpRequest's URL, headers or body, may hold only letters, digits, `.`, `_`
 * and `-` (no shell metacharacters, no spaces, no `/`, `@` or `:`), and a URL's host is never
 * templated (an HTTP step's credentials must not be sent elsewhere).
 */
function injectionProblem(
  step: RunbookAction,
  index: number,
  vars: Readonly<Record<string, string>>,
): string | undefined {
  const texts: string[] = [];
  if (step.type === 'RunScript') texts.push(step.params.script);
  if (step.type === 'HttpRequest') {
    const url = step.params.url as string;
    const authority = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i.exec(url)?.[1] ?? '';
    if (hasTemplate(authority))
      return `step ${index + 1} (HttpRequest) templates its URL's host; only the path may be templated`;
    texts.push(url, ...Object.values(step.params.headers ?? {}), step.params.body ?? '');
  }
  for (const text of texts)
    for (const [, key] of text.matchAll(TEMPLATE_RE)) {
      const value = vars[key];
      if (value !== undefined && !SAFE_VALUE.test(value))
        return `step ${index + 1} (${step.type}): the value of {{${key}}} may only hold letters, digits, '.', '_' and '-' in a script, URL, header or body`;
    }
  return undefined;
}

/**
 * A runbook's steps with their templates filled, or the reason the plan cannot start (nothing
 * has run yet). Filled steps are not validated here: contracts/remediation.ts renderSteps
 * parses each one again before it becomes an action to run.
 */
export function fillSteps(
  steps: readonly RunbookAction[],
  vars: Readonly<Record<string, string>>,
): { ok: true; filled: unknown[] } | { ok: false; problem: string } {
  const injection = steps.map((s, i) => injectionProblem(s, i, vars)).find((p) => p !== undefined);
  if (injection) return { ok: false, problem: `${injection}; no step was run` };
  const missing = new Set<string>();
  const filled = steps.map((s) => renderTemplates(s, vars, missing));
  if (missing.size > 0)
    return {
      ok: false,
      problem: `missing template parameter${missing.size > 1 ? 's' : ''} ${[...missing].map((m) => `{{${m}}}`).join(', ')}: no value from the incident or the insight; no step was run`,
    };
  return { ok: true, filled };
}
