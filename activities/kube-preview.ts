import type { V1Pod } from '@kubernetes/client-node';
import { ApplicationFailure } from '@temporalio/common';
import { describeTarget, type ContainerResources, type CpuMemory, type KubeTarget } from '../domain/kube-actions';
import {
  adjustResourcesInput,
  deletePodInput,
  restartDeploymentInput,
  rollbackDeploymentInput,
  scaleDeploymentInput,
} from '../contracts/kube-actions';
import {
  boundDiff,
  objectYamlForDiff,
  unifiedDiff,
  type KubePreview,
  type KubePreviewInput,
} from '../domain/kube-diff';
import { redactText } from '../domain/redact';
import {
  deletePodIntent,
  deploymentTarget,
  kubeClients,
  parseInput,
  podTarget,
  readDeployment,
  readDeploymentScale,
  readPod,
  resourcesIntent,
  restartIntent,
  rollbackIntent,
  writeDeletePod,
  writeResources,
  writeRestart,
  writeRollback,
  writeScale,
  type ObjectTarget,
} from './kube-actions';

/**
 * The approval preview of a risky step: what `kubectl diff` would show. The object is read,
 * the action decides its values exactly as it will when it runs (activities/kube-actions.ts),
 * and the very write it would send goes to the API server as a dry run; the diff is the object
 * before against the server's answer. A restart's timestamp is chosen again when the step runs.
 * A preview never fails its caller: a problem comes back as `error`, with no diff.
 */

/** The inputs are validated with the actions' own schemas; this key is never recorded. */
const PREVIEW_KEY = 'preview';

const labels = (t: ObjectTarget, to = `dry-run/${t.kind.toLowerCase()}/${t.namespace}/${t.name}`) => ({
  from: `live/${t.kind.toLowerCase()}/${t.namespace}/${t.name}`,
  to,
});

function diffOf(target: ObjectTarget, before: unknown, after: unknown, deleted = false): string {
  const to = deleted ? labels(target, '/dev/null') : labels(target);
  return boundDiff(unifiedDiff(objectYamlForDiff(before), deleted ? '' : objectYamlForDiff(after), to));
}

function resourceChanges(container: string, r: { before: ContainerResources; after: ContainerResources }): string {
  const changes = (['requests', 'limits'] as const).flatMap((kind) =>
    (['cpu', 'memory'] as const satisfies (keyof CpuMemory)[]).flatMap((res) => {
      const [from, to] = [r.before[kind][res], r.after[kind][res]];
      return from === to ? [] : [`${kind} ${res} ${from ?? 'unset'} → ${to ?? 'unset'}`];
    }),
  );
  return changes.length > 0
    ? `${changes.join(', ')} for container ${container}`
    : `no change for container ${container}`;
}

type Preview = Omit<KubePreview, 'target'>;

async function preview(raw: KubePreviewInput): Promise<Preview> {
  const { action, ...rest } = raw;
  const withKey = { ...rest, key: PREVIEW_KEY };
  if (action === 'RestartDeployment') {
    const input = parseInput(restartDeploymentInput, withKey);
    const target = deploymentTarget(input);
    const { apps } = await kubeClients(input.cluster);
    const before = await readDeployment(apps, target);
    const { restartedAt } = restartIntent(before, target);
    const after = await writeRestart(apps, target, restartedAt, { dryRun: true });
    return {
      diff: diffOf(target, before, after),
      summary: `restart ${describeTarget(target)}: a rolling update replaces its ${before.spec?.replicas ?? 0} pods`,
      dryRun: true,
    };
  }
  if (action === 'ScaleDeployment') {
    const input = parseInput(scaleDeploymentInput, withKey);
    const target = deploymentTarget(input);
    const { apps } = await kubeClients(input.cluster);
    const before = await readDeploymentScale(apps, target);
    const after = await writeScale(apps, target, input.replicas, { dryRun: true });
    const from = before.spec?.replicas ?? 0;
    return {
      diff: diffOf(target, before, after),
      summary: `scale ${describeTarget(target)} from ${from} to ${input.replicas} replicas${from === input.replicas ? ' (no change)' : ''}`,
      dryRun: true,
    };
  }
  if (action === 'AdjustResources') {
    const input = parseInput(adjustResourcesInput, withKey);
    const target = deploymentTarget(input);
    const { apps } = await kubeClients(input.cluster);
    const before = await readDeployment(apps, target);
    const intent = resourcesIntent(before, target, input);
    const after = await writeResources(apps, target, input.container, intent.after, { dryRun: true });
    return {
      diff: diffOf(target, before, after),
      summary: `adjust ${describeTarget(target)}: ${resourceChanges(input.container, intent)}`,
      dryRun: true,
    };
  }
  if (action === 'RollbackDeployment') {
    const input = parseInput(rollbackDeploymentInput, withKey);
    const target = deploymentTarget(input);
    const { apps } = await kubeClients(input.cluster);
    const before = await readDeployment(apps, target);
    const intent = await rollbackIntent(apps, before, target, input.toRevision);
    const after = await writeRollback(apps, target, intent.template, { dryRun: true });
    const images = (list: string[]) => list.join(', ') || 'none';
    return {
      diff: diffOf(target, before, after),
      summary: `roll back ${describeTarget(target)} from revision ${intent.before.revision} (${images(intent.before.images)}) to the template of ${intent.reason ?? `revision ${intent.revision} (${images((intent.template.spec?.containers ?? []).map((c) => c.image ?? ''))})`}`,
      dryRun: true,
    };
  }
  if (action === 'DeletePod') {
    const input = parseInput(deletePodInput, withKey);
    const target = podTarget(input);
    const { core } = await kubeClients(input.cluster);
    const pod: V1Pod = await readPod(core, target);
    const { uid, phase, node } = deletePodIntent(pod);
    const outcome = await writeDeletePod(core, target, uid, { dryRun: true });
    const owner = pod.metadata?.ownerReferences?.find((o) => o.controller);
    return {
      diff: diffOf(target, pod, undefined, true),
      summary: `delete ${describeTarget(target)} (${phase}${node ? ` on node ${node}` : ''}): ${
        owner
          ? `its ${owner.kind} ${owner.name} creates a replacement`
          : 'no controller owns it, so nothing replaces it'
      }`,
      dryRun: outcome === 'deleted',
    };
  }
  throw ApplicationFailure.nonRetryable(`unknown action ${JSON.stringify(action)}`, 'InvalidInput');
}

/** `deployment payments/api` from whatever the input names (it may be invalid). */
function targetOf(raw: Partial<Record<string, unknown>>): string {
  const text = (v: unknown) => (typeof v === 'string' ? v : '?');
  const t: KubeTarget =
    raw.action === 'DeletePod'
      ? { kind: 'Pod', namespace: text(raw.namespace), name: text(raw.pod), cluster: text(raw.cluster) }
      : { kind: 'Deployment', namespace: text(raw.namespace), name: text(raw.deployment), cluster: text(raw.cluster) };
  return describeTarget(t);
}

async function previewAction(raw: KubePreviewInput): Promise<KubePreview> {
  const target = targetOf((raw ?? {}) as Record<string, unknown>);
  try {
    return { target, ...(await preview(raw)) };
  } catch (err) {
    // Failures of ours are classified and redacted already; anything else (the store) is redacted here.
    const error = err instanceof ApplicationFailure ? err.message : redactText(String((err as Error)?.message ?? err));
    return {
      target,
      diff: '',
      summary: `no preview of ${String(raw?.action)} on ${target}`,
      dryRun: false,
      error,
    };
  }
}

/** Registered with the worker (activities/index.ts). */
export function createKubePreviewActivities() {
  return { kubePreviewAction: previewAction };
}
