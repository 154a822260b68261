import type { ResourceKind, RunbookCategory, Severity, SignalType } from './vocabulary';

/**
 * Runbooks: named, versioned lists of remediation steps that a remediation workflow runs
 * against an incident's resource. These are their types as the workflows and the engine use
 * them; contracts/runbooks.ts validates them (and is checked against them at compile time).
 */

// ---------------------------------------------------------------------------------------------
// Enumerations
// ---------------------------------------------------------------------------------------------

export const ACTION_TYPES = [
  'RestartDeployment',
  'ScaleDeployment',
  'AdjustResources',
  'RollbackDeployment',
  'DeletePod',
  'HttpRequest',
  'RunScript',
  'Wait',
  'Notify',
] as const;
export type ActionType = (typeof ACTION_TYPES)[number];

export const NOTIFY_CHANNELS = ['slack', 'pagerduty', 'webhook', 'chat'] as const;
export type NotifyChannel = (typeof NOTIFY_CHANNELS)[number];

export const HTTP_REQUEST_METHODS = ['GET', 'POST', 'PUT', 'DELETE'] as const;
export type HttpRequestMethod = (typeof HTTP_REQUEST_METHODS)[number];

// ---------------------------------------------------------------------------------------------
// Actions
// ---------------------------------------------------------------------------------------------

// Params are object types, not interfaces, so that they stay assignable to Record<string, unknown>.
// Every target field (deployment, namespace, pod) is optional: absent means "the incident's own
// resource", which is what lets one runbook serve every workload. A string field may hold
// `{{name}}` templates, filled when a plan is made.

export type DeploymentTarget = {
  deployment?: string;
  namespace?: string;
};

export type ScaleDeploymentParams = {
  deployment?: string;
  namespace?: string;
  replicas?: number;
  /** Negative deltas scale in; never 0. */
  replicasDelta?: number;
  /** Ceiling for replicasDelta, so repeated attempts cannot scale without bound. */
  maxReplicas?: number;
};

export type AdjustResourcesParams = {
  deployment?: string;
  namespace?: string;
  /** Absent: every container in the pod template. */
  container?: string;
  memoryLimit?: string;
  memoryLimitIncreasePercent?: number;
  cpuLimit?: string;
  cpuLimitIncreasePercent?: number;
};

export type RollbackDeploymentParams = {
  deployment?: string;
  namespace?: string;
  /** Absent: the previous revision. */
  toRevision?: number;
};

export type DeletePodParams = {
  /** Absent (with no labelSelector): the incident's pod. */
  pod?: string;
  namespace?: string;
  labelSelector?: string;
};

export type HttpRequestParams = {
  url: string;
  method: HttpRequestMethod;
  headers?: Record<string, string>;
  body?: string;
  expectStatus?: number;
};

/** As written: the method defaults to GET. */
export type HttpRequestInputParams = {
  url: string;
  method?: HttpRequestMethod;
  headers?: Record<string, string>;
  body?: string;
  expectStatus?: number;
};

export type RunScriptParams = {
  script: string;
  /** A Go duration. */
  timeout?: string;
};

export type WaitParams = {
  /** A Go duration. */
  duration: string;
};

export type NotifyParams = {
  channel: NotifyChannel;
  message: string;
};

/** Each action type's params, as validated (defaults applied). */
export interface RunbookActionParams {
  RestartDeployment: DeploymentTarget;
  ScaleDeployment: ScaleDeploymentParams;
  AdjustResources: AdjustResourcesParams;
  RollbackDeployment: RollbackDeploymentParams;
  DeletePod: DeletePodParams;
  HttpRequest: HttpRequestParams;
  RunScript: RunScriptParams;
  Wait: WaitParams;
  Notify: NotifyParams;
}

/** Each action type's params as written: an HttpRequest's method defaults to GET. */
export interface RunbookActionInputParams extends Omit<RunbookActionParams, 'HttpRequest'> {
  HttpRequest: HttpRequestInputParams;
}

/** One step of a runbook, validated. */
export type RunbookAction = {
  [T in ActionType]: { type: T; params: RunbookActionParams[T]; description?: string };
}[ActionType];
/** One step of a runbook, as written. */
export type RunbookActionInput = {
  [T in ActionType]: { type: T; params: RunbookActionInputParams[T]; description?: string };
}[ActionType];
/** The action of one type, e.g. `ActionOf<'Wait'>['params']['duration']`. */
export type ActionOf<T extends ActionType> = Extract<RunbookAction, { type: T }>;

// ---------------------------------------------------------------------------------------------
// Runbook spec
// ---------------------------------------------------------------------------------------------

/** Semantic Versioning 2.0.0, the regex recommended at semver.org (no leading "v"). */
export const SEMVER_RE =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;

/** Names are DNS labels so they can be used as Kubernetes label values and in URLs unescaped. */
export const RUNBOOK_NAME_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** A runbook, validated (defaults applied). */
export interface RunbookSpec {
  name: string;
  category: RunbookCategory;
  description: string;
  version: string;
  /** false = suggested to a human, never run by the system. */
  automated: boolean;
  /** true = a workflow waits for an approval first. */
  approvalRequired: boolean;
  severity: Severity[];
  /** Empty lists mean "no restriction" when matching an incident. */
  targets: { signalTypes: SignalType[]; resourceKinds: ResourceKind[] };
  steps: RunbookAction[];
  maxAttempts: number;
  /** How long a plan of this runbook is verified after its steps (a Go duration); absent = FOGHORN_VERIFY_WINDOW. */
  verificationWindow?: string;
}

/** A runbook as written: what has a default may be left out. */
export interface RunbookInput {
  name: string;
  category: RunbookCategory;
  description: string;
  version: string;
  automated?: boolean;
  approvalRequired?: boolean;
  severity: Severity[];
  targets?: { signalTypes?: SignalType[]; resourceKinds?: ResourceKind[] };
  steps: RunbookActionInput[];
  maxAttempts?: number;
  verificationWindow?: string;
}
