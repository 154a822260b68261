import type { IncidentEvidence } from './evidence';
import type { FailureSignature } from './kube-health';
import { errorLines, lastHealthyBefore, leadText } from './evidence-analysis';
import { memoryBytes } from './quantity';
import type { RunbookAction } from './runbook';

/**
 * What the evidence says remediation should and should not do (docs/remediation.md §2), pure:
 * the plan it calls for first, the steps it rules out, or that a person must take over at once.
 * Evidence before action (HolmesGPT, k8sgpt): a rollout that preceded the failure is rolled back
 * to the last revision seen healthy, with no restart or wait before it; a lowered memory limit is
 * restored; a crash with no change is restarted once; a changed ConfigMap, which no rollback can
 * revert, goes to a person at once; a node NotReady rules a workload rollback out.
 */

/** The plan the evidence calls for: its kind (the strategy's identity), its steps, and why. */
export interface EvidencePlan {
  kind: 'rollback' | 'restore-memory' | 'restart';
  /** `roll back to revision 1 (app=checkout:1), the last revision seen healthy: …` */
  summary: string;
  actions: RunbookAction[];
}

/** The Kubernetes steps the evidence can rule out. */
export type RuledOutStep = 'RollbackDeployment' | 'RestartDeployment';

export interface RemediationGuidance {
  plan?: EvidencePlan;
  /** Steps no plan may run for this incident, each with why (a runbook with one is skipped). */
  ruledOut: Partial<Record<RuledOutStep, string>>;
  /** Nothing automatic is right: the incident escalates at once, with this reason. */
  escalate?: string;
}

export const NO_GUIDANCE: RemediationGuidance = { ruledOut: {} };

/** The failures a restart may clear when nothing changed (an OOM wants memory; a pull error, the registry). */
const CRASH_SIGNALS = ['CrashLoopBackOff', 'PodNotReady', 'DeploymentFailing'];

/** The memory limit a rollout lowered, per container: `limits.memory app` 512Mi → 64Mi. */
function loweredMemory(e: IncidentEvidence, change: string): { container: string; from: string } | undefined {
  const diff = e.changes.find((c) => c.id === change)?.diff ?? [];
  for (const d of diff) {
    const [field, container] = d.field.split(' ');
    if (field !== 'limits.memory' || !container || !d.from || !d.to) continue;
    try {
      if (memoryBytes(d.to) < memoryBytes(d.from)) return { container, from: d.from };
    } catch {
      // a quantity Foghorn does not read: not evidence of a lowered limit
    }
  }
  return undefined;
}

/**
 * The guidance for an incident on `resource` (`Deployment/checkout`) from its evidence. Without
 * evidence, or for what the rules do not cover, none: the matched runbooks run as they are.
 */
export function guidanceFrom(
  evidence: IncidentEvidence | undefined,
  incident: { resource: string; signalType: string },
): RemediationGuidance {
  if (!evidence) return NO_GUIDANCE;
  const e = evidence;
  const s = e.suspect;
  const [kind] = incident.resource.split('/');
  const workload = kind === 'Deployment';
  const notReady = e.nodes.filter((n) => n.ready !== 'True').map((n) => n.name);
  if (s?.type === 'NodeCondition' || incident.signalType === 'NodeNotReady' || notReady.length > 0) {
    const nodes = notReady.length > 0 ? notReady.join(', ') : (s?.resource.replace(/^Node\//, '') ?? 'its node');
    const why = `node ${nodes} is not Ready: the node, not the workload, explains the failure`;
    return { ruledOut: { RollbackDeployment: why, RestartDeployment: `${why}; restarted pods cannot run there` } };
  }
  if (s?.type === 'Config')
    return {
      ruledOut: {
        RollbackDeployment: `${s.resource} changed and no revision of ${incident.resource} can revert it`,
        RestartDeployment: `${s.resource} changed: restarted pods read it again`,
      },
      escalate: `${s.resource} changed ${leadText(s.leadMs)} the first failure (${s.summary}); no revision of ${incident.resource} reverts it and a restart reads it again: revert the change by hand (evidence ${s.evidence})`,
    };
  if (s?.type === 'Rollout' && s.resource === incident.resource && workload) {
    const after = `revision ${s.revision} rolled out ${leadText(s.leadMs)} the failure began`;
    const ruledOut = { RestartDeployment: `${after}: a restart runs the same template again` };
    const lowered = loweredMemory(e, s.change);
    const oom = e.pods.some((p) => p.lastTermination?.reason === 'OOMKilled') || incident.signalType === 'OOMKilled';
    if (oom && lowered)
      return {
        ruledOut,
        plan: {
          kind: 'restore-memory',
          summary: `restore the memory limit of container ${lowered.container} to ${lowered.from}: revision ${s.revision} lowered it and the containers are OOMKilled (evidence ${s.evidence})`,
          actions: [{ type: 'AdjustResources', params: { container: lowered.container, memoryLimit: lowered.from } }],
        },
      };
    const good = lastHealthyBefore(e.revisions, s.revision);
    if (!good)
      return {
        ruledOut,
        escalate: `${after}, but Foghorn saw no earlier revision of ${incident.resource} healthy: no rollback (evidence ${s.evidence})`,
      };
    return {
      ruledOut,
      plan: {
        kind: 'rollback',
        summary: `roll back to revision ${good.revision} (${good.images.join(', ')}), the last revision seen healthy: ${after} (evidence ${s.evidence})`,
        actions: [{ type: 'RollbackDeployment', params: {} }],
      },
    };
  }
  // A rollout of a revision that then ran healthy is history, not a cause; one not yet proven is.
  const provenHealthy = (revision: number | undefined) =>
    e.revisions.some((r) => r.revision === revision && r.state === 'Healthy');
  const changedBefore = e.changes.some(
    (c) =>
      !c.by.foghorn &&
      c.workloads.includes(incident.resource) &&
      (c.type === 'Config' || (c.type === 'Rollout' && !provenHealthy(c.revision))),
  );
  const crashed = e.pods.some((p) => p.lastTermination && p.lastTermination.reason !== 'OOMKilled');
  if (workload && !s && !changedBefore && crashed && CRASH_SIGNALS.includes(incident.signalType))
    return {
      ruledOut: {
        RollbackDeployment: `no rollout of ${incident.resource} preceded the failure: a rollback would undo a release that ran healthy`,
      },
      plan: {
        kind: 'restart',
        summary: `restart ${incident.resource} once: it crashes with no change before it; if the crash returns, a person takes over`,
        actions: [{ type: 'RestartDeployment', params: {} }],
      },
    };
  return NO_GUIDANCE;
}

/** The reason a runbook's steps are ruled out for this incident, or undefined when they may run. */
export function ruledOutBy(guidance: RemediationGuidance, steps: readonly { type: string }[]): string | undefined {
  for (const step of steps) {
    const why = guidance.ruledOut[step.type as RuledOutStep];
    if (why) return `${step.type} is ruled out: ${why}`;
  }
  return undefined;
}

const SIGNATURE_REASONS = new Set(['CrashLoopBackOff', 'ImagePullBackOff', 'ErrImagePull', 'OOMKilled', 'Error']);

/**
 * The failure's signature from its evidence: the failing pods' waiting and termination reasons,
 * their most common non-zero exit code, and the last error line of their logs. Undefined when
 * the evidence saw no failing pod.
 */
export function failureSignature(evidence: IncidentEvidence | undefined): FailureSignature | undefined {
  if (!evidence) return undefined;
  const reasons = new Set<string>();
  const codes = new Map<number, number>();
  let logLine: string | undefined;
  for (const p of evidence.pods) {
    if (SIGNATURE_REASONS.has(p.waitingReason)) reasons.add(p.waitingReason);
    const t = p.lastTermination;
    if (t && SIGNATURE_REASONS.has(t.reason)) reasons.add(t.reason);
    if (t && t.exitCode !== 0) codes.set(t.exitCode, (codes.get(t.exitCode) ?? 0) + 1);
    logLine ??= errorLines(p.previousLogs).at(-1) ?? errorLines(p.currentLogs).at(-1);
  }
  if (reasons.size === 0 && codes.size === 0 && !logLine) return undefined;
  const exitCode = [...codes.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
  return {
    reasons: [...reasons].sort(),
    ...(exitCode !== undefined && { exitCode }),
    ...(logLine && { logLine: logLine.trim().slice(0, 300) }),
  };
}
