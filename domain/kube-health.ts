import { redactText } from './redact';

/**
 * Did a fix work? The verdict on a Deployment after a remediation, by `kubectl rollout status`'s
 * rules (the controller saw the latest spec, every replica is of the current template and
 * available, no old replica left, the rollout did not exceed its progress deadline), plus the
 * pods of the current template: none crashing since the fix and, when the original failure's
 * signature is given, none showing it again (its reasons, its exit code, its log line). Pods of
 * the ReplicaSets being replaced are counted, never judged: the crashing pods of a bad revision
 * do not fail the rollback that replaces them. Pure: activities/kube-verify.ts gathers the facts
 * (its input is contracts/kube-actions.ts verifyTargetInput).
 */

export interface TargetHealth {
  healthy: boolean;
  /** What was checked, in words. */
  checked: string[];
  /** What was observed (`3/3 updated, 3/3 available, 3 current`, `pod api-x container app CrashLoopBackOff`). */
  seen: string[];
  /** One line. */
  summary: string;
  /**
   * Set (true) when waiting will not change the verdict: the rollout exceeded its progress
   * deadline (ProgressDeadlineExceeded), so the controller has given up on it. Absent otherwise.
   */
  final?: true;
}

/** What the original failure looked like; a fix is good only when no judged pod shows it again. */
export interface FailureSignature {
  /** Container reasons (`OOMKilled`, `CrashLoopBackOff`, `ImagePullBackOff`, `Error`). */
  reasons: string[];
  /** A container's exit code (`137`). */
  exitCode?: number;
  /** A line the failing containers printed (`FATAL: out of connections`); matched trimmed, case-sensitive. */
  logLine?: string;
}

export interface TerminationFacts {
  reason?: string;
  exitCode?: number;
  finishedAt?: string;
}

/** The current log tail of a container, or why it could not be read (then it is no evidence either way). */
export type LogFacts = { readable: true; text: string } | { readable: false; reason: string };

export interface ContainerFacts {
  name: string;
  /** state.waiting.reason (`CrashLoopBackOff`, `ContainerCreating`). */
  waiting?: string;
  /** state.terminated: the container is down now. */
  terminated?: TerminationFacts;
  /** lastState.terminated: how its previous run ended. */
  lastTerminated?: TerminationFacts;
  /** Read only for a signature with a log line, only for judged pods (judgedPods), at most MAX_LOG_READS. */
  log?: LogFacts;
}

export interface PodFacts {
  name: string;
  /** Being deleted (an old pod on its way out): not judged. */
  terminating: boolean;
  /** Its `pod-template-hash` label: which ReplicaSet's template it runs. */
  templateHash?: string;
  containers: ContainerFacts[];
}

/** The ReplicaSet of the Deployment's current template: owned by it, of its revision. */
export interface CurrentTemplate {
  replicaSet: string;
  /** Its `pod-template-hash` label, which its pods carry too. */
  hash: string;
}

/** The Deployment's `Progressing` condition. */
export interface ProgressingFacts {
  status: string;
  reason?: string;
  message?: string;
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
      /** Its `deployment.kubernetes.io/revision` annotation; 0 before the controller set one. */
      revision: number;
      /** spec.replicas */
      desired: number;
      updated: number;
      available: number;
      /** status.replicas: pods of every template, so above `updated` while old pods remain. */
      current: number;
      /** Absent when no owned ReplicaSet has the Deployment's revision (not created yet): then every pod is judged. */
      currentTemplate?: CurrentTemplate;
      progressing?: ProgressingFacts;
      /** Every pod the Deployment's selector matches. */
      pods: PodFacts[];
    };

/** Problem lines kept in `seen`; the rest are counted. */
export const MAX_SEEN_PROBLEMS = 20;
/** Notes about logs that could not be read kept in `seen`; the rest are counted. */
export const MAX_SEEN_LOG_NOTES = 5;
/** Containers whose log is read for a signature's log line, per verdict (the rest are noted as not read). */
export const MAX_LOG_READS = 10;
/** Lines of a container's current log searched for a signature's log line. */
export const LOG_TAIL_LINES = 200;
/** The longest signature log line accepted. */
export const MAX_SIGNATURE_LOG_LINE = 300;
/** A log line quoted in a verdict is cut here (after redaction). */
const QUOTE_CHARS = 120;

/** The `Progressing` reason of a rollout the controller has given up on. */
export const PROGRESS_DEADLINE_EXCEEDED = 'ProgressDeadlineExceeded';

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

/** Text from a cluster (a log line, a condition's message) as it may appear in a verdict: redacted, one short line. */
function short(text: string): string {
  const one = redactText(text.trim()).replace(/\s+/g, ' ');
  return one.length <= QUOTE_CHARS ? one : `${one.slice(0, QUOTE_CHARS - 1)}…`;
}

const quote = (text: string) => `"${short(text)}"`;

/** A signature with something to look for; an empty one is none. */
function effective(signature: FailureSignature | undefined): FailureSignature | undefined {
  if (!signature) return undefined;
  const reasons = signature.reasons.filter((r) => r.trim() !== '');
  const logLine = signature.logLine?.trim();
  if (reasons.length === 0 && signature.exitCode === undefined && !logLine) return undefined;
  return {
    reasons,
    ...(signature.exitCode !== undefined && { exitCode: signature.exitCode }),
    ...(logLine && { logLine }),
  };
}

/** `OOMKilled, exit 137, log line "FATAL: …"` */
export function describeSignature(signature: FailureSignature): string {
  return [
    ...signature.reasons,
    ...(signature.exitCode !== undefined ? [`exit ${signature.exitCode}`] : []),
    ...(signature.logLine ? [`log line ${quote(signature.logLine)}`] : []),
  ].join(', ');
}

/**
 * The pods the verdict judges: not terminating, and of the current template when it is known
 * (every other pod belongs to a ReplicaSet being replaced). activities/kube-verify.ts reads the
 * logs of these only.
 */
export function judgedPods(facts: Extract<DeploymentFacts, { found: true }>): PodFacts[] {
  const hash = facts.currentTemplate?.hash;
  return facts.pods.filter((p) => !p.terminating && (hash === undefined || p.templateHash === hash));
}

interface Problem {
  line: string;
  /** It shows the original failure's signature. */
  signature: boolean;
}

const matchesTermination = (t: TerminationFacts | undefined, s: FailureSignature | undefined): boolean =>
  Boolean(
    t &&
    s &&
    ((t.reason !== undefined && s.reasons.includes(t.reason)) ||
      (s.exitCode !== undefined && t.exitCode === s.exitCode)),
  );

/**
 * The problem lines of one judged pod: CrashLoopBackOff now, a container that ended (OOMKilled or
 * otherwise) since the fix, and the signature's reasons or exit code (waiting or down now, or
 * the last run ended so since the fix), and its log line still in the current log.
 */
function podProblems(pod: PodFacts, since: Date, signature: FailureSignature | undefined): Problem[] {
  const out: Problem[] = [];
  const marked = (line: string, isSignature: boolean): Problem => ({
    line: isSignature ? `${line} (the failure signature)` : line,
    signature: isSignature,
  });
  for (const c of pod.containers) {
    const where = `pod ${pod.name} container ${c.name}`;
    const waitingSig = c.waiting !== undefined && (signature?.reasons.includes(c.waiting) ?? false);
    if (c.waiting === 'CrashLoopBackOff' || waitingSig) out.push(marked(`${where} ${c.waiting}`, waitingSig));
    const downSig = matchesTermination(c.terminated, signature);
    if (sinceFix(c.terminated, since) || downSig)
      out.push(marked(`${where} terminated ${termination(c.terminated!)}`, downSig));
    else if (sinceFix(c.lastTerminated, since))
      out.push(
        marked(
          `${where} restarted after ${termination(c.lastTerminated!)}`,
          matchesTermination(c.lastTerminated, signature),
        ),
      );
    if (signature?.logLine && c.log?.readable) {
      const needle = signature.logLine;
      const hit = c.log.text.split('\n').find((l) => l.includes(needle));
      if (hit !== undefined) out.push(marked(`${where} log still prints ${quote(hit)}`, true));
    }
  }
  return out;
}

/** What became of the log reads: the unreadable ones (no evidence either way), and how many were read. */
function logNotes(judged: PodFacts[]): string[] {
  const unreadable: string[] = [];
  let read = 0;
  let notRead = 0;
  for (const p of judged)
    for (const c of p.containers) {
      if (!c.log) notRead++;
      else if (c.log.readable) read++;
      else
        unreadable.push(`pod ${p.name} container ${c.name} log not readable (${c.log.reason}): no evidence either way`);
    }
  return [
    `${read} container log${read === 1 ? '' : 's'} searched (last ${LOG_TAIL_LINES} lines)`,
    ...unreadable.slice(0, MAX_SEEN_LOG_NOTES),
    ...(unreadable.length > MAX_SEEN_LOG_NOTES
      ? [`… ${unreadable.length - MAX_SEEN_LOG_NOTES} more logs not readable`]
      : []),
    ...(notRead > 0 ? [`${notRead} container logs not read (at most ${MAX_LOG_READS} are read)`] : []),
  ];
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

export function deploymentHealth(facts: DeploymentFacts, since: Date, sig?: FailureSignature): TargetHealth {
  if (!facts.found)
    return {
      healthy: false,
      checked: ['the Deployment exists'],
      seen: [`${facts.target} not found`],
      summary: `${facts.target} is gone (not found): nothing runs to verify`,
    };
  const { target, desired, updated, available, current } = facts;
  const signature = effective(sig);
  const sinceText = new Date(wholeSecond(since)).toISOString();
  const checked = [
    'the controller has observed the latest generation',
    'the rollout has not exceeded its progress deadline',
    `all ${desired} desired replicas updated, no old replica left, every updated replica available (kubectl rollout status)`,
    `only pods of the current template (revision ${facts.revision}) are judged`,
    'no container waiting in CrashLoopBackOff',
    `no container OOMKilled or restarted since ${sinceText}`,
    ...(signature ? [`the failure signature (${describeSignature(signature)}) is gone`] : []),
  ];

  // `kubectl rollout status` (and gitops-engine's Deployment health), in its order.
  const observed = facts.observedGeneration >= facts.generation;
  const deadline =
    observed && facts.progressing?.reason === PROGRESS_DEADLINE_EXCEEDED
      ? `its rollout exceeded its progress deadline (${PROGRESS_DEADLINE_EXCEEDED}${
          facts.progressing.message ? `: ${short(facts.progressing.message)}` : ''
        })`
      : undefined;
  const rollout = [
    ...(updated < desired ? [`${updated} of ${desired} replicas updated`] : []),
    ...(current > updated ? [`${plural(current - updated, 'old replica')} left`] : []),
    ...(available < updated ? [`${available} of ${updated} updated replicas available`] : []),
  ];

  const judged = judgedPods(facts);
  const live = facts.pods.filter((p) => !p.terminating);
  const replaced = live.length - judged.length;
  const terminating = facts.pods.length - live.length;
  const problems = judged.flatMap((p) => podProblems(p, since, signature));
  const sigProblems = problems.filter((p) => p.signature);
  const crashes = problems.filter((p) => !p.signature);

  const seen = [
    `generation ${facts.generation}, observed ${facts.observedGeneration}`,
    `${updated}/${desired} updated, ${available}/${desired} available, ${current} current`,
    ...(facts.progressing
      ? [`Progressing ${facts.progressing.status}${facts.progressing.reason ? ` (${facts.progressing.reason})` : ''}`]
      : []),
    facts.currentTemplate
      ? `current template: ReplicaSet ${facts.currentTemplate.replicaSet} (revision ${facts.revision}, ${facts.currentTemplate.hash})`
      : `no ReplicaSet of revision ${facts.revision} found: every pod judged`,
    ...problems.slice(0, MAX_SEEN_PROBLEMS).map((p) => p.line),
    ...(problems.length > MAX_SEEN_PROBLEMS ? [`… ${problems.length - MAX_SEEN_PROBLEMS} more crash lines`] : []),
  ];
  if (crashes.length === 0) seen.push(`${judged.length} pods: no crash since ${sinceText}`);
  if (signature) {
    if (sigProblems.length === 0) seen.push(`${judged.length} pods: no sign of the failure signature`);
    if (signature.logLine) seen.push(...logNotes(judged));
  }
  if (replaced > 0) seen.push(`${plural(replaced, 'pod')} of replaced ReplicaSets not judged`);
  if (terminating > 0) seen.push(`${terminating} pods terminating (not judged)`);

  const healthy = observed && !deadline && rollout.length === 0 && problems.length === 0;
  const why = [
    ...(observed ? [] : [`the controller has not observed generation ${facts.generation} yet`]),
    ...(deadline ? [deadline] : []),
    ...(rollout.length > 0 ? [`rollout incomplete (${rollout.join(', ')})`] : []),
    ...(sigProblems.length > 0
      ? [`the failure signature is back (${sigProblems.length}): ${sigProblems[0].line}`]
      : []),
    ...(crashes.length > 0
      ? [`${crashes.length} container crash${crashes.length === 1 ? '' : 'es'}: ${crashes[0].line}`]
      : []),
  ];
  return {
    healthy,
    checked,
    seen,
    summary: healthy
      ? `${target} is healthy: ${desired}/${desired} updated and available, no crash since the fix${
          signature ? ', the failure signature is gone' : ''
        }`
      : `${target} is unhealthy: ${why.join('; ')}`,
    ...(deadline && { final: true as const }),
  };
}
