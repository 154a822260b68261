import type {
  CoreV1Event,
  V1Container,
  V1ContainerStatus,
  V1LabelSelector,
  V1Node,
  V1Pod,
  V1PodCondition,
} from '@kubernetes/client-node';
import {
  classifyKubeError,
  clip,
  MAX_LOG_BYTES,
  parseRevision,
  tailBytes,
  type ContainerSummary,
  type EventList,
  type EventSummary,
  type KubeCondition,
  type KubeTarget,
  type LogTail,
  type NodeSummary,
  type PodList,
  type PodSummary,
  type ResourceSummary,
  type WorkloadSummary,
} from '../domain/kube-actions';
import {
  kubeGetResourceInput,
  kubeListPodsInput,
  kubeLogTailInput,
  kubeRecentEventsInput,
  type KubeGetResourceInput,
  type KubeListPodsInput,
  type KubeLogTailInput,
  type KubeRecentEventsInput,
} from '../contracts/kube-actions';
import { kubeCall, kubeClients, parseInput, type KubeClients } from './kube-actions';
import { callOptions } from './kube/call-options';
import { kubeErrorFacts } from './kube/errors';

/**
 * Read tools over a cluster: what the remediation engine checks and the agent looks at. Outputs
 * are summaries with bounded sizes (they go into workflow histories). A missing object or a
 * refused read fails like the actions do (classified); absent logs are a result, not a failure.
 */

const MAX_CONDITIONS = 10;
const LOG_TIMEOUT_MS = 10_000;

function conditions(list: { type: string; status: string; reason?: string; message?: string }[] | undefined) {
  return (list ?? []).slice(0, MAX_CONDITIONS).map((c): KubeCondition => ({
    type: c.type,
    status: c.status,
    ...(c.reason && { reason: c.reason }),
    ...(c.message && { message: clip(c.message) }),
  }));
}

const images = (containers: V1Container[] | undefined) => (containers ?? []).map((c) => c.image ?? '');

function containerSummary(spec: V1Container, status: V1ContainerStatus | undefined): ContainerSummary {
  const state = status?.state;
  const last = status?.lastState?.terminated;
  return {
    name: spec.name,
    image: spec.image ?? '',
    ready: status?.ready ?? false,
    restarts: status?.restartCount ?? 0,
    state: state?.running ? 'running' : state?.waiting ? 'waiting' : state?.terminated ? 'terminated' : 'unknown',
    ...((state?.waiting?.reason ?? state?.terminated?.reason) && {
      reason: state?.waiting?.reason ?? state?.terminated?.reason,
    }),
    ...(last && {
      lastTermination: {
        ...(last.reason && { reason: last.reason }),
        ...(last.exitCode !== undefined && { exitCode: last.exitCode }),
      },
    }),
  };
}

function podSummary(pod: V1Pod): PodSummary {
  const statuses = pod.status?.containerStatuses ?? [];
  const containers = (pod.spec?.containers ?? []).map((c) =>
    containerSummary(
      c,
      statuses.find((s) => s.name === c.name),
    ),
  );
  const ready = (pod.status?.conditions ?? []).some((c: V1PodCondition) => c.type === 'Ready' && c.status === 'True');
  return {
    name: pod.metadata?.name ?? '',
    phase: pod.status?.phase ?? 'Unknown',
    ready,
    restarts: containers.reduce((n, c) => n + c.restarts, 0),
    node: pod.spec?.nodeName ?? null,
    containers,
  };
}

function nodeSummary(node: V1Node, cluster: string): NodeSummary {
  const ready = (node.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
  return {
    kind: 'Node',
    name: node.metadata?.name ?? '',
    cluster,
    ready,
    unschedulable: node.spec?.unschedulable ?? false,
    kubeletVersion: node.status?.nodeInfo?.kubeletVersion ?? '',
    conditions: conditions(node.status?.conditions),
  };
}

type Workload = WorkloadSummary['kind'];

/** A workload's summary and its pod selector. */
async function readWorkload(
  { apps }: KubeClients,
  target: KubeTarget & { kind: Workload; namespace: string; name: string },
): Promise<{ summary: WorkloadSummary; selector: V1LabelSelector | undefined }> {
  const ref = { name: target.name, namespace: target.namespace };
  const base = { kind: target.kind, name: target.name, namespace: target.namespace, cluster: target.cluster };
  if (target.kind === 'Deployment') {
    const d = await kubeCall(target, (o) => apps.readNamespacedDeployment(ref, o));
    return {
      selector: d.spec?.selector,
      summary: {
        ...base,
        desired: d.spec?.replicas ?? 0,
        ready: d.status?.readyReplicas ?? 0,
        updated: d.status?.updatedReplicas ?? 0,
        available: d.status?.availableReplicas ?? 0,
        generation: d.metadata?.generation ?? 0,
        observedGeneration: d.status?.observedGeneration ?? 0,
        revision: parseRevision(d.metadata?.annotations),
        paused: d.spec?.paused ?? false,
        images: images(d.spec?.template?.spec?.containers),
        conditions: conditions(d.status?.conditions),
      },
    };
  }
  if (target.kind === 'StatefulSet') {
    const s = await kubeCall(target, (o) => apps.readNamespacedStatefulSet(ref, o));
    return {
      selector: s.spec?.selector,
      summary: {
        ...base,
        desired: s.spec?.replicas ?? 0,
        ready: s.status?.readyReplicas ?? 0,
        updated: s.status?.updatedReplicas ?? 0,
        available: s.status?.availableReplicas ?? 0,
        generation: s.metadata?.generation ?? 0,
        observedGeneration: s.status?.observedGeneration ?? 0,
        revision: 0,
        paused: false,
        images: images(s.spec?.template?.spec?.containers),
        conditions: conditions(s.status?.conditions),
      },
    };
  }
  const ds = await kubeCall(target, (o) => apps.readNamespacedDaemonSet(ref, o));
  return {
    selector: ds.spec?.selector,
    summary: {
      ...base,
      desired: ds.status?.desiredNumberScheduled ?? 0,
      ready: ds.status?.numberReady ?? 0,
      updated: ds.status?.updatedNumberScheduled ?? 0,
      available: ds.status?.numberAvailable ?? 0,
      generation: ds.metadata?.generation ?? 0,
      observedGeneration: ds.status?.observedGeneration ?? 0,
      revision: 0,
      paused: false,
      images: images(ds.spec?.template?.spec?.containers),
      conditions: conditions(ds.status?.conditions),
    },
  };
}

/** A LabelSelector as the `labelSelector` query text (`app=api,tier in (web,api),!canary`). */
export function selectorText(selector: V1LabelSelector | undefined): string {
  const parts = Object.entries(selector?.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const e of selector?.matchExpressions ?? []) {
    const values = (e.values ?? []).join(',');
    if (e.operator === 'In') parts.push(`${e.key} in (${values})`);
    else if (e.operator === 'NotIn') parts.push(`${e.key} notin (${values})`);
    else if (e.operator === 'Exists') parts.push(e.key);
    else if (e.operator === 'DoesNotExist') parts.push(`!${e.key}`);
  }
  return parts.join(',');
}

async function getResource(raw: KubeGetResourceInput): Promise<ResourceSummary> {
  const input = parseInput(kubeGetResourceInput, raw);
  const clients = await kubeClients(input.cluster);
  const target = { kind: input.kind, namespace: input.namespace, name: input.name, cluster: input.cluster };
  if (input.kind === 'Node') {
    const node = await kubeCall(target, (o) => clients.core.readNode({ name: input.name }, o));
    return nodeSummary(node, input.cluster);
  }
  const namespace = input.namespace!; // the schema requires it for every kind but Node
  if (input.kind === 'Pod') {
    const pod = await kubeCall(target, (o) => clients.core.readNamespacedPod({ name: input.name, namespace }, o));
    return {
      kind: 'Pod',
      namespace,
      cluster: input.cluster,
      ...podSummary(pod),
      conditions: conditions(pod.status?.conditions),
    };
  }
  return (await readWorkload(clients, { ...target, kind: input.kind, namespace, name: input.name })).summary;
}

/** Unhealthy first (not ready, then most restarts), then by name: what a bounded list should keep. */
function byConcern(a: PodSummary, b: PodSummary): number {
  return (
    Number(a.ready) - Number(b.ready) || b.restarts - a.restarts || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
  );
}

async function listPods(raw: KubeListPodsInput): Promise<PodList> {
  const input = parseInput(kubeListPodsInput, raw);
  const clients = await kubeClients(input.cluster);
  const target = { kind: input.kind, namespace: input.namespace, name: input.name, cluster: input.cluster };
  const { selector } = await readWorkload(clients, target);
  const labelSelector = selectorText(selector);
  const pods = await kubeCall({ ...target, kind: 'Pod', name: undefined }, (o) =>
    clients.core.listNamespacedPod({ namespace: input.namespace, ...(labelSelector && { labelSelector }) }, o),
  );
  const all = pods.items.map(podSummary).sort(byConcern);
  return {
    cluster: input.cluster,
    namespace: input.namespace,
    workload: `${input.kind}/${input.name}`,
    total: all.length,
    pods: all.slice(0, input.limit),
    truncated: all.length > input.limit,
  };
}

function eventTime(e: CoreV1Event): Date | undefined {
  const t =
    e.lastTimestamp ?? e.series?.lastObservedTime ?? e.eventTime ?? e.firstTimestamp ?? e.metadata?.creationTimestamp;
  return t ? new Date(t) : undefined;
}

async function recentEvents(raw: KubeRecentEventsInput): Promise<EventList> {
  const input = parseInput(kubeRecentEventsInput, raw);
  const { core } = await kubeClients(input.cluster);
  const target = { kind: input.kind, namespace: input.namespace, name: input.name, cluster: input.cluster };
  const fieldSelector = `involvedObject.kind=${input.kind},involvedObject.name=${input.name}`;
  // Node events live in whichever namespace the reporter chose (usually `default`).
  const list = await kubeCall({ ...target, kind: 'Event', name: undefined }, (o) =>
    input.namespace && input.kind !== 'Node'
      ? core.listNamespacedEvent({ namespace: input.namespace, fieldSelector }, o)
      : core.listEventForAllNamespaces({ fieldSelector }, o),
  );
  const sorted = list.items
    .map((e) => ({ e, at: eventTime(e) }))
    .sort((a, b) => (b.at?.getTime() ?? 0) - (a.at?.getTime() ?? 0));
  const events = sorted.slice(0, input.limit).map(({ e, at }): EventSummary => ({
    type: e.type ?? '',
    reason: e.reason ?? '',
    message: clip(e.message),
    count: e.count ?? e.series?.count ?? 1,
    lastSeen: at?.toISOString() ?? null,
    source: e.source?.component ?? e.reportingComponent ?? '',
  }));
  return {
    cluster: input.cluster,
    object: `${input.kind}/${input.namespace && input.kind !== 'Node' ? `${input.namespace}/` : ''}${input.name}`,
    events,
    truncated: sorted.length > input.limit,
  };
}

/**
 * The last lines of a container's log, cut to MAX_LOG_BYTES. Logs that cannot be had (no such
 * pod or container, not started yet, no kubelet answering, the read refused) come back as
 * `{available: false, reason}` once: the caller decides, nothing here loops.
 */
async function logTail(raw: KubeLogTailInput): Promise<LogTail> {
  const input = parseInput(kubeLogTailInput, raw);
  const { core } = await kubeClients(input.cluster);
  const target: KubeTarget = { kind: 'Pod', namespace: input.namespace, name: input.pod, cluster: input.cluster };
  const absent = (container: string | null, err: unknown): LogTail => ({
    available: false,
    pod: input.pod,
    container,
    reason: classifyKubeError(kubeErrorFacts(err), target).message,
  });
  let pod: V1Pod;
  try {
    pod = await kubeCall(target, (o) => core.readNamespacedPod({ name: input.pod, namespace: input.namespace }, o));
  } catch (err) {
    return { available: false, pod: input.pod, container: input.container ?? null, reason: (err as Error).message };
  }
  const names = (pod.spec?.containers ?? []).map((c) => c.name);
  const container = input.container ?? names[0];
  if (!container || !names.includes(container))
    return {
      available: false,
      pod: input.pod,
      container: container ?? null,
      reason: `container ${container ?? '(none)'} not found in pod ${input.namespace}/${input.pod} (containers: ${names.join(', ') || 'none'})`,
    };
  try {
    const text = await core.readNamespacedPodLog(
      {
        name: input.pod,
        namespace: input.namespace,
        container,
        tailLines: input.tailLines,
        limitBytes: MAX_LOG_BYTES,
        previous: input.previous,
      },
      callOptions(LOG_TIMEOUT_MS),
    );
    return { available: true, pod: input.pod, container, ...tailBytes(typeof text === 'string' ? text : '') };
  } catch (err) {
    return absent(container, err);
  }
}

/** The read tools as plain functions (evidence collection calls them inside its own activity). */
export const kubeReads = { getResource, listPods, recentEvents, logTail };

/** Registered with the worker (activities/index.ts). */
export function createKubeReadActivities() {
  return {
    kubeGetResource: getResource,
    kubeListPods: listPods,
    kubeRecentEvents: recentEvents,
    kubeLogTail: logTail,
  };
}
