import type {
  AdjustResourcesInput,
  AdjustResourcesResult,
  DeletePodInput,
  KubeActionType,
  RestartDeploymentInput,
  RollbackDeploymentInput,
  RollbackDeploymentResult,
  ScaleDeploymentInput,
  ScaleDeploymentResult,
} from './kube-actions';
import { redact } from './redact';
import { describeScriptStep, describeUrl } from './remediation-steps';
import type { UserRole } from './roles';
import type { FailureSignature } from './kube-health';
import type { RunbookAction } from './runbook';

/**
 * A plan as the plan workflow runs it, and the pure parts of running it: what a Kubernetes
 * step's result says in words, and how each step is undone from the values recorded before it.
 */

export interface PreparedPlan {
  name: string;
  incident: string;
  namespace: string;
  cluster: string;
  resource: { kind: string; name: string };
  attempt: number;
  strategy: string;
  agentic: boolean;
  runbook: string;
  /** The steps with their templates filled. */
  actions: RunbookAction[];
  /** Set when the plan cannot start (a missing template parameter): it is already Failed. */
  problem?: string;
  /**
   * Its record was made `Executing`, its first move (a plan that needs no approval): the
   * workflow does not write that state again.
   */
  recordedExecuting?: boolean;
  riskScore: number;
  incidentRisk: number;
  approval: { required: boolean; reasons: string[]; requiredRole: UserRole };
  verifyWindowMs: number;
  approvalTtlMs: number;
  riskThreshold: number;
  /** The failure as the evidence saw it: verification checks it is gone. */
  signature?: FailureSignature;
}

/**
 * Whether the plan's first move is to `Executing`: it can start (no problem) and waits for no
 * approval first (an agentic plan asks per action, later). Its workflow may then start with that
 * state in its search attributes instead of upserting it in its first task.
 */
export function startsExecuting(plan: PreparedPlan): boolean {
  return (
    firstState({ problem: !!plan.problem, approvalRequired: plan.approval.required, agentic: plan.agentic }) ===
    'Executing'
  );
}

/**
 * A plan's first state: `Failed` when it cannot start, `Pending` while a person must approve it
 * first (an agentic plan asks per action, later), else `Executing`.
 */
export function firstState(plan: {
  problem: boolean;
  approvalRequired: boolean;
  agentic: boolean;
}): 'Failed' | 'Pending' | 'Executing' {
  if (plan.problem) return 'Failed';
  return plan.approvalRequired && !plan.agentic ? 'Pending' : 'Executing';
}

/** What a plan's verification found: passed or not, what was checked and seen, in one line. */
export interface Verdict {
  passed: boolean;
  checked: string[];
  seen: string[];
  summary: string;
}

/**
 * A step as it may be shown or carried outside the plan record (workflow payloads, timeline,
 * audit, approvals, API views): an HTTP step's method and URL without credentials or query (never
 * its headers or body), a script's size (never its text), other params redacted. The steps'
 * activities read the full step from the plan record.
 */
export function publicStep(action: RunbookAction): RunbookAction {
  if (action.type === 'HttpRequest') {
    const { method, url, expectStatus } = action.params;
    return {
      ...action,
      params: { method, url: describeUrl(url as string), ...(expectStatus !== undefined && { expectStatus }) },
    };
  }
  if (action.type === 'RunScript')
    return {
      ...action,
      params: {
        script: describeScriptStep(action.params.script),
        ...(action.params.timeout && { timeout: action.params.timeout }),
      },
    };
  return { ...action, params: redact(action.params) } as RunbookAction;
}

/** One call of a Kubernetes action activity. */
export type KubeStepInput =
  | { action: 'RestartDeployment'; input: RestartDeploymentInput }
  | { action: 'ScaleDeployment'; input: ScaleDeploymentInput }
  | { action: 'AdjustResources'; input: AdjustResourcesInput }
  | { action: 'RollbackDeployment'; input: RollbackDeploymentInput }
  | { action: 'DeletePod'; input: DeletePodInput };

/** A Kubernetes step's concrete inputs, chosen once; `revisionBefore` is what undoing a rollout returns to. */
export interface ResolvedKubeStep {
  inputs: KubeStepInput[];
  revisionBefore?: number;
}

/** The result of one action activity, as much as undoing and describing it needs. */
export interface KubeStepResult {
  action: KubeActionType;
  target: string;
  before: unknown;
  after: unknown;
}

/** `deployment shop/api: replicas 2 → 4` */
export function describeKubeResult(r: KubeStepResult): string {
  const b = r.before as Record<string, unknown>;
  const a = r.after as Record<string, unknown>;
  switch (r.action) {
    case 'ScaleDeployment':
      return `${r.target}: replicas ${b.replicas} → ${a.replicas}`;
    case 'AdjustResources':
      return `${r.target} container ${String(a.container)}: limits ${JSON.stringify(b.limits)} → ${JSON.stringify(a.limits)}`;
    case 'RollbackDeployment':
      return `${r.target}: revision ${b.revision} → template of revision ${a.revision}${a.reason ? `: ${String(a.reason)}` : ''}`;
    case 'RestartDeployment':
      return `${r.target}: rolling restart at ${String(a.restartedAt)}`;
    case 'DeletePod':
      return `${r.target}: deleted (was ${String(b.phase)} on ${String(b.node ?? 'no node')})`;
  }
}

/**
 * How to undo one executed Kubernetes call, from the state recorded before it (issue 10 §1):
 * replicas before a scale, limits before an adjust, the revision before a rollout (restart or
 * rollback). Null when it cannot be undone: a deleted pod, or a limit that did not exist before
 * (a merge patch cannot remove it).
 */
export function undoInput(
  step: KubeStepInput,
  result: KubeStepResult,
  revisionBefore: number | undefined,
  key: string,
): KubeStepInput | null {
  const { cluster, namespace } = step.input;
  switch (step.action) {
    case 'ScaleDeployment':
      return {
        action: 'ScaleDeployment',
        input: {
          key,
          cluster,
          namespace,
          deployment: step.input.deployment,
          replicas: (result as ScaleDeploymentResult).before.replicas,
        },
      };
    case 'AdjustResources': {
      const before = (result as AdjustResourcesResult).before;
      const changed = step.input.limits ?? {};
      const restore: { cpu?: string; memory?: string } = {};
      for (const k of Object.keys(changed) as ('cpu' | 'memory')[]) {
        if (before.limits[k] === undefined) return null;
        restore[k] = before.limits[k];
      }
      return {
        action: 'AdjustResources',
        input: {
          key,
          cluster,
          namespace,
          deployment: step.input.deployment,
          container: step.input.container,
          limits: restore,
        },
      };
    }
    case 'RestartDeployment':
    case 'RollbackDeployment': {
      const revision =
        step.action === 'RollbackDeployment' ? (result as RollbackDeploymentResult).before.revision : revisionBefore;
      if (!revision) return null;
      return {
        action: 'RollbackDeployment',
        input: { key, cluster, namespace, deployment: step.input.deployment, toRevision: revision },
      };
    }
    case 'DeletePod':
      return null;
  }
}
