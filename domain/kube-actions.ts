import type { ActivityTimeouts } from './activity-options';
import { redactText } from './redact';

/**
 * The Kubernetes actions a remediation step runs (DESIGN §8), as activity inputs and results,
 * and how their failures are classified. Each input carries the step's idempotency `key`
 * (plan + step index): the activity applies a key once, however often it is retried. The
 * inputs are validated by contracts/kube-actions.ts.
 */

export const KUBE_ACTION_TYPES = [
  'RestartDeployment',
  'ScaleDeployment',
  'AdjustResources',
  'RollbackDeployment',
  'DeletePod',
] as const;
export type KubeActionType = (typeof KUBE_ACTION_TYPES)[number];

/** The annotation `kubectl rollout restart` sets on the pod template. */
export const RESTARTED_AT_ANNOTATION = 'kubectl.kubernetes.io/restartedAt';
/** The revision the deployment controller gives a Deployment and its ReplicaSets. */
export const REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';
/** The label the deployment controller adds to a ReplicaSet's template; never copied back. */
export const POD_TEMPLATE_HASH_LABEL = 'pod-template-hash';
/** ScaleDeployment's ceiling: a typo (1000 for 10) must not take a cluster down. */
export const MAX_REPLICAS = 500;

export interface CpuMemory {
  cpu?: string;
  memory?: string;
}

/** What every action input names: the step's key (`RP-20261123-001/2`), the cluster and the namespace. */
export interface ActionInputBase {
  key: string;
  cluster: string;
  namespace: string;
}

export interface RestartDeploymentInput extends ActionInputBase {
  deployment: string;
}

export interface ScaleDeploymentInput extends ActionInputBase {
  deployment: string;
  replicas: number;
}

/** At least one of requests.cpu, requests.memory, limits.cpu, limits.memory. */
export interface AdjustResourcesInput extends ActionInputBase {
  deployment: string;
  container: string;
  requests?: CpuMemory;
  limits?: CpuMemory;
}

export interface RollbackDeploymentInput extends ActionInputBase {
  deployment: string;
  /** Absent: the newest revision Foghorn saw healthy (domain/rollback-target.ts). */
  toRevision?: number;
}

export interface DeletePodInput extends ActionInputBase {
  pod: string;
}

// ---------------------------------------------------------------------------------------------
// Results: compact (they land in workflow histories), with the values before and after.
// ---------------------------------------------------------------------------------------------
export interface ContainerResources {
  requests: CpuMemory;
  limits: CpuMemory;
}

export interface KubeActionResult<A extends KubeActionType, B, F> {
  key: string;
  action: A;
  cluster: string;
  /** `deployment payments/api` */
  target: string;
  before: B;
  after: F;
  /** True when the key had already been applied: the recorded result, the cluster untouched. */
  repeated: boolean;
}

export type RestartDeploymentResult = KubeActionResult<
  'RestartDeployment',
  { restartedAt: string | null },
  { restartedAt: string }
>;
export type ScaleDeploymentResult = KubeActionResult<'ScaleDeployment', { replicas: number }, { replicas: number }>;
export type AdjustResourcesResult = KubeActionResult<
  'AdjustResources',
  ContainerResources & { container: string },
  ContainerResources & { container: string }
>;
/** `before.revision` is the Deployment's revision; `after.revision` the one whose template it now runs. */
export type RollbackDeploymentResult = KubeActionResult<
  'RollbackDeployment',
  { revision: number; images: string[] },
  /** `reason`: why this revision (domain/rollback-target.ts). */
  { revision: number; images: string[]; reason?: string }
>;
export type DeletePodResult = KubeActionResult<
  'DeletePod',
  { uid: string; phase: string; node: string | null },
  { deleted: true }
>;

/** What an input asks for, without its key: two calls with one key must ask for the same thing. */
export function actionParams(input: { key: string } & Record<string, unknown>): string {
  const { key: _key, ...params } = input;
  return canonicalJson(params);
}

/** JSON with object keys sorted, so equal values give equal text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : v,
  );
}

/** The container resources after an adjustment: the given values over the current ones. */
export function mergeResources(current: ContainerResources, input: Pick<AdjustResourcesInput, 'requests' | 'limits'>) {
  return {
    requests: { ...current.requests, ...input.requests },
    limits: { ...current.limits, ...input.limits },
  } satisfies ContainerResources;
}

/** A revision annotation as a number; 0 when absent or malformed (the controller has not set it yet). */
export function parseRevision(annotations: Record<string, string> | undefined): number {
  const n = Number(annotations?.[REVISION_ANNOTATION]);
  return Number.isSafeInteger(n) && n > 0 ? n : 0;
}

// ---------------------------------------------------------------------------------------------
// Error classification
// ---------------------------------------------------------------------------------------------

export const KUBE_ERROR_TYPES = {
  notFound: 'KubeNotFound',
  forbidden: 'KubeForbidden',
  unauthorized: 'KubeUnauthorized',
  invalid: 'KubeInvalid',
  refused: 'KubeRequestRefused',
  conflict: 'KubeConflict',
  throttled: 'KubeThrottled',
  unavailable: 'KubeUnavailable',
  unreachable: 'KubeUnreachable',
  timeout: 'KubeTimeout',
  /** The same key was used for a different action or different parameters. */
  keyReused: 'KubeActionKeyReused',
  /** The action cannot apply to the object as it is (no previous revision, no such container). */
  notApplicable: 'KubeActionNotApplicable',
} as const;
export type KubeErrorType = (typeof KUBE_ERROR_TYPES)[keyof typeof KUBE_ERROR_TYPES];

/** An activity input that fails its schema (the type every activity of Foghorn uses). */
export const KUBE_INVALID_INPUT = 'InvalidInput';

/** The types a workflow must not retry: the same call would fail the same way. */
export const KUBE_NON_RETRYABLE_ERROR_TYPES: readonly string[] = [
  KUBE_ERROR_TYPES.notFound,
  KUBE_ERROR_TYPES.forbidden,
  KUBE_ERROR_TYPES.unauthorized,
  KUBE_ERROR_TYPES.invalid,
  KUBE_ERROR_TYPES.refused,
  KUBE_ERROR_TYPES.keyReused,
  KUBE_ERROR_TYPES.notApplicable,
  'ClusterNotFound', // activities/kube/client.ts: the cluster is not registered
  KUBE_INVALID_INPUT,
];

/** The object an API call was about, for messages: `deployment payments/api in cluster prod`. */
export interface KubeTarget {
  kind: string;
  namespace?: string;
  name?: string;
  cluster: string;
}

export function describeTarget(t: KubeTarget): string {
  const kind = t.kind.toLowerCase();
  const name = t.name === undefined ? '' : t.namespace ? ` ${t.namespace}/${t.name}` : ` ${t.name}`;
  const scope = t.name === undefined && t.namespace ? ` in namespace ${t.namespace}` : '';
  return `${kind}${name}${scope}`;
}

/** What went wrong, from the API server's Status (`status`, `reason`) or the network (`status` absent). */
export interface KubeErrorFacts {
  /** The HTTP status; absent when no answer came (connection refused, reset, DNS, timeout). */
  status?: number;
  /** The Status `reason` (`NotFound`, `Conflict`, `AlreadyExists`…) or a network code (`ECONNREFUSED`, `Timeout`). */
  reason?: string;
  /** The server's own message (`deployments.apps "api" not found`), shown after ours. */
  detail?: string;
}

export interface KubeErrorClass {
  retryable: boolean;
  type: KubeErrorType;
  message: string;
}

/**
 * 404/403/401/400/422 (and other 4xx) will fail again: non-retryable, with a message naming the
 * object and the cluster. 409 is retryable when it is a resourceVersion conflict (someone wrote
 * in between: read again and re-apply) and not when the object already exists. 429, 5xx, no
 * answer at all and timeouts are retryable. Messages never carry credentials (the server's
 * detail goes through the shared redaction).
 */
export function classifyKubeError(facts: KubeErrorFacts, target: KubeTarget): KubeErrorClass {
  const what = describeTarget(target);
  const where = `cluster ${target.cluster}`;
  const detail = facts.detail ? `: ${redactText(facts.detail).slice(0, 300)}` : '';
  const { status, reason } = facts;
  const no = (type: KubeErrorType, message: string) => ({ retryable: false, type, message });
  const yes = (type: KubeErrorType, message: string) => ({ retryable: true, type, message });

  if (status === undefined || status === 0) {
    if (reason === 'Timeout') return yes(KUBE_ERROR_TYPES.timeout, `${where} did not answer in time (${what})`);
    return yes(KUBE_ERROR_TYPES.unreachable, `${where} is unreachable (${what})${reason ? `: ${reason}` : ''}`);
  }
  if (status === 404) return no(KUBE_ERROR_TYPES.notFound, `${what} not found in ${where}`);
  if (status === 403) return no(KUBE_ERROR_TYPES.forbidden, `access to ${what} in ${where} is forbidden${detail}`);
  if (status === 401)
    return no(KUBE_ERROR_TYPES.unauthorized, `${where} refused Foghorn's credentials (401 Unauthorized) for ${what}`);
  if (status === 409) {
    if (reason === 'AlreadyExists') return no(KUBE_ERROR_TYPES.invalid, `${what} already exists in ${where}`);
    return yes(KUBE_ERROR_TYPES.conflict, `${what} in ${where} changed while Foghorn wrote it (409 Conflict)${detail}`);
  }
  if (status === 400 || status === 422)
    return no(KUBE_ERROR_TYPES.invalid, `${where} refused the change to ${what} as invalid (${status})${detail}`);
  if (status === 408 || status === 504)
    return yes(KUBE_ERROR_TYPES.timeout, `${where} timed out (${status}) on ${what}${detail}`);
  if (status === 429) return yes(KUBE_ERROR_TYPES.throttled, `${where} is throttling requests (429) on ${what}`);
  if (status >= 500) return yes(KUBE_ERROR_TYPES.unavailable, `${where} failed (${status}) on ${what}${detail}`);
  // 410 Gone (an expired resourceVersion) is answered by reading again.
  if (status === 410) return yes(KUBE_ERROR_TYPES.conflict, `${what} in ${where}: resource version expired (410)`);
  return no(KUBE_ERROR_TYPES.refused, `${where} refused the request on ${what} (${status})${detail}`);
}

// ---------------------------------------------------------------------------------------------
// Activity options for callers (the remediation workflow)
// ---------------------------------------------------------------------------------------------

/**
 * Actions: each API call is bounded (see activities/kube-actions.ts), an attempt by 2 minutes;
 * transient failures are retried with back-off for up to 10 minutes, then the step fails.
 * Retrying is safe: the activity applies a key once.
 */
export const KUBE_ACTION_ACTIVITY_OPTIONS = {
  startToCloseTimeout: '2m',
  scheduleToCloseTimeout: '10m',
  retry: {
    initialInterval: '2s',
    backoffCoefficient: 2,
    maximumInterval: '1m',
    nonRetryableErrorTypes: [...KUBE_NON_RETRYABLE_ERROR_TYPES],
  },
} satisfies ActivityTimeouts;

/** Reads feed a decision or an agent step: a few quick tries, then the caller goes on without them. */
export const KUBE_READ_ACTIVITY_OPTIONS = {
  startToCloseTimeout: '1m',
  scheduleToCloseTimeout: '3m',
  retry: {
    initialInterval: '1s',
    backoffCoefficient: 2,
    maximumInterval: '20s',
    maximumAttempts: 4,
    nonRetryableErrorTypes: [...KUBE_NON_RETRYABLE_ERROR_TYPES],
  },
} satisfies ActivityTimeouts;

/** One API call's bound; an attempt makes a handful of calls. */
export const KUBE_REQUEST_TIMEOUT_MS = 15_000;

// ---------------------------------------------------------------------------------------------
// Read tools: what the remediation engine and the agent look at. Bounded outputs.
// ---------------------------------------------------------------------------------------------

export const KUBE_READ_KINDS = ['Deployment', 'StatefulSet', 'DaemonSet', 'Pod', 'Node'] as const;
export type KubeReadKind = (typeof KUBE_READ_KINDS)[number];
export const WORKLOAD_KINDS = ['Deployment', 'StatefulSet', 'DaemonSet'] as const;

export const MAX_PODS_LISTED = 50;
export const MAX_EVENTS = 50;
export const MAX_LOG_LINES = 500;
export const MAX_LOG_BYTES = 16 * 1024;
/** Messages from the cluster (conditions, events) are cut here. */
export const MAX_MESSAGE_CHARS = 300;

export interface KubeCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

export interface ContainerSummary {
  name: string;
  image: string;
  ready: boolean;
  restarts: number;
  state: 'running' | 'waiting' | 'terminated' | 'unknown';
  /** waiting.reason or terminated.reason of the current state (`CrashLoopBackOff`, `ImagePullBackOff`). */
  reason?: string;
  /** Why the previous run ended (`OOMKilled`, `Error`) and its exit code. */
  lastTermination?: { reason?: string; exitCode?: number };
}

export interface PodSummary {
  name: string;
  phase: string;
  ready: boolean;
  restarts: number;
  node: string | null;
  containers: ContainerSummary[];
}

export interface WorkloadSummary {
  kind: 'Deployment' | 'StatefulSet' | 'DaemonSet';
  name: string;
  namespace: string;
  cluster: string;
  desired: number;
  ready: number;
  updated: number;
  available: number;
  generation: number;
  observedGeneration: number;
  /** Deployments: the revision annotation; 0 otherwise. */
  revision: number;
  paused: boolean;
  images: string[];
  conditions: KubeCondition[];
}

export interface PodResourceSummary extends PodSummary {
  kind: 'Pod';
  namespace: string;
  cluster: string;
  conditions: KubeCondition[];
}

export interface NodeSummary {
  kind: 'Node';
  name: string;
  cluster: string;
  ready: boolean;
  unschedulable: boolean;
  kubeletVersion: string;
  conditions: KubeCondition[];
}

export type ResourceSummary = WorkloadSummary | PodResourceSummary | NodeSummary;

export interface PodList {
  cluster: string;
  namespace: string;
  workload: string;
  total: number;
  pods: PodSummary[];
  truncated: boolean;
}

export interface EventSummary {
  type: string;
  reason: string;
  message: string;
  count: number;
  lastSeen: string | null;
  source: string;
}

export interface EventList {
  cluster: string;
  object: string;
  events: EventSummary[];
  truncated: boolean;
}

export type LogTail =
  | { available: true; pod: string; container: string; text: string; truncated: boolean }
  | { available: false; pod: string; container: string | null; reason: string };

/** `text` cut to `max` characters with an ellipsis. */
export function clip(text: string | undefined, max = MAX_MESSAGE_CHARS): string {
  if (!text) return '';
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/**
 * The last `maxBytes` of a log, cut at a line start so no half line or half character shows.
 * `truncated` when something was dropped.
 */
export function tailBytes(text: string, maxBytes = MAX_LOG_BYTES): { text: string; truncated: boolean } {
  const bytes = new TextEncoder().encode(text);
  if (bytes.length <= maxBytes) return { text, truncated: false };
  const cut = new TextDecoder().decode(bytes.slice(bytes.length - maxBytes)).replace(/^\uFFFD+/, '');
  const newline = cut.indexOf('\n');
  return { text: newline >= 0 && newline < cut.length - 1 ? cut.slice(newline + 1) : cut, truncated: true };
}
