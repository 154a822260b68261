import {
  ApiException,
  AppsV1Api,
  CoreV1Api,
  PatchStrategy,
  type ConfigurationOptions,
  type V1Deployment,
  type V1PodTemplateSpec,
} from '@kubernetes/client-node';
import { ApplicationFailure } from '@temporalio/common';
import type { z } from 'zod';
import {
  actionParams,
  adjustResourcesInput,
  classifyKubeError,
  deletePodInput,
  describeTarget,
  KUBE_ERROR_TYPES,
  KUBE_INVALID_INPUT,
  mergeResources,
  parseRevision,
  pickRollbackRevision,
  POD_TEMPLATE_HASH_LABEL,
  RESTARTED_AT_ANNOTATION,
  restartDeploymentInput,
  rollbackDeploymentInput,
  scaleDeploymentInput,
  type AdjustResourcesInput,
  type AdjustResourcesResult,
  type ContainerResources,
  type CpuMemory,
  type DeletePodInput,
  type DeletePodResult,
  type KubeActionResult,
  type KubeActionType,
  type KubeErrorType,
  type KubeTarget,
  type RestartDeploymentInput,
  type RestartDeploymentResult,
  type RollbackDeploymentInput,
  type RollbackDeploymentResult,
  type ScaleDeploymentInput,
  type ScaleDeploymentResult,
} from '../domain/kube-actions';
import { completeKubeAction, findKubeAction, recordKubeActionIntent } from '../store/kube-actions';
import { callOptions } from './kube/call-options';
import { kubeConfigFor } from './kube/client';
import { kubeErrorFacts } from './kube/errors';

/**
 * The Kubernetes actions of remediation steps (DESIGN §8), one activity each. A step's key is
 * applied once: its intent (the values to write, chosen once, and the values found) is recorded
 * in MongoDB before the cluster is touched, every attempt writes exactly the recorded values
 * (so re-applying changes nothing), and a finished key answers its recorded result without
 * calling the cluster. A worker killed at any point therefore neither applies a step twice
 * nor skips it.
 */

// ---------------------------------------------------------------------------------------------
// Calling the API server: bounded, errors classified (shared with kube-reads.ts)
// ---------------------------------------------------------------------------------------------

export interface KubeClients {
  apps: AppsV1Api;
  core: CoreV1Api;
}

export async function kubeClients(cluster: string): Promise<KubeClients> {
  const kc = await kubeConfigFor(cluster);
  return { apps: kc.makeApiClient(AppsV1Api), core: kc.makeApiClient(CoreV1Api) };
}

/** The failure an activity throws for a failed API call: non-retryable or retryable, by type. */
export function kubeFailure(err: unknown, target: KubeTarget): ApplicationFailure {
  if (err instanceof ApplicationFailure) return err; // already ours (ClusterNotFound, a refusal)
  const c = classifyKubeError(kubeErrorFacts(err), target);
  return c.retryable
    ? ApplicationFailure.retryable(c.message, c.type)
    : ApplicationFailure.nonRetryable(c.message, c.type);
}

/** One API call about `target`: bounded in time, its failure classified. */
export async function kubeCall<T>(
  target: KubeTarget,
  call: (options: ConfigurationOptions) => Promise<T>,
  opts: { timeoutMs?: number; patch?: PatchStrategy } = {},
): Promise<T> {
  try {
    return await call(callOptions(opts.timeoutMs, opts.patch));
  } catch (err) {
    throw kubeFailure(err, target);
  }
}

export function parseInput<S extends z.ZodTypeAny>(schema: S, raw: unknown): z.output<S> {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || 'input'}: ${i.message}`).join('; ');
    throw ApplicationFailure.nonRetryable(`invalid input: ${problems}`, KUBE_INVALID_INPUT);
  }
  return parsed.data as z.output<S>;
}

const refuse = (type: KubeErrorType, message: string) => ApplicationFailure.nonRetryable(message, type);

// ---------------------------------------------------------------------------------------------
// Applying a key once
// ---------------------------------------------------------------------------------------------

interface Step<I, R extends KubeActionResult<KubeActionType, unknown, unknown>> {
  input: { key: string; cluster: string } & Record<string, unknown>;
  action: R['action'];
  target: KubeTarget;
  /** Reads the cluster and decides what to write; runs only while no intent is recorded. */
  plan: () => Promise<I>;
  before: (intent: I) => R['before'];
  /** Writes the intent's values (again, on a retry) and says what is there now. */
  apply: (intent: I) => Promise<R['after']>;
}

async function applyOnce<I, R extends KubeActionResult<KubeActionType, unknown, unknown>>(
  step: Step<I, R>,
): Promise<R> {
  const { key, cluster } = step.input;
  const params = actionParams(step.input);
  const target = describeTarget(step.target);
  let record = await findKubeAction<I, R>(key);
  if (!record) {
    const intent = await step.plan();
    record = await recordKubeActionIntent<I, R>({ key, action: step.action, cluster, target, params, intent });
  }
  if (record.action !== step.action || record.params !== params)
    throw refuse(
      KUBE_ERROR_TYPES.keyReused,
      `action key ${key} was already used for ${record.action} of ${record.target} in cluster ${record.cluster} with other parameters`,
    );
  if (record.state === 'done' && record.result) return { ...record.result, repeated: true };
  const result = {
    key,
    action: step.action,
    cluster,
    target,
    before: step.before(record.intent),
    after: await step.apply(record.intent),
    repeated: false,
  } as R;
  await completeKubeAction(key, result);
  return result;
}

// ---------------------------------------------------------------------------------------------
// The actions
// ---------------------------------------------------------------------------------------------

const deploymentTarget = (i: { cluster: string; namespace: string; deployment: string }): KubeTarget => ({
  kind: 'Deployment',
  namespace: i.namespace,
  name: i.deployment,
  cluster: i.cluster,
});

const imagesOf = (template: V1PodTemplateSpec | undefined) =>
  (template?.spec?.containers ?? []).map((c) => c.image ?? '');

function pickCpuMemory(values: Record<string, unknown> | undefined): CpuMemory {
  const out: CpuMemory = {};
  if (typeof values?.cpu === 'string') out.cpu = values.cpu;
  if (typeof values?.memory === 'string') out.memory = values.memory;
  return out;
}

async function readDeployment(apps: AppsV1Api, target: KubeTarget): Promise<V1Deployment> {
  return kubeCall(target, (o) =>
    apps.readNamespacedDeployment({ name: target.name!, namespace: target.namespace! }, o),
  );
}

function refusePaused(d: V1Deployment, target: KubeTarget, what: string): void {
  if (d.spec?.paused)
    throw refuse(
      KUBE_ERROR_TYPES.notApplicable,
      `cannot ${what} ${describeTarget(target)} in cluster ${target.cluster}: it is paused (resume it first)`,
    );
}

/** `kubectl rollout restart`: a new restartedAt on the pod template, chosen once per key. */
async function restartDeployment(raw: RestartDeploymentInput): Promise<RestartDeploymentResult> {
  const input = parseInput(restartDeploymentInput, raw);
  const target = deploymentTarget(input);
  const { apps } = await kubeClients(input.cluster);
  return applyOnce<{ restartedAt: string; previous: string | null }, RestartDeploymentResult>({
    input,
    action: 'RestartDeployment',
    target,
    plan: async () => {
      const d = await readDeployment(apps, target);
      refusePaused(d, target, 'restart');
      // Milliseconds: two restarts within a second must still differ (an equal value rolls nothing).
      const restartedAt = new Date().toISOString();
      return { restartedAt, previous: d.spec?.template?.metadata?.annotations?.[RESTARTED_AT_ANNOTATION] ?? null };
    },
    before: (intent) => ({ restartedAt: intent.previous }),
    apply: async ({ restartedAt }) => {
      await kubeCall(
        target,
        (o) =>
          apps.patchNamespacedDeployment(
            {
              name: input.deployment,
              namespace: input.namespace,
              body: { spec: { template: { metadata: { annotations: { [RESTARTED_AT_ANNOTATION]: restartedAt } } } } },
            },
            o,
          ),
        { patch: PatchStrategy.StrategicMergePatch },
      );
      return { restartedAt };
    },
  });
}

/** Through the scale subresource (what `kubectl scale` and autoscalers use). */
async function scaleDeployment(raw: ScaleDeploymentInput): Promise<ScaleDeploymentResult> {
  const input = parseInput(scaleDeploymentInput, raw);
  const target = deploymentTarget(input);
  const { apps } = await kubeClients(input.cluster);
  return applyOnce<{ before: number; replicas: number }, ScaleDeploymentResult>({
    input,
    action: 'ScaleDeployment',
    target,
    plan: async () => {
      const scale = await kubeCall(target, (o) =>
        apps.readNamespacedDeploymentScale({ name: input.deployment, namespace: input.namespace }, o),
      );
      return { before: scale.spec?.replicas ?? 0, replicas: input.replicas };
    },
    before: (intent) => ({ replicas: intent.before }),
    apply: async ({ replicas }) => {
      const scale = await kubeCall(
        target,
        (o) =>
          apps.patchNamespacedDeploymentScale(
            { name: input.deployment, namespace: input.namespace, body: { spec: { replicas } } },
            o,
          ),
        { patch: PatchStrategy.MergePatch },
      );
      return { replicas: scale.spec?.replicas ?? replicas };
    },
  });
}

/** One container's cpu/memory requests and limits; the values not given stay as they are. */
async function adjustResources(raw: AdjustResourcesInput): Promise<AdjustResourcesResult> {
  const input = parseInput(adjustResourcesInput, raw);
  const target = deploymentTarget(input);
  const { apps } = await kubeClients(input.cluster);
  return applyOnce<{ before: ContainerResources; after: ContainerResources }, AdjustResourcesResult>({
    input,
    action: 'AdjustResources',
    target,
    plan: async () => {
      const d = await readDeployment(apps, target);
      const containers = d.spec?.template?.spec?.containers ?? [];
      const container = containers.find((c) => c.name === input.container);
      if (!container)
        throw refuse(
          KUBE_ERROR_TYPES.notApplicable,
          `container ${input.container} not found in ${describeTarget(target)} in cluster ${input.cluster} (containers: ${containers.map((c) => c.name).join(', ') || 'none'})`,
        );
      const before = {
        requests: pickCpuMemory(container.resources?.requests),
        limits: pickCpuMemory(container.resources?.limits),
      };
      return { before, after: mergeResources(before, input) };
    },
    before: (intent) => ({ container: input.container, ...intent.before }),
    apply: async ({ after }) => {
      // Strategic merge: containers merge by name and resources by key, so only cpu/memory change.
      const resources = {
        ...(Object.keys(after.requests).length > 0 && { requests: after.requests }),
        ...(Object.keys(after.limits).length > 0 && { limits: after.limits }),
      };
      await kubeCall(
        target,
        (o) =>
          apps.patchNamespacedDeployment(
            {
              name: input.deployment,
              namespace: input.namespace,
              body: { spec: { template: { spec: { containers: [{ name: input.container, resources }] } } } },
            },
            o,
          ),
        { patch: PatchStrategy.StrategicMergePatch },
      );
      return { container: input.container, ...after };
    },
  });
}

/**
 * `kubectl rollout undo`: the pod template of the ReplicaSet (owned by the Deployment) with the
 * previous revision, or `toRevision`, replaces the Deployment's, without the controller's
 * pod-template-hash label. The controller then gives that ReplicaSet the next revision.
 */
async function rollbackDeployment(raw: RollbackDeploymentInput): Promise<RollbackDeploymentResult> {
  const input = parseInput(rollbackDeploymentInput, raw);
  const target = deploymentTarget(input);
  const { apps } = await kubeClients(input.cluster);
  type Intent = { before: { revision: number; images: string[] }; revision: number; template: V1PodTemplateSpec };
  return applyOnce<Intent, RollbackDeploymentResult>({
    input,
    action: 'RollbackDeployment',
    target,
    plan: async () => {
      const d = await readDeployment(apps, target);
      refusePaused(d, target, 'roll back');
      const current = parseRevision(d.metadata?.annotations);
      if (current === 0)
        throw ApplicationFailure.retryable(
          `${describeTarget(target)} in cluster ${input.cluster} has no revision yet (its controller has not seen it)`,
          KUBE_ERROR_TYPES.conflict,
        );
      const selector = Object.entries(d.spec?.selector?.matchLabels ?? {})
        .map(([k, v]) => `${k}=${v}`)
        .join(',');
      const sets = await kubeCall({ ...target, kind: 'ReplicaSet', name: undefined }, (o) =>
        apps.listNamespacedReplicaSet({ namespace: input.namespace, ...(selector && { labelSelector: selector }) }, o),
      );
      const owned = sets.items
        .filter((rs) => rs.metadata?.ownerReferences?.some((ref) => ref.uid === d.metadata?.uid))
        .map((rs) => ({ name: rs.metadata?.name ?? '', revision: parseRevision(rs.metadata?.annotations), rs }));
      const picked = pickRollbackRevision(current, owned, input.toRevision);
      if (!picked)
        throw refuse(
          KUBE_ERROR_TYPES.notApplicable,
          input.toRevision !== undefined
            ? `revision ${input.toRevision} of ${describeTarget(target)} not found in cluster ${input.cluster}`
            : `${describeTarget(target)} in cluster ${input.cluster} has no previous revision to roll back to`,
        );
      const template = structuredClone(picked.rs.spec?.template ?? {});
      if (template.metadata?.labels) delete template.metadata.labels[POD_TEMPLATE_HASH_LABEL];
      return { before: { revision: current, images: imagesOf(d.spec?.template) }, revision: picked.revision, template };
    },
    before: (intent) => intent.before,
    apply: async ({ revision, template }) => {
      await kubeCall(
        target,
        (o) =>
          apps.patchNamespacedDeployment(
            {
              name: input.deployment,
              namespace: input.namespace,
              body: [{ op: 'replace', path: '/spec/template', value: template }],
            },
            o,
          ),
        { patch: PatchStrategy.JsonPatch },
      );
      return { revision, images: imagesOf(template) };
    },
  });
}

/** Deletes the pod found first (by uid): gone on a repeat (404) or replaced by a namesake (409) is done. */
async function deletePod(raw: DeletePodInput): Promise<DeletePodResult> {
  const input = parseInput(deletePodInput, raw);
  const target: KubeTarget = { kind: 'Pod', namespace: input.namespace, name: input.pod, cluster: input.cluster };
  const { core } = await kubeClients(input.cluster);
  type Intent = { uid: string; phase: string; node: string | null };
  return applyOnce<Intent, DeletePodResult>({
    input,
    action: 'DeletePod',
    target,
    plan: async () => {
      const pod = await kubeCall(target, (o) =>
        core.readNamespacedPod({ name: input.pod, namespace: input.namespace }, o),
      );
      return { uid: pod.metadata?.uid ?? '', phase: pod.status?.phase ?? 'Unknown', node: pod.spec?.nodeName ?? null };
    },
    before: (intent) => intent,
    apply: async ({ uid }) => {
      try {
        await core.deleteNamespacedPod(
          { name: input.pod, namespace: input.namespace, body: { preconditions: { uid } } },
          callOptions(),
        );
      } catch (err) {
        const code = err instanceof ApiException ? err.code : undefined;
        if (code !== 404 && code !== 409) throw kubeFailure(err, target);
      }
      return { deleted: true as const };
    },
  });
}

/** Registered with the worker (activities/index.ts); inputs are validated here, not trusted. */
export function createKubeActionActivities() {
  return {
    kubeRestartDeployment: restartDeployment,
    kubeScaleDeployment: scaleDeployment,
    kubeAdjustResources: adjustResources,
    kubeRollbackDeployment: rollbackDeployment,
    kubeDeletePod: deletePod,
  };
}
