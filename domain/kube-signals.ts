import { SIGNAL_DESCRIPTION_MAX, SIGNAL_LABEL_VALUE_MAX, type Signal } from './incident';
import { workloadResource, type KubeMeta, type WorkloadRef } from './kube-owners';
import type { Severity, SignalType } from './vocabulary';

/**
 * Kubernetes object status → failure → Signal, for the cluster watcher (issue 9 §3). Pure and
 * clock-free: `now` is passed in, because "not ready for longer than a threshold" changes with
 * time alone and the watcher re-evaluates on a timer.
 *
 * Semantics follow the kubelet and the controllers (and kube-state-metrics alerts):
 * - OOMKilled: a container's last (or current) termination has reason OOMKilled, while the
 *   container is not ready or the kill is recent (within `recentMs`);
 * - CrashLoopBackOff: waiting reason CrashLoopBackOff, or (between two back-offs, when the
 *   container runs again but is not ready) a recent non-zero exit after restarts;
 * - ImagePullBackOff: waiting reason ImagePullBackOff, ErrImagePull or InvalidImageName;
 * - PodNotReady: condition Ready=False, or PodScheduled=False (unschedulable), for ≥ `notReadyAfterMs`;
 * - DeploymentFailing: Progressing=False reason ProgressDeadlineExceeded, or unavailable
 *   replicas for ≥ `notReadyAfterMs`;
 * - node NotReady: condition Ready False or Unknown. DESIGN §6 has no node signal type: it is
 *   `Custom` with reason NodeNotReady (docs/decisions.md).
 */

export const WATCHER_DETECTION_SOURCE = 'kubernetes-watcher';
export const NODE_NOT_READY = 'NodeNotReady';

export interface ContainerState {
  waiting?: { reason?: string; message?: string };
  running?: { startedAt?: Date | string };
  terminated?: {
    reason?: string;
    message?: string;
    exitCode?: number;
    finishedAt?: Date | string;
  };
}

export interface ContainerStatus {
  name: string;
  ready?: boolean;
  restartCount?: number;
  state?: ContainerState;
  lastState?: ContainerState;
}

export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: Date | string;
}

export interface PodLike {
  metadata?: KubeMeta;
  spec?: { nodeName?: string };
  status?: {
    phase?: string;
    conditions?: Condition[];
    containerStatuses?: ContainerStatus[];
    initContainerStatuses?: ContainerStatus[];
  };
}

export interface DeploymentLike {
  metadata?: KubeMeta;
  spec?: { replicas?: number; paused?: boolean };
  status?: { replicas?: number; unavailableReplicas?: number; conditions?: Condition[] };
}

export interface NodeLike {
  metadata?: KubeMeta;
  status?: { conditions?: Condition[] };
}

/** What is wrong with one object (a pod, a deployment's rollout, a node). */
export interface Failure {
  type: SignalType;
  /** Kubernetes' own reason: CrashLoopBackOff, OOMKilled, ErrImagePull, ProgressDeadlineExceeded, NodeNotReady … */
  reason: string;
  message: string;
  container?: string;
  restartCount?: number;
  exitCode?: number;
}

export interface Thresholds {
  /** How long a pod may be not ready, or a deployment short of replicas, before it is a failure. */
  notReadyAfterMs: number;
  /** How long a past OOM kill keeps a ready container failing (default: notReadyAfterMs). */
  recentMs?: number;
}

export const DEFAULT_NOT_READY_AFTER_MS = 5 * 60_000;

/** Severity per failure (docs/decisions.md): a node down is critical; a workload crashing is high. */
export const WATCH_SEVERITY: Readonly<Record<string, Severity>> = {
  OOMKilled: 'high',
  CrashLoopBackOff: 'high',
  DeploymentFailing: 'high',
  ImagePullBackOff: 'medium',
  PodNotReady: 'medium',
  [NODE_NOT_READY]: 'critical',
};

const IMAGE_PULL_REASONS = new Set(['ImagePullBackOff', 'ErrImagePull', 'InvalidImageName']);

/** A Kubernetes timestamp (Date from a list, RFC 3339 text from a watch) in ms; NaN when absent. */
export function timeOf(t: Date | string | undefined): number {
  if (t === undefined || t === null) return NaN;
  return t instanceof Date ? t.getTime() : Date.parse(t);
}

const condition = (conditions: Condition[] | undefined, type: string) => conditions?.find((c) => c.type === type);

/** True when `since` is known and at least `ms` before `now`. */
const lastedAtLeast = (since: Date | string | undefined, now: number, ms: number) => {
  const t = timeOf(since);
  return Number.isFinite(t) && now - t >= ms;
};

function containerFailure(c: ContainerStatus, now: number, th: Thresholds): Failure | undefined {
  const recentMs = th.recentMs ?? th.notReadyAfterMs;
  const base = { container: c.name, restartCount: c.restartCount ?? 0 };
  const waiting = c.state?.waiting;
  const lastTerm = c.state?.terminated ?? c.lastState?.terminated;
  const recent = lastTerm !== undefined && !lastedAtLeast(lastTerm.finishedAt, now, recentMs);

  if (lastTerm?.reason === 'OOMKilled' && (c.ready !== true || recent))
    return {
      type: 'OOMKilled',
      reason: 'OOMKilled',
      message: `container ${c.name} was OOMKilled (exit code ${lastTerm.exitCode ?? 137})${waiting?.reason ? `; ${waiting.reason}` : ''}`,
      exitCode: lastTerm.exitCode ?? 137,
      ...base,
    };
  if (waiting?.reason === 'CrashLoopBackOff')
    return {
      type: 'CrashLoopBackOff',
      reason: 'CrashLoopBackOff',
      message: `container ${c.name} is crash-looping${lastTerm?.reason ? ` (last exit: ${lastTerm.reason}, code ${lastTerm.exitCode ?? '?'})` : ''}${waiting.message ? `: ${waiting.message}` : ''}`,
      ...(lastTerm?.exitCode !== undefined && { exitCode: lastTerm.exitCode }),
      ...base,
    };
  // Between two back-offs the container runs again (no waiting reason) but is still not ready.
  if (c.ready !== true && (c.restartCount ?? 0) > 0 && recent && (lastTerm?.exitCode ?? 0) !== 0)
    return {
      type: 'CrashLoopBackOff',
      reason: 'CrashLoopBackOff',
      message: `container ${c.name} keeps restarting (last exit: ${lastTerm?.reason ?? 'Error'}, code ${lastTerm?.exitCode})`,
      exitCode: lastTerm?.exitCode,
      ...base,
    };
  if (waiting?.reason && IMAGE_PULL_REASONS.has(waiting.reason))
    return {
      type: 'ImagePullBackOff',
      reason: waiting.reason,
      message: `container ${c.name} cannot pull its image (${waiting.reason})${waiting.message ? `: ${waiting.message}` : ''}`,
      ...base,
    };
  return undefined;
}

/** The failure of one pod, the most specific first (a container's reason over the pod's readiness). */
export function podFailure(pod: PodLike, now: number, th: Thresholds): Failure | undefined {
  const status = pod.status;
  if (!status || pod.metadata?.deletionTimestamp) return undefined; // terminating: its replacement counts
  if (status.phase === 'Succeeded') return undefined; // a finished Job pod is not ready, and fine
  const containers = [...(status.initContainerStatuses ?? []), ...(status.containerStatuses ?? [])];
  const found = containers.map((c) => containerFailure(c, now, th)).filter((f): f is Failure => f !== undefined);
  // OOMKilled names the root cause of a crash loop, so it wins over CrashLoopBackOff.
  for (const type of ['OOMKilled', 'CrashLoopBackOff', 'ImagePullBackOff'] as const) {
    const f = found.find((x) => x.type === type);
    if (f) return f;
  }
  const scheduled = condition(status.conditions, 'PodScheduled');
  if (scheduled?.status === 'False' && lastedAtLeast(scheduled.lastTransitionTime, now, th.notReadyAfterMs))
    return {
      type: 'PodNotReady',
      reason: scheduled.reason || 'Unschedulable',
      message: `pod cannot be scheduled${scheduled.message ? `: ${scheduled.message}` : ''}`,
    };
  const ready = condition(status.conditions, 'Ready');
  if (ready?.status === 'False' && lastedAtLeast(ready.lastTransitionTime, now, th.notReadyAfterMs)) {
    const notReady = status.containerStatuses?.filter((c) => c.ready !== true).map((c) => c.name) ?? [];
    return {
      type: 'PodNotReady',
      reason: ready.reason || 'PodNotReady',
      message: `pod not ready since ${new Date(timeOf(ready.lastTransitionTime)).toISOString()}${notReady.length ? ` (containers not ready: ${notReady.join(', ')})` : ''}`,
      ...(notReady.length === 1 && { container: notReady[0] }),
    };
  }
  return undefined;
}

/**
 * A Deployment's rollout failure. `unavailableSince` is when the watcher first saw it short of
 * replicas (the API keeps no timestamp for that while Available is still True).
 */
export function deploymentFailure(
  d: DeploymentLike,
  now: number,
  th: Thresholds,
  unavailableSince?: number,
): Failure | undefined {
  if (!d.status || d.metadata?.deletionTimestamp) return undefined;
  const progressing = condition(d.status.conditions, 'Progressing');
  if (progressing?.status === 'False' && progressing.reason === 'ProgressDeadlineExceeded')
    return {
      type: 'DeploymentFailing',
      reason: 'ProgressDeadlineExceeded',
      message: `rollout stalled: ${progressing.message || 'progress deadline exceeded'}`,
    };
  const unavailable = d.status.unavailableReplicas ?? 0;
  if (unavailable <= 0 || d.spec?.paused) return undefined;
  const available = condition(d.status.conditions, 'Available');
  const since = Math.min(
    unavailableSince ?? Infinity,
    available?.status === 'False' ? timeOf(available.lastTransitionTime) || Infinity : Infinity,
  );
  if (!(now - since >= th.notReadyAfterMs)) return undefined;
  const desired = d.spec?.replicas ?? d.status.replicas ?? 0;
  return {
    type: 'DeploymentFailing',
    reason: 'UnavailableReplicas',
    message: `${unavailable} of ${desired} replicas unavailable since ${new Date(since).toISOString()}`,
  };
}

/** A node whose Ready condition is False (kubelet says so) or Unknown (kubelet silent). */
export function nodeFailure(node: NodeLike): Failure | undefined {
  if (node.metadata?.deletionTimestamp) return undefined;
  const ready = condition(node.status?.conditions, 'Ready');
  if (!ready || ready.status === 'True') return undefined;
  return {
    type: 'Custom',
    reason: NODE_NOT_READY,
    message: `node ${node.metadata?.name ?? ''} is NotReady (Ready=${ready.status}${ready.reason ? `, ${ready.reason}` : ''})${ready.message ? `: ${ready.message}` : ''}`,
  };
}

/** The latest warning Event about an object: evidence shown with its signal. */
export interface WarningEvidence {
  reason: string;
  message: string;
  count: number;
}

/**
 * The firing signal for one failing member (`Pod/<name>`, or the workload / node itself) of a
 * workload. Labels mirror what kube-state-metrics alerts carry, plus `object` (the member), which
 * lets a restarted watcher tell which members an open incident already has.
 */
export function failureSignal(
  cluster: string,
  workload: WorkloadRef,
  member: string,
  failure: Failure,
  evidence?: WarningEvidence,
): Signal {
  const kindLabel = workload.kind.toLowerCase();
  const labels: Record<string, string> = {
    object: member,
    reason: failure.reason,
    ...(workload.kind !== 'Node' && { namespace: workload.namespace }),
    [kindLabel]: workload.name,
  };
  if (member.startsWith('Pod/')) labels.pod = member.slice(4);
  if (failure.container) labels.container = failure.container;
  if (failure.restartCount !== undefined) labels.restartCount = String(failure.restartCount);
  if (failure.exitCode !== undefined) labels.exitCode = String(failure.exitCode);
  if (evidence) labels.event = evidence.reason;
  for (const k of Object.keys(labels)) labels[k] = labels[k].slice(0, SIGNAL_LABEL_VALUE_MAX);

  const subject = member === workloadResource(workload) ? member : `${member} of ${workloadResource(workload)}`;
  const seen = evidence
    ? ` Last warning event: ${evidence.reason}: ${evidence.message}${evidence.count > 1 ? ` (×${evidence.count})` : ''}`
    : '';
  return {
    resource: workloadResource(workload),
    namespace: workload.namespace,
    signalType: failure.type,
    severity: WATCH_SEVERITY[failure.type === 'Custom' ? failure.reason : failure.type] ?? 'medium',
    description: `${failure.reason}: ${subject}: ${failure.message}.${seen}`.slice(0, SIGNAL_DESCRIPTION_MAX),
    cluster,
    labels,
    detectionSource: WATCHER_DETECTION_SOURCE,
  };
}

/** The resolved signal of a workload none of whose members fails any more. */
export function recoverySignal(cluster: string, workload: WorkloadRef, lastType: SignalType = 'Custom'): Signal {
  return {
    resource: workloadResource(workload),
    namespace: workload.namespace,
    signalType: lastType,
    description: `${workloadResource(workload)} recovered: no failing member left`,
    cluster,
    labels: { [workload.kind.toLowerCase()]: workload.name },
    detectionSource: WATCHER_DETECTION_SOURCE,
  };
}
