import type { Change } from '../domain/changes';
import type { IncidentEvidence, PodEvidence } from '../domain/evidence';
import {
  EVIDENCE_WINDOW_MS,
  evidenceItems,
  rankChanges,
  suspectOf,
  type FailureShape,
} from '../domain/evidence-analysis';
import type { ContainerSummary, LogTail, NodeSummary, PodSummary, WorkloadSummary } from '../domain/kube-actions';
import { NODE_NOT_READY } from '../domain/kube-signals';
import { redactText } from '../domain/redact';
import { splitResource } from '../domain/incident';
import { changesConcerning, revisionsOf } from '../store/changes';
import { clusterKnown } from './kube/client';
import type { KubeRecentEventsInput } from '../contracts/kube-actions';
import { kubeReads } from './kube-reads';

/**
 * Evidence for a workload incident, collected before the analysis concludes: the
 * changes in the window before the first failure (the change record), what Foghorn saw of each
 * revision, the failing pods' last termination, restarts and previous and current logs (tail,
 * redacted, capped), recent warning events, the owner chain, node conditions. Bounded in time
 * (EVIDENCE_BUDGET_MS): what does not answer in time is noted, never waited for. Never throws:
 * the analysis goes on with what there is, and the notes say what is missing.
 */

export const EVIDENCE_BUDGET_MS = 10_000;
const MAX_PODS = 3;
const LOG_LINES = 40;
const KEEP_LOG_LINES = 20;
const MAX_LINE = 300;

export interface EvidenceTarget {
  cluster: string;
  namespace: string;
  /** `<Kind>/<name>` */
  resource: string;
  signalType: string;
  /** The first failure the window is measured from (the incident's detection). */
  firstSignalAt: Date;
}

const WORKLOAD_KINDS = ['Deployment', 'StatefulSet', 'DaemonSet'] as const;
type WorkloadKind = (typeof WORKLOAD_KINDS)[number];
const isWorkload = (k: string): k is WorkloadKind => (WORKLOAD_KINDS as readonly string[]).includes(k);

/** Resolves to `fallback` (and notes why) when `work` does not settle within the deadline or fails. */
function bounded<T>(work: Promise<T>, deadline: number, fallback: T, what: string, notes: string[]): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((resolve) => {
    timer = setTimeout(
      () => {
        notes.push(`${what}: no answer within ${EVIDENCE_BUDGET_MS / 1000} s`);
        resolve(fallback);
      },
      Math.max(0, deadline - Date.now()),
    );
  });
  const settled = work.then(
    (v) => v,
    (err: unknown) => {
      notes.push(`${what}: ${redactText(String((err as Error)?.message ?? err)).slice(0, 200)}`);
      return fallback;
    },
  );
  return Promise.race([settled, late]).finally(() => clearTimeout(timer));
}

const logLines = (tail: LogTail): string[] =>
  tail.available
    ? redactText(tail.text)
        .split('\n')
        .filter((l) => l.trim() !== '')
        .slice(-KEEP_LOG_LINES)
        .map((l) => (l.length > MAX_LINE ? `${l.slice(0, MAX_LINE - 1)}…` : l))
    : [];

/** The container that explains the pod's trouble: one with a waiting reason or a past termination. */
const troubled = (p: PodSummary): ContainerSummary | undefined =>
  p.containers.find((c) => c.lastTermination || (c.reason && c.state === 'waiting')) ??
  p.containers.find((c) => !c.ready) ??
  p.containers[0];

async function podEvidence(
  target: EvidenceTarget,
  pod: PodSummary,
  deadline: number,
  notes: string[],
): Promise<PodEvidence> {
  const c = troubled(pod);
  const read = (previous: boolean) =>
    bounded(
      kubeReads.logTail({
        cluster: target.cluster,
        namespace: target.namespace,
        pod: pod.name,
        ...(c && { container: c.name }),
        tailLines: LOG_LINES,
        previous,
      }),
      deadline,
      { available: false, pod: pod.name, container: null, reason: 'timed out' } as LogTail,
      `${previous ? 'previous' : 'current'} logs of ${pod.name}`,
      notes,
    );
  const [previous, current] = await Promise.all([
    c?.lastTermination || (c?.restarts ?? 0) > 0 ? read(true) : Promise.resolve(undefined),
    read(false),
  ]);
  for (const [which, tail] of [
    ['previous', previous],
    ['current', current],
  ] as const)
    if (tail && !tail.available)
      notes.push(`no ${which} logs of ${pod.name}: ${redactText(tail.reason).slice(0, 160)}`);
  return {
    name: pod.name,
    node: pod.node ?? '',
    phase: pod.phase,
    restarts: pod.restarts,
    waitingReason: c?.state === 'waiting' ? (c.reason ?? '') : '',
    ...(c?.lastTermination && {
      lastTermination: { reason: c.lastTermination.reason ?? '', exitCode: c.lastTermination.exitCode ?? 0 },
    }),
    previousLogs: previous ? logLines(previous) : [],
    currentLogs: logLines(current),
  };
}

const nodeView = (n: NodeSummary) => ({
  name: n.name,
  ready: n.conditions.find((c) => c.type === 'Ready')?.status ?? 'Unknown',
  conditions: n.conditions
    .filter((c) => (c.type === 'Ready' ? c.status !== 'True' : c.status === 'True'))
    .map((c) => `${c.type}=${c.status}${c.reason ? ` (${c.reason})` : ''}`),
});

/** Collects the evidence of one incident on a registered cluster's workload or node. */
export async function collectEvidence(target: EvidenceTarget): Promise<IncidentEvidence> {
  const deadline = Date.now() + EVIDENCE_BUDGET_MS;
  const notes: string[] = [];
  const { kind, name } = splitResource(target.resource);
  const from = new Date(target.firstSignalAt.getTime() - EVIDENCE_WINDOW_MS);
  const to = new Date(target.firstSignalAt.getTime() + 60_000);
  const base = { cluster: target.cluster, namespace: target.namespace };

  let workload: WorkloadSummary | undefined;
  let pods: PodSummary[] = [];
  const nodes: NodeSummary[] = [];
  const ownerChain: string[] = [target.resource];
  if (isWorkload(kind)) {
    const [summary, list] = await Promise.all([
      bounded(kubeReads.getResource({ ...base, kind, name }), deadline, undefined, `${target.resource}`, notes),
      bounded(kubeReads.listPods({ ...base, kind, name, limit: 20 }), deadline, undefined, 'pods', notes),
    ]);
    workload = summary as WorkloadSummary | undefined;
    pods = (list?.pods ?? []).filter((p) => !p.ready || p.restarts > 0);
    if (workload?.kind === 'Deployment' && workload.revision)
      ownerChain.unshift(`ReplicaSet (revision ${workload.revision})`);
    if (pods[0]) ownerChain.unshift(`Pod/${pods[0].name}`);
  } else if (kind === 'Pod') {
    const pod = await bounded(kubeReads.getResource({ ...base, kind: 'Pod', name }), deadline, undefined, 'pod', notes);
    if (pod && pod.kind === 'Pod') pods = [pod];
  }
  pods = pods.slice(0, MAX_PODS);
  const nodeNames = kind === 'Node' ? [name] : [...new Set(pods.map((p) => p.node).filter((n): n is string => !!n))];

  const [podFacts, nodeFacts, events, changes, revisions] = await Promise.all([
    Promise.all(pods.map((p) => podEvidence(target, p, deadline, notes))),
    Promise.all(
      nodeNames
        .slice(0, 3)
        .map((n) =>
          bounded(
            kubeReads.getResource({ cluster: target.cluster, kind: 'Node', name: n }),
            deadline,
            undefined,
            `node ${n}`,
            notes,
          ),
        ),
    ),
    bounded(
      kubeReads.recentEvents({
        cluster: target.cluster,
        kind: (kind === 'Node' ? 'Node' : pods[0] ? 'Pod' : kind) as KubeRecentEventsInput['kind'],
        ...(kind !== 'Node' && { namespace: target.namespace }),
        name: kind === 'Node' ? name : (pods[0]?.name ?? name),
        limit: 10,
      }),
      deadline,
      undefined,
      'events',
      notes,
    ),
    bounded(
      changesConcerning(target.cluster, target.namespace, target.resource, nodeNames, from, to),
      deadline,
      [] as Change[],
      'the change record',
      notes,
    ),
    kind === 'Deployment'
      ? bounded(revisionsOf(target.cluster, target.namespace, target.resource), deadline, [], 'revision health', notes)
      : Promise.resolve([]),
  ]);
  for (const n of nodeFacts) if (n?.kind === 'Node') nodes.push(n);

  const failure: FailureShape = {
    signalType: target.signalType,
    reasons: [
      ...podFacts.flatMap((p) => [p.waitingReason, p.lastTermination?.reason ?? '']).filter(Boolean),
      ...(nodes.some((n) => !n.ready) ? [NODE_NOT_READY] : []),
    ],
    failingImages: pods.flatMap((p) => p.containers.map((c) => `${c.name}=${c.image}`)),
    firstSignalAt: target.firstSignalAt,
  };
  const ranked = rankChanges(changes, failure, revisions);
  const partial = {
    collectedAt: new Date(),
    firstSignalAt: target.firstSignalAt,
    windowMs: EVIDENCE_WINDOW_MS,
    ownerChain,
    changes: ranked.slice(0, 5).map((r) => r.change),
    revisions: revisions.slice(0, 5),
    pods: podFacts,
    events: (events?.events ?? []).map((e) => ({
      object: events!.object,
      reason: e.reason,
      message: redactText(e.message),
      count: e.count,
      ...(e.lastSeen && { at: new Date(e.lastSeen) }),
    })),
    nodes: nodes.map(nodeView),
    ...(workload && {
      replicas: { desired: workload.desired, available: workload.available, updated: workload.updated },
    }),
    notes: [...new Set(notes)].slice(0, 10),
  };
  const items = evidenceItems(partial, ranked);
  const suspect = suspectOf(ranked, items.find((i) => i.kind === 'change')?.id ?? '');
  return { ...partial, items, ...(suspect && { suspect }) };
}

const EVIDENCE_KINDS = new Set<string>([...WORKLOAD_KINDS, 'Pod', 'Node']);

/**
 * The evidence of an incident when its resource is a workload, pod or node of a registered
 * cluster; otherwise undefined with the reason (the analysis says there is no cluster evidence).
 */
export async function evidenceFor(
  target: EvidenceTarget,
): Promise<{ evidence: IncidentEvidence } | { evidence?: undefined; reason: string }> {
  const { kind } = splitResource(target.resource);
  if (!EVIDENCE_KINDS.has(kind)) return { reason: `${kind} is not a kind Foghorn collects cluster evidence for` };
  if (!(await clusterKnown(target.cluster)))
    return { reason: `cluster ${target.cluster} is not registered with Foghorn` };
  return { evidence: await collectEvidence(target) };
}
