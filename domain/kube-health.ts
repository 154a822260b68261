/**
 * Did a fix work? The verdict on a Deployment after a remediation: rolled out completely (the
 * controller saw the latest spec, every pod is of the new template, the old ones are gone) and
 * no pod crashing since the fix. Pure: activities/kube-verify.ts gathers the facts (its input
 * is contracts/kube-actions.ts verifyTargetInput).
 */

export interface TargetHealth {
  healthy: boolean;
  /** What was checked, in words. */
  checked: string[];
  /** What was observed (`3/3 updated, 3/3 available, 3 current`, `pod api-x container app CrashLoopBackOff`). */
  seen: string[];
  /** One line. */
  summary: string;
}

export interface TerminationFacts {
  reason?: string;
  exitCode?: number;
  finishedAt?: string;
}

export interface ContainerFacts {
  name: string;
  /** state.waiting.reason (`CrashLoopBackOff`, `ContainerCreating`). */
  waiting?: string;
  /** state.terminated: the container is down now. */
  terminated?: TerminationFacts;
  /** lastState.terminated: how its previous run ended. */
  lastTerminated?: TerminationFacts;
}

export interface PodFacts {
  name: string;
  /** Being deleted (an old pod on its way out): not judged. */
  terminating: boolean;
  containers: ContainerFacts[];
}

/** A Deployment as read from the cluster; `found: false` when it is not there (deleted). */
export type DeploymentFacts =
  | { found: false; target: string }
  | {
      found: true;
      /** `deployment payments/api`, for the lines. */
      target: string;
      generation: number;
      observedGeneration: number;
      /** spec.replicas */
      desired: number;
      updated: number;
      available: number;
      /** status.replicas: pods of every template, so above `desired` while old pods remain. */
      current: number;
      pods: PodFacts[];
    };

/** Problem lines kept in `seen`; the rest are counted. */
export const MAX_SEEN_PROBLEMS = 20;

/** Kubernetes writes seconds only: a crash in the second of the fix counts as after it (the cautious side). */
const wholeSecond = (d: Date) => Math.floor(d.getTime() / 1000) * 1000;

function sinceFix(t: TerminationFacts | undefined, since: Date): boolean {
  if (!t?.finishedAt) return false; // no time, no verdict: kubelets (and KWOK) always write it
  const at = Date.parse(t.finishedAt);
  return Number.isFinite(at) && at >= wholeSecond(since);
}

function termination(t: TerminationFacts): string {
  const why = [t.reason, t.exitCode !== undefined ? `exit ${t.exitCode}` : undefined].filter(Boolean).join(', ');
  return `${why ? `${why} ` : ''}at ${t.finishedAt}`;
}

/** The crash lines of one pod: CrashLoopBackOff now, or a container that ended (OOMKilled or otherwise) since the fix. */
function podProblems(pod: PodFacts, since: Date): string[] {
  const out: string[] = [];
  for (const c of pod.containers) {
    const where = `pod ${pod.name} container ${c.name}`;
    if (c.waiting === 'CrashLoopBackOff') out.push(`${where} CrashLoopBackOff`);
    if (sinceFix(c.terminated, since)) out.push(`${where} terminated ${termination(c.terminated!)}`);
    else if (sinceFix(c.lastTerminated, since)) out.push(`${where} restarted after ${termination(c.lastTerminated!)}`);
  }
  return out;
}

export function deploymentHealth(facts: DeploymentFacts, since: Date): TargetHealth {
  if (!facts.found)
    return {
      healthy: false,
      checked: ['the Deployment exists'],
      seen: [`${facts.target} not found`],
      summary: `${facts.target} is gone (not found): nothing runs to verify`,
    };
  const { target, desired, updated, available, current } = facts;
  const sinceText = new Date(wholeSecond(since)).toISOString();
  const checked = [
    'the controller has observed the latest generation',
    `updated, available and current replicas all equal the desired ${desired} (no old pods left)`,
    'no container waiting in CrashLoopBackOff',
    `no container OOMKilled or restarted since ${sinceText}`,
  ];

  const observed = facts.observedGeneration >= facts.generation;
  const rolledOut = updated === desired && available === desired && current === desired;
  const judged = facts.pods.filter((p) => !p.terminating);
  const problems = judged.flatMap((p) => podProblems(p, since));

  const seen = [
    `generation ${facts.generation}, observed ${facts.observedGeneration}`,
    `${updated}/${desired} updated, ${available}/${desired} available, ${current} current`,
    ...problems.slice(0, MAX_SEEN_PROBLEMS),
    ...(problems.length > MAX_SEEN_PROBLEMS ? [`… ${problems.length - MAX_SEEN_PROBLEMS} more crash lines`] : []),
  ];
  if (problems.length === 0) seen.push(`${judged.length} pods: no crash since ${sinceText}`);
  const terminating = facts.pods.length - judged.length;
  if (terminating > 0) seen.push(`${terminating} pods terminating (not judged)`);

  const healthy = observed && rolledOut && problems.length === 0;
  const why = [
    ...(observed ? [] : [`the controller has not observed generation ${facts.generation} yet`]),
    ...(rolledOut
      ? []
      : [`rollout incomplete (${updated}/${desired} updated, ${available}/${desired} available, ${current} current)`]),
    ...(problems.length > 0
      ? [`${problems.length} container crash${problems.length === 1 ? '' : 'es'}: ${problems[0]}`]
      : []),
  ];
  return {
    healthy,
    checked,
    seen,
    summary: healthy
      ? `${target} is healthy: ${desired}/${desired} updated and available, no crash since the fix`
      : `${target} is unhealthy: ${why.join('; ')}`,
  };
}
