import {
  FOGHORN_FIELD_MANAGER,
  imagesOf as changeImagesOf,
  templateVersion,
  type PodTemplate,
} from '../domain/change-record';
import { chooseRollbackTarget } from '../domain/rollback-target';
import { revisionsOf } from '../store/changes';
import {
  ApiException,
  AppsV1Api,
  CoreV1Api,
  PatchStrategy,
  type ConfigurationOptions,
  type V1Deployment,
  type V1Pod,
  type V1PodTemplateSpec,
  type V1Scale,
} from '@kubernetes/client-node';
import { ApplicationFailure } from '@temporalio/common';
import type { z } from 'zod';
import {
  actionParams,
  classifyKubeError,
  describeTarget,
  KUBE_ERROR_TYPES,
  KUBE_INVALID_INPUT,
  mergeResources,
  parseRevision,
  POD_TEMPLATE_HASH_LABEL,
  RESTARTED_AT_ANNOTATION,
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
import {
  adjustResourcesInput,
  deletePodInput,
  restartDeploymentInput,
  rollbackDeploymentInput,
  scaleDeploymentInput,
} from '../contracts/kube-actions';
import { cpuMillis, memoryBytes } from '../domain/quantity';
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
  /**
   * For a key an earlier attempt left pending (its worker died mid-step, perhaps after writing):
   * reads the object and, when it already shows the intent, says what is there, so the write is
   * not sent a second time. Undefined: write.
   */
  applied?: (intent: I) => Promise<R['after'] | undefined>;
}

async function applyOnce<I, R extends KubeActionResult<KubeActionType, unknown, unknown>>(
  step: Step<I, R>,
): Promise<R> {
  const { key, cluster } = step.input;
  const params = actionParams(step.input);
  const target = describeTarget(step.target);
  let record = await findKubeAction<I, R>(key);
  const resumed = record?.state === 'pending';
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
  const shown = resumed ? await step.applied?.(record.intent) : undefined;
  const result = {
    key,
    action: step.action,
    cluster,
    target,
    before: step.before(record.intent),
    after: shown ?? (await step.apply(record.intent)),
    repeated: false,
  } as R;
  await completeKubeAction(key, result);
  return result;
}

// ---------------------------------------------------------------------------------------------
// What each action reads, decides and writes. The approval preview (activities/kube-preview.ts)
// uses the same functions and sends the same write as a dry run.
// ---------------------------------------------------------------------------------------------

/** A namespaced object an action is about. */
export type ObjectTarget = KubeTarget & { namespace: string; name: string };

export const deploymentTarget = (i: { cluster: string; namespace: string; deployment: string }): ObjectTarget => ({
  kind: 'Deployment',
  namespace: i.namespace,
  name: i.deployment,
  cluster: i.cluster,
});

export const podTarget = (i: { cluster: string; namespace: string; pod: string }): ObjectTarget => ({
  kind: 'Pod',
  namespace: i.namespace,
  name: i.pod,
  cluster: i.cluster,
});

/** `dryRun`: the API server validates and admits the write and answers what it would store, storing nothing. */
export interface WriteOptions {
  dryRun?: boolean;
}
const dryRunParam = (opts: WriteOptions) => (opts.dryRun ? { dryRun: 'All' } : {});
/** Patches name Foghorn as their field manager: the change record marks them as Foghorn's. */
const patchParams = (opts: WriteOptions) => ({ fieldManager: FOGHORN_FIELD_MANAGER, ...dryRunParam(opts) });
const objectRef = (t: ObjectTarget) => ({ name: t.name, namespace: t.namespace });

const imagesOf = (template: V1PodTemplateSpec | undefined) =>
  (template?.spec?.containers ?? []).map((c) => c.image ?? '');

function pickCpuMemory(values: Record<string, unknown> | undefined): CpuMemory {
  const out: CpuMemory = {};
  if (typeof values?.cpu === 'string') out.cpu = values.cpu;
  if (typeof values?.memory === 'string') out.memory = values.memory;
  return out;
}

export function readDeployment(apps: AppsV1Api, target: ObjectTarget): Promise<V1Deployment> {
  return kubeCall(target, (o) => apps.readNamespacedDeployment(objectRef(target), o));
}

export function readDeploymentScale(apps: AppsV1Api, target: ObjectTarget): Promise<V1Scale> {
  return kubeCall(target, (o) => apps.readNamespacedDeploymentScale(objectRef(target), o));
}

export function readPod(core: CoreV1Api, target: ObjectTarget): Promise<V1Pod> {
  return kubeCall(target, (o) => core.readNamespacedPod(objectRef(target), o));
}

/** The object read, or undefined when it is not there (404). */
async function unlessGone<T>(read: Promise<T>): Promise<T | undefined> {
  try {
    return await read;
  } catch (err) {
    if (err instanceof ApplicationFailure && err.type === KUBE_ERROR_TYPES.notFound) return undefined;
    throw err;
  }
}

function refusePaused(d: V1Deployment, target: KubeTarget, what: string): void {
  if (d.spec?.paused)
    throw refuse(
      KUBE_ERROR_TYPES.notApplicable,
      `cannot ${what} ${describeTarget(target)} in cluster ${target.cluster}: it is paused (resume it first)`,
    );
}

// RestartDeployment ----------------------------------------------------------------------------

export interface RestartIntent {
  restartedAt: string;
  previous: string | null;
}

const restartedAtOf = (d: V1Deployment) => d.spec?.template?.metadata?.annotations?.[RESTARTED_AT_ANNOTATION];

export function restartIntent(d: V1Deployment, target: ObjectTarget): RestartIntent {
  refusePaused(d, target, 'restart');
  // Milliseconds: two restarts within a second must still differ (an equal value rolls nothing).
  return { restartedAt: new Date().toISOString(), previous: restartedAtOf(d) ?? null };
}

/** `kubectl rollout restart`'s write: the restartedAt annotation on the pod template. */
export function writeRestart(
  apps: AppsV1Api,
  target: ObjectTarget,
  restartedAt: string,
  opts: WriteOptions = {},
): Promise<V1Deployment> {
  const body = { spec: { template: { metadata: { annotations: { [RESTARTED_AT_ANNOTATION]: restartedAt } } } } };
  return kubeCall(
    target,
    (o) => apps.patchNamespacedDeployment({ ...objectRef(target), body, ...patchParams(opts) }, o),
    { patch: PatchStrategy.StrategicMergePatch },
  );
}

// ScaleDeployment ------------------------------------------------------------------------------

export interface ScaleIntent {
  before: number;
  replicas: number;
}

/** Through the scale subresource (what `kubectl scale` and autoscalers use). */
export function writeScale(
  apps: AppsV1Api,
  target: ObjectTarget,
  replicas: number,
  opts: WriteOptions = {},
): Promise<V1Scale> {
  return kubeCall(
    target,
    (o) =>
      apps.patchNamespacedDeploymentScale(
        { ...objectRef(target), body: { spec: { replicas } }, ...patchParams(opts) },
        o,
      ),
    { patch: PatchStrategy.MergePatch },
  );
}

// AdjustResources ------------------------------------------------------------------------------

export interface ResourcesIntent {
  before: ContainerResources;
  after: ContainerResources;
}

function containerResources(d: V1Deployment, container: string): ContainerResources | undefined {
  const c = (d.spec?.template?.spec?.containers ?? []).find((x) => x.name === container);
  return c && { requests: pickCpuMemory(c.resources?.requests), limits: pickCpuMemory(c.resources?.limits) };
}

export function resourcesIntent(
  d: V1Deployment,
  target: ObjectTarget,
  input: Pick<AdjustResourcesInput, 'container' | 'requests' | 'limits'>,
): ResourcesIntent {
  const before = containerResources(d, input.container);
  if (!before) {
    const names = (d.spec?.template?.spec?.containers ?? []).map((c) => c.name);
    throw refuse(
      KUBE_ERROR_TYPES.notApplicable,
      `container ${input.container} not found in ${describeTarget(target)} in cluster ${target.cluster} (containers: ${names.join(', ') || 'none'})`,
    );
  }
  return { before, after: mergeResources(before, input) };
}

/** Equal cpu and memory, by value: the server may write `0.5` back as `500m`. */
function sameResources(a: ContainerResources, b: ContainerResources): boolean {
  const same = (x: string | undefined, y: string | undefined, units: (q: string) => number) =>
    x === y || (x !== undefined && y !== undefined && units(x) === units(y));
  return (['requests', 'limits'] as const).every(
    (k) => same(a[k].cpu, b[k].cpu, cpuMillis) && same(a[k].memory, b[k].memory, memoryBytes),
  );
}

/** One container's cpu/memory; strategic merge: containers merge by name and resources by key. */
export function writeResources(
  apps: AppsV1Api,
  target: ObjectTarget,
  container: string,
  after: ContainerResources,
  opts: WriteOptions = {},
): Promise<V1Deployment> {
  const resources = {
    ...(Object.keys(after.requests).length > 0 && { requests: after.requests }),
    ...(Object.keys(after.limits).length > 0 && { limits: after.limits }),
  };
  const body = { spec: { template: { spec: { containers: [{ name: container, resources }] } } } };
  return kubeCall(
    target,
    (o) => apps.patchNamespacedDeployment({ ...objectRef(target), body, ...patchParams(opts) }, o),
    { patch: PatchStrategy.StrategicMergePatch },
  );
}

// RollbackDeployment ---------------------------------------------------------------------------

export interface RollbackIntent {
  before: { revision: number; images: string[] };
  revision: number;
  template: V1PodTemplateSpec;
  /** Why this revision (domain/rollback-target.ts): shown in the preview, the approval and the step's result. */
  reason?: string;
}

/** The client's template as the change record's pure helpers read it. */
const asPodTemplate = (t: V1PodTemplateSpec | undefined) => (t ?? {}) as PodTemplate;

/**
 * The rollback target's template (domain/rollback-target.ts): the newest revision Foghorn saw
 * healthy among the ReplicaSets the Deployment owns, or `toRevision` when it is not known to
 * fail, without the controller's pod-template-hash label. No such revision: not applicable,
 * with the reason (the plan fails and the incident escalates).
 */
export async function rollbackIntent(
  apps: AppsV1Api,
  d: V1Deployment,
  target: ObjectTarget,
  toRevision: number | undefined,
): Promise<RollbackIntent> {
  refusePaused(d, target, 'roll back');
  const where = `${describeTarget(target)} in cluster ${target.cluster}`;
  const current = parseRevision(d.metadata?.annotations);
  if (current === 0)
    throw ApplicationFailure.retryable(
      `${where} has no revision yet (its controller has not seen it)`,
      KUBE_ERROR_TYPES.conflict,
    );
  const selector = Object.entries(d.spec?.selector?.matchLabels ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  const sets = await kubeCall({ ...target, kind: 'ReplicaSet', name: undefined }, (o) =>
    apps.listNamespacedReplicaSet({ namespace: target.namespace, ...(selector && { labelSelector: selector }) }, o),
  );
  const owned = sets.items.filter((rs) => rs.metadata?.ownerReferences?.some((ref) => ref.uid === d.metadata?.uid));
  const candidates = owned.map((rs) => ({
    replicaSet: rs.metadata?.name ?? '',
    revision: parseRevision(rs.metadata?.annotations),
    templateHash: rs.metadata?.labels?.[POD_TEMPLATE_HASH_LABEL] ?? '',
    version: templateVersion(asPodTemplate(rs.spec?.template)),
    images: changeImagesOf(asPodTemplate(rs.spec?.template)),
  }));
  const choice = chooseRollbackTarget({
    deployment: `${target.namespace}/${target.name}`,
    currentVersion: templateVersion(asPodTemplate(d.spec?.template)),
    candidates,
    health: await revisionsOf(target.cluster, target.namespace, `Deployment/${target.name}`),
    ...(toRevision !== undefined && { toRevision }),
  });
  if (!choice.ok) throw refuse(KUBE_ERROR_TYPES.notApplicable, `cannot roll back ${where}: ${choice.reason}`);
  const picked = owned.find((rs) => rs.metadata?.name === choice.target.replicaSet)!;
  const template = structuredClone(picked.spec?.template ?? {});
  if (template.metadata?.labels) delete template.metadata.labels[POD_TEMPLATE_HASH_LABEL];
  return {
    before: { revision: current, images: imagesOf(d.spec?.template) },
    revision: choice.target.revision,
    template,
    reason: choice.reason,
  };
}

/** The picked template replaces the Deployment's; the controller then gives its ReplicaSet the next revision. */
export function writeRollback(
  apps: AppsV1Api,
  target: ObjectTarget,
  template: V1PodTemplateSpec,
  opts: WriteOptions = {},
): Promise<V1Deployment> {
  const body = [{ op: 'replace', path: '/spec/template', value: template }];
  return kubeCall(
    target,
    (o) => apps.patchNamespacedDeployment({ ...objectRef(target), body, ...patchParams(opts) }, o),
    { patch: PatchStrategy.JsonPatch },
  );
}

// DeletePod ------------------------------------------------------------------------------------

export interface DeletePodIntent {
  uid: string;
  phase: string;
  node: string | null;
}

export const deletePodIntent = (pod: V1Pod): DeletePodIntent => ({
  uid: pod.metadata?.uid ?? '',
  phase: pod.status?.phase ?? 'Unknown',
  node: pod.spec?.nodeName ?? null,
});

/** Deletes the pod with this uid: `gone` when it is deleted already (404) or replaced by a namesake (409). */
export async function writeDeletePod(
  core: CoreV1Api,
  target: ObjectTarget,
  uid: string,
  opts: WriteOptions = {},
): Promise<'deleted' | 'gone'> {
  // With a body the API server reads the delete options from it alone: dryRun goes there (a
  // dryRun query parameter next to a body is ignored, and the pod would really be deleted).
  // The query carries it too, so the request URI (and the audit log) says it is a dry run.
  const body = { preconditions: { uid }, ...(opts.dryRun && { dryRun: ['All'] }) };
  try {
    await core.deleteNamespacedPod({ ...objectRef(target), body, ...dryRunParam(opts) }, callOptions());
    return 'deleted';
  } catch (err) {
    const code = err instanceof ApiException ? err.code : undefined;
    if (code === 404 || code === 409) return 'gone';
    throw kubeFailure(err, target);
  }
}

// ---------------------------------------------------------------------------------------------
// The actions
// ---------------------------------------------------------------------------------------------

/** `kubectl rollout restart`: a new restartedAt on the pod template, chosen once per key. */
async function restartDeployment(raw: RestartDeploymentInput): Promise<RestartDeploymentResult> {
  const input = parseInput(restartDeploymentInput, raw);
  const target = deploymentTarget(input);
  const { apps } = await kubeClients(input.cluster);
  return applyOnce<RestartIntent, RestartDeploymentResult>({
    input,
    action: 'RestartDeployment',
    target,
    plan: async () => restartIntent(await readDeployment(apps, target), target),
    before: (intent) => ({ restartedAt: intent.previous }),
    apply: async ({ restartedAt }) => {
      await writeRestart(apps, target, restartedAt);
      return { restartedAt };
    },
    applied: async ({ restartedAt }) =>
      restartedAtOf(await readDeployment(apps, target)) === restartedAt ? { restartedAt } : undefined,
  });
}

async function scaleDeployment(raw: ScaleDeploymentInput): Promise<ScaleDeploymentResult> {
  const input = parseInput(scaleDeploymentInput, raw);
  const target = deploymentTarget(input);
  const { apps } = await kubeClients(input.cluster);
  return applyOnce<ScaleIntent, ScaleDeploymentResult>({
    input,
    action: 'ScaleDeployment',
    target,
    plan: async () => ({
      before: (await readDeploymentScale(apps, target)).spec?.replicas ?? 0,
      replicas: input.replicas,
    }),
    before: (intent) => ({ replicas: intent.before }),
    apply: async ({ replicas }) => {
      const scale = await writeScale(apps, target, replicas);
      return { replicas: scale.spec?.replicas ?? replicas };
    },
    applied: async ({ replicas }) =>
      (await readDeploymentScale(apps, target)).spec?.replicas === replicas ? { replicas } : undefined,
  });
}

/** One container's cpu/memory requests and limits; the values not given stay as they are. */
async function adjustResources(raw: AdjustResourcesInput): Promise<AdjustResourcesResult> {
  const input = parseInput(adjustResourcesInput, raw);
  const target = deploymentTarget(input);
  const { apps } = await kubeClients(input.cluster);
  return applyOnce<ResourcesIntent, AdjustResourcesResult>({
    input,
    action: 'AdjustResources',
    target,
    plan: async () => resourcesIntent(await readDeployment(apps, target), target, input),
    before: (intent) => ({ container: input.container, ...intent.before }),
    apply: async ({ after }) => {
      await writeResources(apps, target, input.container, after);
      return { container: input.container, ...after };
    },
    applied: async ({ after }) => {
      const now = containerResources(await readDeployment(apps, target), input.container);
      return now && sameResources(now, after) ? { container: input.container, ...after } : undefined;
    },
  });
}

/**
 * A rollback to the revision chosen once (rollbackIntent). A retry of a pending key whose
 * template already runs (the same version: the intent's template is the ReplicaSet's, defaulted
 * by the server as the Deployment's is) does not send it again.
 */
async function rollbackDeployment(raw: RollbackDeploymentInput): Promise<RollbackDeploymentResult> {
  const input = parseInput(rollbackDeploymentInput, raw);
  const target = deploymentTarget(input);
  const { apps } = await kubeClients(input.cluster);
  return applyOnce<RollbackIntent, RollbackDeploymentResult>({
    input,
    action: 'RollbackDeployment',
    target,
    plan: async () => rollbackIntent(apps, await readDeployment(apps, target), target, input.toRevision),
    before: (intent) => intent.before,
    apply: async ({ revision, template, reason }) => {
      await writeRollback(apps, target, template);
      return { revision, images: imagesOf(template), ...(reason && { reason }) };
    },
    applied: async ({ revision, template, reason }) =>
      templateVersion(asPodTemplate((await readDeployment(apps, target)).spec?.template)) ===
      templateVersion(asPodTemplate(template))
        ? { revision, images: imagesOf(template), ...(reason && { reason }) }
        : undefined,
  });
}

/** Deletes the pod found first (by uid): gone on a repeat (404) or replaced by a namesake (409) is done. */
async function deletePod(raw: DeletePodInput): Promise<DeletePodResult> {
  const input = parseInput(deletePodInput, raw);
  const target = podTarget(input);
  const { core } = await kubeClients(input.cluster);
  return applyOnce<DeletePodIntent, DeletePodResult>({
    input,
    action: 'DeletePod',
    target,
    plan: async () => deletePodIntent(await readPod(core, target)),
    before: (intent) => intent,
    apply: async ({ uid }) => {
      await writeDeletePod(core, target, uid);
      return { deleted: true as const };
    },
    // Gone, replaced by a namesake, or terminating already: the delete was sent.
    applied: async ({ uid }) => {
      const pod = await unlessGone(readPod(core, target));
      return !pod || pod.metadata?.uid !== uid || pod.metadata?.deletionTimestamp
        ? { deleted: true as const }
        : undefined;
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
