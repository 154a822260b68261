import type {
  V1ContainerStateTerminated,
  V1Deployment,
  V1DeploymentCondition,
  V1Pod,
  V1ReplicaSet,
} from '@kubernetes/client-node';
import { ApplicationFailure } from '@temporalio/common';
import { redactText } from '../domain/redact';
import {
  clip,
  describeTarget,
  KUBE_ERROR_TYPES,
  parseRevision,
  POD_TEMPLATE_HASH_LABEL,
  type KubeTarget,
} from '../domain/kube-actions';
import {
  deploymentHealth,
  judgedPods,
  LOG_TAIL_LINES,
  MAX_LOG_READS,
  type CurrentTemplate,
  type DeploymentFacts,
  type LogFacts,
  type PodFacts,
  type ProgressingFacts,
  type TargetHealth,
  type TerminationFacts,
} from '../domain/kube-health';
import { verifyTargetInput, type VerifyTargetInput } from '../contracts/kube-actions';
import { kubeCall, kubeClients, parseInput, type KubeClients } from './kube-actions';
import { callOptions } from './kube/call-options';
import { kubeErrorFacts } from './kube/errors';
import { selectorText } from './kube-reads';

/**
 * Verification after a fix: reads the Deployment, its ReplicaSets (which one runs the current
 * template), its pods and, for a failure signature with a log line, the current log tails of
 * the judged pods, and gives the verdict of domain/kube-health.ts. A Deployment that is gone is
 * a verdict (unhealthy), not a failure; a log that cannot be read is a note in the verdict;
 * every other failed read fails like the read tools do (classified, retryable or not).
 */

/** One log read's bound: the reads run together, so a poll waits at most this long for logs. */
const LOG_TIMEOUT_MS = 5_000;
/** What one log read may bring: LOG_TAIL_LINES lines of ordinary length fit well within it. */
const LOG_LIMIT_BYTES = 256 * 1024;
/** Why a log could not be read, as the API server said it, is cut here. */
const LOG_REASON_CHARS = 120;

function terminationFacts(t: V1ContainerStateTerminated | undefined): TerminationFacts | undefined {
  if (!t) return undefined;
  const finishedAt = t.finishedAt ? new Date(t.finishedAt).toISOString() : undefined;
  return {
    ...(t.reason && { reason: t.reason }),
    ...(t.exitCode !== undefined && { exitCode: t.exitCode }),
    ...(finishedAt && { finishedAt }),
  };
}

function podFacts(pod: V1Pod): PodFacts {
  const hash = pod.metadata?.labels?.[POD_TEMPLATE_HASH_LABEL];
  return {
    name: pod.metadata?.name ?? '',
    terminating: Boolean(pod.metadata?.deletionTimestamp),
    ...(hash && { templateHash: hash }),
    containers: (pod.status?.containerStatuses ?? []).map((s) => ({
      name: s.name,
      ...(s.state?.waiting?.reason && { waiting: s.state.waiting.reason }),
      ...(s.state?.terminated && { terminated: terminationFacts(s.state.terminated) }),
      ...(s.lastState?.terminated && { lastTerminated: terminationFacts(s.lastState.terminated) }),
    })),
  };
}

/** The ReplicaSet owned by the Deployment whose revision is the Deployment's (`kubectl rollout status` waits for its pods). */
function currentTemplate(d: V1Deployment, sets: V1ReplicaSet[]): CurrentTemplate | undefined {
  const revision = parseRevision(d.metadata?.annotations);
  if (revision === 0) return undefined;
  const rs = sets.find(
    (r) =>
      r.metadata?.ownerReferences?.some((ref) => ref.uid === d.metadata?.uid) &&
      parseRevision(r.metadata?.annotations) === revision,
  );
  const hash =
    rs?.metadata?.labels?.[POD_TEMPLATE_HASH_LABEL] ?? rs?.spec?.template?.metadata?.labels?.[POD_TEMPLATE_HASH_LABEL];
  return rs && hash ? { replicaSet: rs.metadata?.name ?? '', hash } : undefined;
}

function progressingFacts(conditions: V1DeploymentCondition[] | undefined): ProgressingFacts | undefined {
  const c = conditions?.find((x) => x.type === 'Progressing');
  return c && { status: c.status, ...(c.reason && { reason: c.reason }), ...(c.message && { message: c.message }) };
}

/**
 * The current log tails of the judged pods' containers (at most MAX_LOG_READS, read together,
 * each bounded), set on their facts. A read that fails (400 for a container not started, 404,
 * a refusal, a timeout) is recorded as not readable with its reason: no evidence either way.
 */
async function readLogs(core: KubeClients['core'], namespace: string, pods: PodFacts[]): Promise<void> {
  const containers = pods.flatMap((p) => p.containers.map((c) => ({ pod: p.name, c }))).slice(0, MAX_LOG_READS);
  await Promise.all(
    containers.map(async ({ pod, c }) => {
      let log: LogFacts;
      try {
        const text: unknown = await core.readNamespacedPodLog(
          {
            name: pod,
            namespace,
            container: c.name,
            tailLines: LOG_TAIL_LINES,
            limitBytes: LOG_LIMIT_BYTES,
          },
          callOptions(LOG_TIMEOUT_MS),
        );
        log = { readable: true, text: typeof text === 'string' ? text : '' };
      } catch (err) {
        const { status, reason, detail } = kubeErrorFacts(err);
        const why = detail ? `: ${clip(redactText(detail), LOG_REASON_CHARS)}` : '';
        log = { readable: false, reason: status ? `HTTP ${status}${why}` : (reason ?? 'error') };
      }
      c.log = log;
    }),
  );
}

async function verifyTarget(raw: VerifyTargetInput): Promise<TargetHealth> {
  const input = parseInput(verifyTargetInput, raw);
  const since = new Date(input.since);
  const { apps, core } = await kubeClients(input.cluster);
  const target: KubeTarget = {
    kind: 'Deployment',
    namespace: input.namespace,
    name: input.deployment,
    cluster: input.cluster,
  };
  const name = describeTarget(target);
  let d: V1Deployment;
  try {
    d = await kubeCall(target, (o) =>
      apps.readNamespacedDeployment({ name: input.deployment, namespace: input.namespace }, o),
    );
  } catch (err) {
    if (err instanceof ApplicationFailure && err.type === KUBE_ERROR_TYPES.notFound)
      return deploymentHealth({ found: false, target: name }, since, input.signature);
    throw err;
  }
  const labelSelector = selectorText(d.spec?.selector);
  const selected = { namespace: input.namespace, ...(labelSelector && { labelSelector }) };
  // The ReplicaSets before the pods: a ReplicaSet created in between only adds pods not judged.
  const sets = await kubeCall({ ...target, kind: 'ReplicaSet', name: undefined }, (o) =>
    apps.listNamespacedReplicaSet(selected, o),
  );
  const pods = await kubeCall({ ...target, kind: 'Pod', name: undefined }, (o) => core.listNamespacedPod(selected, o));
  const template = currentTemplate(d, sets.items);
  const progressing = progressingFacts(d.status?.conditions);
  const facts: DeploymentFacts = {
    found: true,
    target: name,
    generation: d.metadata?.generation ?? 0,
    observedGeneration: d.status?.observedGeneration ?? 0,
    revision: parseRevision(d.metadata?.annotations),
    desired: d.spec?.replicas ?? 1, // the API server defaults it to 1
    updated: d.status?.updatedReplicas ?? 0,
    available: d.status?.availableReplicas ?? 0,
    current: d.status?.replicas ?? 0,
    ...(template && { currentTemplate: template }),
    ...(progressing && { progressing }),
    pods: pods.items.map(podFacts),
  };
  if (input.signature?.logLine) await readLogs(core, input.namespace, judgedPods(facts));
  return deploymentHealth(facts, since, input.signature);
}

/** Registered with the worker (activities/index.ts). */
export function createKubeVerifyActivities() {
  return { kubeVerifyTarget: verifyTarget };
}
