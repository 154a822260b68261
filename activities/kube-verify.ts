import type { V1ContainerStateTerminated, V1Deployment, V1Pod } from '@kubernetes/client-node';
import { ApplicationFailure } from '@temporalio/common';
import { describeTarget, KUBE_ERROR_TYPES, type KubeTarget } from '../domain/kube-actions';
import {
  deploymentHealth,
  type DeploymentFacts,
  type PodFacts,
  type TargetHealth,
  type TerminationFacts,
} from '../domain/kube-health';
import { verifyTargetInput, type VerifyTargetInput } from '../contracts/kube-actions';
import { kubeCall, kubeClients, parseInput } from './kube-actions';
import { selectorText } from './kube-reads';

/**
 * Verification after a fix: reads the Deployment and its pods and gives the verdict of
 * domain/kube-health.ts. A Deployment that is gone is a verdict (unhealthy), not a failure;
 * every other failed read fails like the read tools do (classified, retryable or not).
 */

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
  return {
    name: pod.metadata?.name ?? '',
    terminating: Boolean(pod.metadata?.deletionTimestamp),
    containers: (pod.status?.containerStatuses ?? []).map((s) => ({
      name: s.name,
      ...(s.state?.waiting?.reason && { waiting: s.state.waiting.reason }),
      ...(s.state?.terminated && { terminated: terminationFacts(s.state.terminated) }),
      ...(s.lastState?.terminated && { lastTerminated: terminationFacts(s.lastState.terminated) }),
    })),
  };
}

async function verifyTarget(raw: VerifyTargetInput): Promise<TargetHealth> {
  const input = parseInput(verifyTargetInput, raw);
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
      return deploymentHealth({ found: false, target: name }, new Date(input.since));
    throw err;
  }
  const labelSelector = selectorText(d.spec?.selector);
  const pods = await kubeCall({ ...target, kind: 'Pod', name: undefined }, (o) =>
    core.listNamespacedPod({ namespace: input.namespace, ...(labelSelector && { labelSelector }) }, o),
  );
  const facts: DeploymentFacts = {
    found: true,
    target: name,
    generation: d.metadata?.generation ?? 0,
    observedGeneration: d.status?.observedGeneration ?? 0,
    desired: d.spec?.replicas ?? 1, // the API server defaults it to 1
    updated: d.status?.updatedReplicas ?? 0,
    available: d.status?.availableReplicas ?? 0,
    current: d.status?.replicas ?? 0,
    pods: pods.items.map(podFacts),
  };
  return deploymentHealth(facts, new Date(input.since));
}

/** Registered with the worker (activities/index.ts). */
export function createKubeVerifyActivities() {
  return { kubeVerifyTarget: verifyTarget };
}
