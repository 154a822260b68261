import { isK8sName, type Facts } from './facts';
import type { SuggestedAction } from './types';

/** Building blocks of the suggested actions, shared by the rules. */

/**
 * Target params for workload actions (restart, scale, adjust, rollback). Deployments are named;
 * StatefulSets and DaemonSets leave `deployment` out, which the executor reads as "the
 * incident's own resource". Pods and nodes have no workload target.
 */
export function workloadTarget(f: Facts): Record<string, string> | undefined {
  if (f.kind === 'Deployment' && isK8sName(f.name)) return { deployment: f.name, ...(f.ns ? { namespace: f.ns } : {}) };
  if (f.kind === 'StatefulSet' || f.kind === 'DaemonSet') return f.ns ? { namespace: f.ns } : {};
  return undefined;
}

/** A rolling restart of the incident's workload (RestartDeployment). */
export function restartAction(target: Record<string, string>, description: string): SuggestedAction {
  return { name: 'restart-workload', action: 'RestartDeployment', description, params: { ...target } };
}

/** A rollback of the incident's Deployment to its previous revision. */
export function rollbackAction(target: Record<string, string>, description: string): SuggestedAction {
  return { name: 'rollback-release', action: 'RollbackDeployment', description, params: { ...target } };
}

export function notify(f: Facts, ctxName: string, what: string): SuggestedAction {
  const sev = f.severity ?? 'unrated';
  return {
    name: 'notify-owners',
    action: 'Notify',
    description: 'Tell the owning team; this needs a human decision',
    params: { channel: 'slack', message: `[${sev}] ${ctxName}: ${what}` },
  };
}

const BINARY_STEP: Readonly<Record<string, [string, number]>> = {
  Ei: ['Pi', 1024],
  Pi: ['Ti', 1024],
  Ti: ['Gi', 1024],
  Gi: ['Mi', 1024],
  Mi: ['Ki', 1024],
  Ki: ['', 1024],
  E: ['P', 1000],
  P: ['T', 1000],
  T: ['G', 1000],
  G: ['M', 1000],
  M: ['k', 1000],
  k: ['', 1000],
};

/**
 * A Kubernetes memory quantity times `factor`, in the largest unit that keeps it whole:
 * 512Mi × 1.5 = 768Mi, 1Gi × 1.5 = 1536Mi, 500M × 1.5 = 750M. Undefined when not a plain
 * quantity (exponents, milli-bytes) so callers fall back to a relative increase.
 */
export function scaleQuantity(quantity: string, factor: number): string | undefined {
  const m = /^(\d+(?:\.\d+)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$/.exec(quantity.trim());
  if (m === null || !(factor > 0)) return undefined;
  let value = Number(m[1]) * factor;
  let unit = m[2] ?? '';
  const whole = (v: number) => Math.abs(v - Math.round(v)) < 1e-9;
  while (!whole(value) && BINARY_STEP[unit] !== undefined) {
    const [next, mult] = BINARY_STEP[unit];
    value *= mult;
    unit = next;
  }
  const out = Math.round(value);
  return out > 0 && Number.isSafeInteger(out) ? `${out}${unit}` : undefined;
}

/** Memory change params: an absolute limit from the `memory_limit` label when it parses, else a percentage. */
export function memoryChange(f: Facts, factor: number): { params: Record<string, unknown>; text: string } {
  const next = f.memoryLimit !== undefined ? scaleQuantity(f.memoryLimit, factor) : undefined;
  const percent = Math.round((factor - 1) * 100);
  return next !== undefined
    ? { params: { memoryLimit: next }, text: `from ${f.memoryLimit} to ${next}` }
    : { params: { memoryLimitIncreasePercent: percent }, text: `by ${percent}%` };
}
