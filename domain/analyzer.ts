import { splitResource } from './incident';
import { actionSchema, type ActionType } from './runbook';
import { categoryForSignal, type Severity, type SignalType } from './vocabulary';

/**
 * The built-in rules analyzer (DESIGN §7): provider `builtin`, model `rules-v1`. The default
 * insight provider and the fallback when the LLM fails, so it has to stand on its own: per
 * signal type a root cause naming the resource, a calibrated confidence, the checks and fixes an
 * SRE would reach for, and suggested actions whose params validate against the runbook action
 * schemas (they can become a generated runbook, DESIGN §8).
 *
 * It only reasons over what the caller hands it. Fields with no data behind them (logs, GitOps)
 * stay empty: never invent data.
 */

export const RULES_PROVIDER = { provider: 'builtin', model: 'rules-v1' } as const;

export interface AnalysisContext {
  incident: {
    name: string;
    namespace: string;
    resource: string; // <Kind>/<name>
    signalType: SignalType;
    severity: Severity | undefined;
    description: string;
    labels: Record<string, string>;
    detectedAt: Date;
    riskScore: number;
    /** Signals that joined the incident after the first one. */
    correlatedSignals: { signalType: SignalType; description: string; at: Date }[];
  };
  /** Other open incidents in the same namespace within 10 minutes (the caller selects them). */
  related: { name: string; resource: string; signalType: SignalType; state: string; detectedAt: Date }[];
  /** Candidate runbooks for the incident's category (the caller selects them). */
  runbooks: { name: string; category: string; description: string }[];
}

export interface SuggestedAction {
  name: string;
  action: ActionType;
  description: string;
  params: Record<string, unknown>;
}

export interface Insight {
  analysis: string;
  /** In [0, 1]. */
  confidence: number;
  recommendations: string[];
  suggestedActions: SuggestedAction[];
  logAnalysis: string;
  gitOpsContext: string;
  cascadeAnalysis: string;
  blastRadiusPrediction: string;
  rootCause: string;
  /** The first recommendation, or '' when there is none. */
  recommendation: string;
  relatedEvents: string[];
}

// ---------------------------------------------------------------------------------------------
// Facts: what the rules read from the context
// ---------------------------------------------------------------------------------------------

const K8S_NAME_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
// Kubernetes label values: empty, or alphanumeric at both ends with - _ . inside, at most 63.
const LABEL_VALUE_RE = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

const isK8sName = (s: string): boolean => s.length <= 253 && K8S_NAME_RE.test(s);
const isDnsLabel = (s: string): boolean => s.length <= 63 && DNS_LABEL_RE.test(s);

interface Facts {
  resource: string;
  kind: string;
  name: string;
  namespace: string;
  /** The namespace when it can go into action params. */
  ns: string | undefined;
  /** `kubectl` reference to the workload, e.g. `deployment/checkout-api`. */
  ref: string;
  /** `kubectl -n <ns>` (no namespace flag for cluster-scoped nodes). */
  kubectl: string;
  description: string;
  text: string; // description + reason label, lower-cased, for keyword checks
  labels: Record<string, string>;
  reason: string | undefined;
  exitCode: number | undefined;
  container: string | undefined;
  memoryLimit: string | undefined;
  image: string | undefined;
  alertname: string | undefined;
  /** `key=value` selecting the workload's pods, from an `app` label. */
  appSelector: string | undefined;
  correlated: Set<SignalType>;
  hasRelated: boolean;
  severity: Severity | undefined;
}

function labelOf(labels: Record<string, string>, ...keys: string[]): string | undefined {
  for (const key of keys) {
    if (!Object.prototype.hasOwnProperty.call(labels, key)) continue;
    const v = labels[key];
    if (typeof v === 'string' && v.trim() !== '') return v.trim();
  }
  return undefined;
}

function factsOf(ctx: AnalysisContext): Facts {
  const { incident } = ctx;
  const labels = incident.labels ?? {};
  const split = incident.resource.includes('/')
    ? splitResource(incident.resource)
    : { kind: '', name: incident.resource };
  const reason = labelOf(labels, 'reason', 'waiting_reason', 'terminated_reason');
  const exit = labelOf(labels, 'exit_code', 'exitcode', 'exitCode');
  const exitCode = exit !== undefined && /^\d{1,3}$/.test(exit) ? Number(exit) : undefined;
  const container = labelOf(labels, 'container');
  const app = labelOf(labels, 'app');
  const appK8s = labelOf(labels, 'app.kubernetes.io/name', 'app_kubernetes_io_name');
  const selectorValue = (v: string | undefined) => v !== undefined && v.length <= 63 && LABEL_VALUE_RE.test(v);
  const appSelector = selectorValue(app)
    ? `app=${app}`
    : selectorValue(appK8s)
      ? `app.kubernetes.io/name=${appK8s}`
      : undefined;
  const description = (incident.description ?? '').trim();
  const namespace = incident.namespace;
  return {
    resource: incident.resource,
    kind: split.kind,
    name: split.name,
    namespace,
    ns: isDnsLabel(namespace) ? namespace : undefined,
    ref: `${split.kind.toLowerCase()}/${split.name}`,
    kubectl: split.kind === 'Node' ? 'kubectl' : `kubectl -n ${namespace}`,
    description,
    text: `${description} ${reason ?? ''}`.toLowerCase(),
    labels,
    reason,
    exitCode,
    container: container !== undefined && isDnsLabel(container) ? container : undefined,
    memoryLimit: labelOf(labels, 'memory_limit'),
    image: labelOf(labels, 'image'),
    alertname: labelOf(labels, 'alertname'),
    appSelector,
    correlated: new Set((incident.correlatedSignals ?? []).map((s) => s.signalType)),
    hasRelated: (ctx.related ?? []).length > 0,
    severity: incident.severity,
  };
}

// ---------------------------------------------------------------------------------------------
// Helpers for actions
// ---------------------------------------------------------------------------------------------

/**
 * Target params for workload actions (restart, scale, adjust, rollback). Deployments are named;
 * StatefulSets and DaemonSets leave `deployment` out, which the executor reads as "the
 * incident's own resource". Pods and nodes have no workload target.
 */
function workloadTarget(f: Facts): Record<string, string> | undefined {
  if (f.kind === 'Deployment' && isK8sName(f.name)) return { deployment: f.name, ...(f.ns ? { namespace: f.ns } : {}) };
  if (f.kind === 'StatefulSet' || f.kind === 'DaemonSet') return f.ns ? { namespace: f.ns } : {};
  return undefined;
}

/** A rolling restart of the incident's workload (RestartDeployment). */
function restartAction(target: Record<string, string>, description: string): SuggestedAction {
  return { name: 'restart-workload', action: 'RestartDeployment', description, params: { ...target } };
}

/** A rollback of the incident's Deployment to its previous revision. */
function rollbackAction(target: Record<string, string>, description: string): SuggestedAction {
  return { name: 'rollback-release', action: 'RollbackDeployment', description, params: { ...target } };
}

function notify(f: Facts, ctxName: string, what: string): SuggestedAction {
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
function memoryChange(f: Facts, factor: number): { params: Record<string, unknown>; text: string } {
  const next = f.memoryLimit !== undefined ? scaleQuantity(f.memoryLimit, factor) : undefined;
  const percent = Math.round((factor - 1) * 100);
  return next !== undefined
    ? { params: { memoryLimit: next }, text: `from ${f.memoryLimit} to ${next}` }
    : { params: { memoryLimitIncreasePercent: percent }, text: `by ${percent}%` };
}

// ---------------------------------------------------------------------------------------------
// Rules
// ---------------------------------------------------------------------------------------------

interface RuleResult {
  rootCause: string;
  /** Findings in the labels/description/correlated signals that support the diagnosis. */
  evidence: string[];
  recommendations: string[];
  actions: SuggestedAction[];
}

interface Rule {
  /** Confidence with a description and no corroborating evidence. */
  base: number;
  run(f: Facts, incidentName: string): RuleResult;
}

function exitCodeMeaning(code: number): string {
  switch (code) {
    case 0:
      return 'exit code 0: the main process finishes instead of staying up, and the pod restart policy keeps restarting it';
    case 1:
      return 'exit code 1: the application itself failed, typically a start-up error such as bad configuration or a missing dependency';
    case 126:
      return 'exit code 126: the container command is not executable (permissions or a wrong entrypoint)';
    case 127:
      return 'exit code 127: the container command was not found in the image (wrong entrypoint, command or missing binary)';
    case 137:
      return 'exit code 137 (SIGKILL): the container was killed, by the kernel OOM killer or after failing its liveness probe';
    case 139:
      return 'exit code 139 (SIGSEGV): the process crashed with a segmentation fault';
    case 143:
      return 'exit code 143 (SIGTERM): the container was asked to stop, usually by a failing liveness probe';
    default:
      return code > 128
        ? `exit code ${code}: the process was killed by signal ${code - 128}`
        : `exit code ${code}: the application exited with an error`;
  }
}

const has = (text: string, re: RegExp): boolean => re.test(text);

/** How to describe the pods behind the resource (pod events and last state live on pods, not on workloads). */
function describePods(f: Facts): string {
  if (f.kind === 'Pod' || f.kind === 'Node') return `${f.kubectl} describe ${f.ref}`;
  if (f.appSelector !== undefined) return `${f.kubectl} describe pods -l ${f.appSelector}`;
  return `${f.kubectl} describe pod <pod of ${f.ref}> (list them with ${f.kubectl} get pods)`;
}

/** How to read the logs of the resource; nodes have no `kubectl logs`, their agents log to the journal. */
function logsCmd(f: Facts, flags: string): string {
  return f.kind === 'Node'
    ? `journalctl -u kubelet -u containerd --since "-30min" on node ${f.name}`
    : `${f.kubectl} logs ${f.ref} ${flags}`;
}

const RULES: Readonly<Record<SignalType, Rule>> = {
  OOMKilled: {
    base: 0.85,
    run(f, inc) {
      const evidence: string[] = [];
      if (f.reason !== undefined && /oomkilled/i.test(f.reason)) evidence.push(`reason=${f.reason}`);
      if (f.exitCode === 137) evidence.push('exit code 137 (SIGKILL)');
      if (has(f.description.toLowerCase(), /oom|out of memory/))
        evidence.push('the source reports an out-of-memory kill');
      if (f.correlated.has('HighMemory')) evidence.push('a correlated HighMemory signal');
      const limit = f.memoryLimit !== undefined ? ` (limit ${f.memoryLimit})` : '';
      const mem = memoryChange(f, 1.5);
      const target = workloadTarget(f);
      const actions: SuggestedAction[] = [];
      if (target !== undefined) {
        actions.push({
          name: 'raise-memory-limit',
          action: 'AdjustResources',
          description: `Raise the memory limit of ${f.resource} ${mem.text}`,
          params: { ...target, ...(f.container ? { container: f.container } : {}), ...mem.params },
        });
        actions.push(restartAction(target, 'Roll the pods so they start with the new limit'));
      } else {
        actions.push(
          notify(f, inc, `${f.resource} is OOMKilled; raise the memory limit of its owning workload ${mem.text}.`),
        );
      }
      return {
        rootCause:
          `Containers of ${f.resource}${limit} use more memory than their limit and are killed by the kernel OOM ` +
          'killer. Either the limit is below the working set the workload needs under current load, or the ' +
          'process leaks memory until it hits the limit.',
        evidence,
        recommendations: [
          `Raise the memory limit of ${f.resource} ${mem.text}${f.container ? ` (container ${f.container})` : ''} and set the request close to the observed working set.`,
          `Confirm the kill and see what ran before it: ${describePods(f)} (Last State: OOMKilled) and ${logsCmd(f, '--previous')}.`,
          'Tell a leak from a load spike: plot container_memory_working_set_bytes against the limit over 24h; a steady climb between restarts is a leak and needs a heap profile, not another raise.',
          'Make the runtime respect the container limit (-XX:MaxRAMPercentage for the JVM, --max-old-space-size for Node.js, GOMEMLIMIT for Go) so it collects garbage before the kernel kills it.',
        ],
        actions,
      };
    },
  },

  CrashLoopBackOff: {
    base: 0.6,
    run(f, inc) {
      const evidence: string[] = [];
      if (f.reason !== undefined && /crashloop/i.test(f.reason)) evidence.push(`reason=${f.reason}`);
      if (f.exitCode !== undefined) evidence.push(`exit code ${f.exitCode}`);
      if (has(f.description.toLowerCase(), /back-?off|crash ?loop|restarting failed container/))
        evidence.push('the source reports a restart back-off');
      if (f.correlated.has('OOMKilled')) evidence.push('a correlated OOMKilled signal');
      let cause: string;
      if (f.exitCode !== undefined)
        cause = `The last container exit points at the cause: ${exitCodeMeaning(f.exitCode)}.`;
      else if (f.correlated.has('OOMKilled'))
        cause = 'A correlated OOMKilled signal shows the container is killed for exceeding its memory limit.';
      else
        cause =
          'The usual causes are a start-up error (bad configuration, a missing Secret, ConfigMap or environment ' +
          'variable, an unreachable dependency), a bad release, or a liveness probe that kills a slow-starting container.';
      const target = workloadTarget(f);
      const actions: SuggestedAction[] = [];
      if (target !== undefined) {
        actions.push(
          restartAction(
            target,
            'Rolling restart: clears transient start-up failures such as a dependency that was down',
          ),
        );
        if (f.kind === 'Deployment')
          actions.push(
            rollbackAction(target, 'If pods still crash after the restart, roll back to the previous revision'),
          );
        else actions.push(notify(f, inc, `${f.resource} is crash-looping; check the previous container logs.`));
      } else if (f.kind === 'Pod' && isK8sName(f.name)) {
        actions.push({
          name: 'recreate-pod',
          action: 'DeletePod',
          description: 'Delete the pod so its controller recreates it with a fresh start',
          params: { pod: f.name, ...(f.ns ? { namespace: f.ns } : {}) },
        });
      } else actions.push(notify(f, inc, `${f.resource} is crash-looping; check the previous container logs.`));
      return {
        rootCause: `The container of ${f.resource} starts and exits repeatedly, so the kubelet backs off restarting it (CrashLoopBackOff). ${cause}`,
        evidence,
        recommendations: [
          `Read why the last run died: ${logsCmd(f, f.container ? `--previous -c ${f.container}` : '--previous')}, and the pod events: ${describePods(f)}.`,
          f.kind === 'Deployment'
            ? `If the crashes started with the latest rollout, roll back (${f.kubectl} rollout undo ${f.ref}) and diff image, env and config between the two revisions (${f.kubectl} rollout history ${f.ref}).`
            : `Compare the failing spec with the last revision that ran (image, env, config) and revert the difference.`,
          `Check that every Secret, ConfigMap and dependency the container needs at start-up exists in namespace ${f.namespace} and is reachable.`,
          'If the liveness probe kills a slow start, add a startupProbe or raise initialDelaySeconds / failureThreshold.',
        ],
        actions,
      };
    },
  },

  ImagePullBackOff: {
    base: 0.8,
    run(f, inc) {
      const evidence: string[] = [];
      if (f.reason !== undefined && /imagepull|errimagepull|invalidimagename/i.test(f.reason))
        evidence.push(`reason=${f.reason}`);
      if (f.image !== undefined) evidence.push(`image ${f.image}`);
      const d = f.text;
      let cause = '';
      if (/invalidimagename/.test(d)) cause = 'the image reference is malformed';
      else if (/not found|manifest unknown|does not exist|no such manifest/.test(d))
        cause = 'the image or tag does not exist in the registry (mistyped tag, or the image was never pushed)';
      else if (/unauthorized|denied|authentication|forbidden|401|403/.test(d))
        cause = 'the registry refused the credentials: the imagePullSecret is missing, wrong or expired';
      else if (/toomanyrequests|rate limit|429/.test(d))
        cause = 'the registry is rate limiting pulls (for example Docker Hub anonymous pull limits)';
      else if (/timeout|i\/o|no such host|connection refused|dial tcp|tls/.test(d))
        cause = 'the nodes cannot reach the registry (DNS, egress firewall, proxy or a registry outage)';
      if (cause !== '') evidence.push('the pull error names the cause');
      const image = f.image ?? '<image>';
      const actions: SuggestedAction[] = [];
      const target = workloadTarget(f);
      if (f.kind === 'Deployment' && target !== undefined)
        actions.push(
          rollbackAction(target, 'Roll back to the last revision whose image pulled; old pods keep serving meanwhile'),
        );
      actions.push(notify(f, inc, `${f.resource} cannot pull its image; fix the image reference or pull secret.`));
      return {
        rootCause:
          `The kubelet cannot pull the image of ${f.resource}${f.image ? ` (${f.image})` : ''}: ` +
          (cause !== ''
            ? `${cause}.`
            : 'usually a mistyped or never-pushed tag, a missing or expired imagePullSecret, or a registry the nodes cannot reach.'),
        evidence,
        recommendations: [
          `Read the exact pull error in the pod events: ${describePods(f)} (Failed to pull image ...).`,
          `Check that the reference exists: crane manifest ${image} (or docker manifest inspect ${image}).`,
          `Check the imagePullSecrets of the pod spec and its service account in namespace ${f.namespace}, and that the registry credentials have not expired.`,
          f.kind === 'Deployment'
            ? `Roll back (${f.kubectl} rollout undo ${f.ref}) to unblock the rollout, then redeploy with a fixed image reference; pin images by digest to avoid this class of failure.`
            : 'Fix the image reference or pull secret and let the controller retry; pin images by digest to avoid this class of failure.',
        ],
        actions,
      };
    },
  },

  PodNotReady: {
    base: 0.5,
    run(f, inc) {
      const evidence: string[] = [];
      const d = f.text;
      const scheduling = /unschedulable|insufficient|didn't match|taint|pending|failedscheduling/.test(d);
      const probe = /readiness probe|readiness/.test(d);
      const crashing = (['CrashLoopBackOff', 'OOMKilled', 'ImagePullBackOff'] as SignalType[]).filter((t) =>
        f.correlated.has(t),
      );
      if (f.reason !== undefined) evidence.push(`reason=${f.reason}`);
      if (scheduling) evidence.push('the source reports a scheduling problem');
      if (probe) evidence.push('the source reports a failing readiness probe');
      if (crashing.length > 0) evidence.push(`correlated ${crashing.join(', ')} signal(s)`);
      let cause: string;
      if (scheduling)
        cause =
          'Its pods cannot be scheduled: not enough CPU or memory on the nodes, a node selector or affinity no node ' +
          'matches, an untolerated taint, or an unbound PersistentVolumeClaim.';
      else if (crashing.length > 0)
        cause = `Its containers are not starting cleanly (${crashing.join(', ')}), so the pods never become Ready.`;
      else if (probe)
        cause =
          'The readiness probe fails, so the pods are taken out of Service endpoints; often the probe checks a ' +
          'dependency that is down or the application is still warming up.';
      else
        cause =
          'Either the readiness probe fails (the application or a dependency it checks is unhealthy) or the pods are ' +
          'stuck Pending (insufficient capacity, node selector or taints, unbound volume).';
      const actions: SuggestedAction[] = [];
      const target = workloadTarget(f);
      if (target !== undefined && !scheduling)
        actions.push(restartAction(target, 'Rolling restart to replace pods stuck in a not-ready state'));
      else if (f.kind === 'Pod' && isK8sName(f.name) && !scheduling)
        actions.push({
          name: 'recreate-pod',
          action: 'DeletePod',
          description: 'Delete the pod so its controller replaces it',
          params: { pod: f.name, ...(f.ns ? { namespace: f.ns } : {}) },
        });
      actions.push(notify(f, inc, `${f.resource} has pods that are not Ready.`));
      return {
        rootCause: `Pods of ${f.resource} are not Ready and receive no traffic. ${cause}`,
        evidence,
        recommendations: [
          `Look at the pod conditions and events: ${describePods(f)} (Readiness probe failed / FailedScheduling).`,
          `For Pending pods, check capacity and placement: ${f.kubectl} get events --field-selector reason=FailedScheduling, and kubectl describe nodes (Allocated resources).`,
          "Call the readiness endpoint from inside the pod and keep the probe shallow: it should report the pod's own health, not its dependencies'.",
          'If pods only need longer to warm up, raise the probe initialDelaySeconds or add a startupProbe instead of restarting them.',
        ],
        actions,
      };
    },
  },

  DeploymentFailing: {
    base: 0.6,
    run(f, inc) {
      const evidence: string[] = [];
      const d = f.text;
      if (/progressdeadlineexceeded|progress deadline/.test(d)) evidence.push('progress deadline exceeded');
      if (/quota|forbidden|exceeded/.test(d)) evidence.push('the source mentions a quota or admission failure');
      if (f.alertname !== undefined && /Rollout|Mismatch|NotRolledOut/.test(f.alertname))
        evidence.push(`alert ${f.alertname}`);
      const blockers = (['ImagePullBackOff', 'CrashLoopBackOff', 'OOMKilled', 'PodNotReady'] as SignalType[]).filter(
        (t) => f.correlated.has(t),
      );
      if (blockers.length > 0) evidence.push(`correlated ${blockers.join(', ')} signal(s)`);
      const cause =
        blockers.length > 0
          ? `The new pods fail with ${blockers.join(', ')}, which blocks the rollout.`
          : /quota|forbidden|exceeded/.test(d)
            ? 'The new ReplicaSet cannot create pods: a ResourceQuota, LimitRange or admission policy rejects them.'
            : 'The new revision either fails to start (image pull, crash, readiness) or cannot be scheduled (quota, capacity).';
      const actions: SuggestedAction[] = [];
      const target = workloadTarget(f);
      if (f.kind === 'Deployment' && target !== undefined)
        actions.push(rollbackAction(target, 'Return to the last revision that rolled out completely'));
      actions.push(notify(f, inc, `The rollout of ${f.resource} is stuck.`));
      return {
        rootCause: `The rollout of ${f.resource} is not progressing: the desired replicas are not becoming available. ${cause}`,
        evidence,
        recommendations: [
          `See where the rollout stands: ${f.kubectl} rollout status ${f.ref} and ${f.kubectl} get rs,pods -o wide.`,
          `Read the events of the newest ReplicaSet and its pods (${f.kubectl} describe ${f.ref}) for image, crash or scheduling errors.`,
          `Check quota and limits in namespace ${f.namespace}: ${f.kubectl} describe resourcequota,limitrange.`,
          f.kind === 'Deployment'
            ? `If the new revision is at fault, roll back (${f.kubectl} rollout undo ${f.ref}) and fix it before the next rollout.`
            : 'If the new revision is at fault, revert the spec change in source control and re-apply it.',
        ],
        actions,
      };
    },
  },

  HighLatency: {
    base: 0.55,
    run(f, inc) {
      const evidence: string[] = [];
      const d = f.text;
      if (/p9\d|percentile|quantile|\d+(\.\d+)?\s?(ms|s|seconds)\b/.test(d))
        evidence.push('the source quantifies latency');
      const route = labelOf(f.labels, 'route', 'handler', 'path', 'endpoint', 'uri');
      if (route !== undefined) evidence.push(`endpoint ${route}`);
      if (f.correlated.has('HighCPU')) evidence.push('a correlated HighCPU signal');
      if (f.correlated.has('HighErrorRate')) evidence.push('a correlated HighErrorRate signal');
      let cause =
        'Typical causes are CPU saturation or throttling, too few replicas for the current load, or a slow ' +
        'downstream dependency (database, cache, external API).';
      if (f.correlated.has('HighCPU'))
        cause = 'A correlated HighCPU signal points at CPU saturation: the replicas cannot keep up with the load.';
      else if (f.hasRelated)
        cause += ' Other open incidents in the namespace suggest a dependency problem (see the cascade analysis).';
      const actions: SuggestedAction[] = [];
      if (f.kind === 'Deployment' && workloadTarget(f) !== undefined)
        actions.push({
          name: 'scale-out',
          action: 'ScaleDeployment',
          description: 'Add two replicas (never beyond 20) to spread the load',
          params: { ...workloadTarget(f), replicasDelta: 2, maxReplicas: 20 },
        });
      actions.push(notify(f, inc, `${f.resource} is answering slower than its latency objective.`));
      return {
        rootCause: `Requests served by ${f.resource}${route ? ` (${route})` : ''} are slower than their threshold. ${cause}`,
        evidence,
        recommendations: [
          f.kind === 'Deployment'
            ? `Scale out ${f.resource} by two replicas (${f.kubectl} scale ${f.ref} --replicas=<current+2>) or raise the HPA maximum if it is pinned at its ceiling.`
            : `Add capacity for ${f.resource} or move load away from it.`,
          'Check CPU throttling and saturation: rate(container_cpu_cfs_throttled_periods_total[5m]) / rate(container_cpu_cfs_periods_total[5m]) and CPU usage against limits.',
          'Find the slow span in traces or per-dependency latency metrics (database, cache, upstream HTTP) before tuning the service itself.',
          `Check whether the latency started with a rollout: ${f.kubectl} rollout history ${f.ref}.`,
        ],
        actions,
      };
    },
  },

  HighErrorRate: {
    base: 0.55,
    run(f, inc) {
      const evidence: string[] = [];
      const code = labelOf(f.labels, 'code', 'status', 'status_code', 'response_code');
      const d = `${f.text} ${code ?? ''}`;
      if (code !== undefined && /^5\d\d$|^5xx$/i.test(code)) evidence.push(`status ${code}`);
      if (/\b5\d\d\b|5xx|exception|\d+(\.\d+)?\s?%/.test(f.text)) evidence.push('the source quantifies the failures');
      const upstream = (['OOMKilled', 'CrashLoopBackOff', 'PodNotReady', 'HighLatency'] as SignalType[]).filter((t) =>
        f.correlated.has(t),
      );
      if (upstream.length > 0) evidence.push(`correlated ${upstream.join(', ')} signal(s)`);
      let cause: string;
      if (/\b503\b/.test(d)) cause = '503s mean no ready endpoints or an overloaded service shedding load.';
      else if (/\b502\b/.test(d))
        cause = '502s mean the proxy lost the connection to the pods, typically while they restart.';
      else if (/\b504\b/.test(d)) cause = '504s mean upstream timeouts: a slow dependency or saturated pods.';
      else if (upstream.length > 0)
        cause = `Correlated ${upstream.join(', ')} signals show the pods themselves are unhealthy.`;
      else
        cause =
          'Server errors usually come from a bad release, a failing or exhausted dependency (database connections, ' +
          'upstream timeouts), or pods restarting or not ready.';
      const actions: SuggestedAction[] = [];
      const target = workloadTarget(f);
      if (target !== undefined) {
        actions.push(
          restartAction(
            target,
            'Rolling restart to drop bad in-process state (stuck connection pools, poisoned caches)',
          ),
        );
        if (f.kind === 'Deployment')
          actions.push(
            rollbackAction(target, 'If the errors began with the latest rollout, roll back to the previous revision'),
          );
      }
      actions.push(notify(f, inc, `${f.resource} is failing an elevated share of requests.`));
      return {
        rootCause: `${f.resource} is returning an elevated share of failed requests. ${cause}`,
        evidence,
        recommendations: [
          'Break the errors down by status code and route to see whether one endpoint or everything fails.',
          `Read the application errors: ${logsCmd(f, '--since=15m')}, filtered for errors and exceptions.`,
          f.kind === 'Deployment'
            ? `Compare the start of the errors with the last rollout (${f.kubectl} rollout history ${f.ref}); roll back if they match.`
            : 'Compare the start of the errors with the last change to the workload and revert it if they match.',
          'Check the health and connection limits of its dependencies (database pool saturation, upstream 5xx and timeouts).',
        ],
        actions,
      };
    },
  },

  HighCPU: {
    base: 0.7,
    run(f, inc) {
      const evidence: string[] = [];
      const throttled = /throttl/.test(f.text) || (f.alertname !== undefined && /Throttling/i.test(f.alertname));
      if (throttled) evidence.push('CPU throttling reported');
      if (/\d+(\.\d+)?\s?%|\bcores?\b/.test(f.text)) evidence.push('the source quantifies CPU usage');
      if (f.correlated.has('HighLatency')) evidence.push('a correlated HighLatency signal');
      const actions: SuggestedAction[] = [];
      const target = workloadTarget(f);
      if (throttled && target !== undefined)
        actions.push({
          name: 'raise-cpu-limit',
          action: 'AdjustResources',
          description: `Raise the CPU limit of ${f.resource} by 50% so the CFS quota stops throttling it`,
          params: { ...target, ...(f.container ? { container: f.container } : {}), cpuLimitIncreasePercent: 50 },
        });
      if (f.kind === 'Deployment' && target !== undefined)
        actions.push({
          name: 'scale-out',
          action: 'ScaleDeployment',
          description: 'Add two replicas (never beyond 20) to spread the load',
          params: { ...target, replicasDelta: 2, maxReplicas: 20 },
        });
      if (actions.length === 0) actions.push(notify(f, inc, `${f.resource} is running hot on CPU.`));
      return {
        rootCause: throttled
          ? `Containers of ${f.resource} hit their CPU limit and are throttled by the CFS quota, which stalls requests even when the node has idle CPU.`
          : `${f.resource} is using CPU close to its limit: load has grown beyond what the current replicas serve, or a code path (hot loop, garbage-collection pressure, retry storm) burns CPU.`,
        evidence,
        recommendations: [
          throttled
            ? `Raise the CPU limit of ${f.resource} (or remove it and rely on requests) so the CFS quota stops throttling it.`
            : `Scale out ${f.resource} or let an HPA on CPU do it; check it is not pinned at maxReplicas.`,
          `Compare usage with requests and limits: ${f.kubectl} top pods and container_cpu_usage_seconds_total against kube_pod_container_resource_limits.`,
          'Profile a hot pod (pprof, async-profiler, perf) if usage grew without a matching growth in traffic.',
          'Look for retry storms or tight loops in the logs; they show up as CPU growth with flat successful traffic.',
        ],
        actions,
      };
    },
  },

  HighMemory: {
    base: 0.7,
    run(f, inc) {
      const evidence: string[] = [];
      if (f.memoryLimit !== undefined) evidence.push(`memory limit ${f.memoryLimit}`);
      if (/\d+(\.\d+)?\s?%|[0-9.]+\s?[kmgt]i?b\b/.test(f.text)) evidence.push('the source quantifies memory usage');
      if (f.correlated.has('OOMKilled')) evidence.push('a correlated OOMKilled signal');
      const mem = memoryChange(f, 1.25);
      const target = workloadTarget(f);
      const actions: SuggestedAction[] = [];
      if (target !== undefined)
        actions.push({
          name: 'raise-memory-limit',
          action: 'AdjustResources',
          description: `Raise the memory limit of ${f.resource} ${mem.text} before the kernel OOM-kills it`,
          params: { ...target, ...(f.container ? { container: f.container } : {}), ...mem.params },
        });
      actions.push(notify(f, inc, `${f.resource} is close to its memory limit.`));
      return {
        rootCause:
          `Memory use of ${f.resource} is close to its limit${f.memoryLimit ? ` (${f.memoryLimit})` : ''}; when it reaches ` +
          'the limit the kernel OOM-kills the container. Growth without matching load growth points at a leak or an unbounded cache.',
        evidence,
        recommendations: [
          `Raise the memory limit of ${f.resource} ${mem.text} to restore headroom, and keep the request near the working set.`,
          'Check the trend of container_memory_working_set_bytes since the last restart: a steady climb is a leak or an unbounded cache; a plateau means the limit is simply too low.',
          'Bound in-process caches and set runtime heap limits (-XX:MaxRAMPercentage, --max-old-space-size, GOMEMLIMIT) below the container limit.',
          'Use the VerticalPodAutoscaler in recommendation mode to size requests and limits from observed usage.',
        ],
        actions,
      };
    },
  },

  DiskPressure: {
    base: 0.75,
    run(f, inc) {
      const evidence: string[] = [];
      const mount = labelOf(f.labels, 'mountpoint', 'device', 'persistentvolumeclaim');
      const inodes = /inode/.test(f.text);
      if (f.kind === 'Node') evidence.push('the signal is on a node');
      if (mount !== undefined) evidence.push(`filesystem ${mount}`);
      if (/\d+(\.\d+)?\s?%|inode|[0-9.]+\s?[kmgt]i?b\b/.test(f.text)) evidence.push('the source quantifies disk usage');
      const what = inodes ? 'inodes' : 'disk space';
      const actions: SuggestedAction[] = [];
      if (f.kind === 'Node') {
        actions.push({
          name: 'clean-node-disk',
          action: 'RunScript',
          description:
            'Remove regenerable data on the node: rotated container logs, old journal entries, unused images',
          params: { script: NODE_DISK_CLEANUP_SCRIPT, timeout: '5m' },
        });
      }
      actions.push(notify(f, inc, `${f.resource} is running out of ${what}${mount ? ` on ${mount}` : ''}.`));
      const rootCause =
        f.kind === 'Node'
          ? `Node ${f.name} is running out of ${what}${mount ? ` on ${mount}` : ''}: the kubelet reports DiskPressure, evicts pods and stops admitting new ones. The usual culprits are container logs, unused images and large emptyDir volumes.`
          : `A volume used by ${f.resource}${mount ? ` (${mount})` : ''} is running out of ${what}; writes will fail once it is full.`;
      const recommendations =
        f.kind === 'Node'
          ? [
              `Check the node condition and evictions: kubectl describe node ${f.name} (Conditions, Events).`,
              'Free space safely: crictl rmi --prune for unused images, journalctl --vacuum-size for the journal, and remove rotated logs under /var/log/pods.',
              `Find the pods writing most to the node: ${what === 'inodes' ? 'count files per directory (find | cut | sort | uniq -c)' : 'du -sh /var/lib/kubelet/pods/*/volumes/*'}, and set ephemeral-storage requests and limits on them.`,
              "Tune kubelet image garbage collection (imageGCHighThresholdPercent) or grow the node's root volume if usage is legitimate.",
            ]
          : [
              `Check volume usage from inside a pod: ${f.kubectl} exec ${f.ref} -- df -h${inodes ? ' -i' : ''}.`,
              'Expand the PersistentVolumeClaim if its StorageClass allows volume expansion (allowVolumeExpansion: true).',
              'Apply retention: delete old data, logs or WAL segments the application no longer needs.',
              'Alert on the growth rate (predict_linear on kubelet_volume_stats_available_bytes) to act before the volume fills.',
            ];
      return { rootCause, evidence, recommendations, actions };
    },
  },

  NetworkUnavailable: {
    base: 0.5,
    run(f, inc) {
      const evidence: string[] = [];
      if (f.reason !== undefined && /network|cni/i.test(f.reason)) evidence.push(`reason=${f.reason}`);
      if (/cni|unreachable|dns|no route|connection refused|timeout|networkpluginnotready/.test(f.text))
        evidence.push('the source names the connectivity failure');
      if (f.correlated.has('PodNotReady')) evidence.push('a correlated PodNotReady signal');
      const actions: SuggestedAction[] = [];
      if (f.kind !== 'Node' && f.appSelector !== undefined)
        actions.push({
          name: 'recreate-pods',
          action: 'DeletePod',
          description: `Recreate the pods selected by ${f.appSelector} so they get fresh network sandboxes, possibly on healthier nodes`,
          params: { labelSelector: f.appSelector, ...(f.ns ? { namespace: f.ns } : {}) },
        });
      else if (f.kind === 'Pod' && isK8sName(f.name))
        actions.push({
          name: 'recreate-pod',
          action: 'DeletePod',
          description: 'Recreate the pod so it gets a fresh network sandbox',
          params: { pod: f.name, ...(f.ns ? { namespace: f.ns } : {}) },
        });
      actions.push(notify(f, inc, `${f.resource} has lost network connectivity.`));
      const node = f.kind === 'Node';
      return {
        rootCause: node
          ? `Node ${f.name} has lost network connectivity or its CNI plugin is not ready (NetworkUnavailable / NetworkPluginNotReady): pods on it cannot reach Services and the node may be marked unreachable.`
          : `Pods of ${f.resource} cannot reach the network or their dependencies: a CNI problem on their node, a NetworkPolicy blocking the traffic, or DNS failures.`,
        evidence,
        recommendations: [
          node
            ? `Check the CNI and kube-proxy pods on the node: kubectl -n kube-system get pods -o wide --field-selector spec.nodeName=${f.name}.`
            : `Check which node the pods run on and whether the CNI pods there are healthy: ${f.kubectl} get pods -o wide, then kubectl -n kube-system get pods -o wide.`,
          node
            ? `If the node stays unreachable, cordon and drain it (kubectl cordon ${f.name}; kubectl drain ${f.name} --ignore-daemonsets --delete-emptydir-data) so its pods move elsewhere.`
            : `Review the NetworkPolicies that select these pods: ${f.kubectl} get networkpolicy.`,
          `Test DNS and Service reachability from the namespace: kubectl -n ${f.namespace} run netcheck --rm -it --restart=Never --image=busybox:1.36 -- nslookup kubernetes.default.`,
          'Check cloud-level networking for the affected nodes (security groups, route tables, ENI/IP exhaustion).',
        ],
        actions,
      };
    },
  },

  Custom: {
    base: 0.3,
    run(f, inc) {
      const evidence: string[] = [];
      if (f.alertname !== undefined) evidence.push(`alert ${f.alertname}`);
      const what = f.alertname !== undefined ? ` (alert ${f.alertname})` : '';
      return {
        rootCause:
          f.description !== ''
            ? `No built-in rule covers this signal on ${f.resource}${what}. The source reports: "${f.description}".`
            : `No built-in rule covers this signal on ${f.resource}${what}, and the source gave no description, so the cause cannot be determined from the signal alone.`,
        evidence,
        recommendations: [
          `Start with the workload's recent events and logs: ${f.kubectl} describe ${f.ref} and ${logsCmd(f, '--since=30m')}.`,
          `List recent changes in namespace ${f.namespace} (rollouts, ConfigMap and Secret updates) and check whether one lines up with the start of the incident.`,
          f.alertname !== undefined
            ? `Map alert ${f.alertname} to a specific signal type in Foghorn's alert mapping so future occurrences get a targeted analysis.`
            : 'Send a specific signal type with future signals so they get a targeted analysis.',
        ],
        actions: [notify(f, inc, f.description !== '' ? f.description : `${f.resource} needs investigation.`)],
      };
    },
  },
};

// Node-side cleanup that only removes data the kubelet or container runtime regenerates.
const NODE_DISK_CLEANUP_SCRIPT = `#!/bin/sh
set -eu
HOST=/host
df -h "$HOST/var/lib" "$HOST/var/log"
find "$HOST/var/log/pods" -type f -name '*.log.*' -mmin +60 -print -delete
chroot "$HOST" journalctl --vacuum-size=500M
chroot "$HOST" crictl rmi --prune
df -h "$HOST/var/lib" "$HOST/var/log"
`;

// cause → effects it commonly produces, for the cascade analysis.
const LEADS_TO: Readonly<Partial<Record<SignalType, readonly SignalType[]>>> = {
  OOMKilled: ['CrashLoopBackOff', 'PodNotReady', 'HighErrorRate', 'HighLatency', 'DeploymentFailing'],
  HighMemory: ['OOMKilled'],
  CrashLoopBackOff: ['PodNotReady', 'DeploymentFailing', 'HighErrorRate'],
  ImagePullBackOff: ['DeploymentFailing', 'PodNotReady'],
  PodNotReady: ['HighErrorRate', 'HighLatency', 'DeploymentFailing'],
  DeploymentFailing: ['PodNotReady'],
  HighCPU: ['HighLatency', 'HighErrorRate'],
  HighLatency: ['HighErrorRate'],
  DiskPressure: ['PodNotReady', 'CrashLoopBackOff'],
  NetworkUnavailable: ['PodNotReady', 'HighErrorRate', 'HighLatency', 'CrashLoopBackOff'],
};

const leadsTo = (cause: SignalType, effect: SignalType): boolean => LEADS_TO[cause]?.includes(effect) ?? false;

// ---------------------------------------------------------------------------------------------
// Assembly
// ---------------------------------------------------------------------------------------------

const EVIDENCE_BONUS = 0.05;
const EVIDENCE_BONUS_MAX = 0.15;
const NO_DESCRIPTION_PENALTY = 0.1;

function calibrate(base: number, evidence: number, hasDescription: boolean): number {
  let c = base + Math.min(EVIDENCE_BONUS_MAX, evidence * EVIDENCE_BONUS);
  if (!hasDescription) c -= NO_DESCRIPTION_PENALTY;
  c = Math.min(0.95, Math.max(0.05, c));
  return Math.round(c * 100) / 100;
}

/** "3m", "45s", "1h5m" for a millisecond distance. */
function span(ms: number): string {
  const s = Math.round(Math.abs(ms) / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.round(s / 60);
  return m < 60 ? `${m}m` : `${Math.floor(m / 60)}h${m % 60 ? `${m % 60}m` : ''}`;
}

function relativeTo(at: Date, ref: Date): string {
  const d = at.getTime() - ref.getTime();
  if (Number.isNaN(d)) return 'time unknown';
  if (Math.abs(d) < 1000) return 'same time';
  return `${span(d)} ${d < 0 ? 'before' : 'after'}`;
}

function cascadeAnalysis(ctx: AnalysisContext): string {
  const { incident } = ctx;
  const related = ctx.related ?? [];
  if (related.length === 0) return '';
  const list = related
    .map((r) => `${r.name} (${r.resource}, ${r.signalType}, ${relativeTo(r.detectedAt, incident.detectedAt)})`)
    .join(', ');
  const parts = [
    `${related.length} other open incident${related.length === 1 ? '' : 's'} in namespace ${incident.namespace}: ${list}.`,
  ];

  const self = {
    name: incident.name,
    resource: incident.resource,
    signalType: incident.signalType,
    at: incident.detectedAt,
  };
  const all = [
    self,
    ...related.map((r) => ({ name: r.name, resource: r.resource, signalType: r.signalType, at: r.detectedAt })),
  ];
  const timed = all.filter((e) => !Number.isNaN(e.at.getTime()));
  const first = timed.reduce<(typeof all)[number] | undefined>(
    (a, e) => (a === undefined || e.at.getTime() < a.at.getTime() ? e : a),
    undefined,
  );
  if (first !== undefined) {
    if (first === self) {
      const effects = related.filter((r) => leadsTo(incident.signalType, r.signalType));
      parts.push(
        `This incident was detected first, so ${incident.resource} is the likely origin` +
          (effects.length > 0
            ? `; ${incident.signalType} commonly leads to ${[...new Set(effects.map((r) => r.signalType))].join(' and ')}, as seen in ${effects.map((r) => r.name).join(', ')}.`
            : '.'),
      );
    } else {
      const causal = leadsTo(first.signalType, incident.signalType);
      parts.push(
        `${first.name} on ${first.resource} (${first.signalType}) came first and is the likely origin` +
          (causal
            ? `; ${first.signalType} commonly leads to ${incident.signalType}, so this incident is probably a downstream effect.`
            : '; check whether this incident depends on it.'),
      );
    }
  }
  return parts.join(' ');
}

function blastRadius(ctx: AnalysisContext): string {
  const { incident } = ctx;
  const related = ctx.related ?? [];
  const correlated = incident.correlatedSignals ?? [];
  const parts: string[] = [];
  if (related.length > 0) {
    const resources = [...new Set([incident.resource, ...related.map((r) => r.resource)])];
    parts.push(
      `${resources.length} resource${resources.length === 1 ? '' : 's'} in namespace ${incident.namespace} currently ${resources.length === 1 ? 'has' : 'have'} open incidents (${resources.join(', ')}); the problem is not confined to ${incident.resource}.`,
    );
  }
  if (correlated.length > 0) {
    const types = [...new Set(correlated.map((s) => s.signalType))];
    parts.push(
      `${correlated.length} further signal${correlated.length === 1 ? '' : 's'} joined this incident (${types.join(', ')}), so ${incident.resource} shows more than one symptom.`,
    );
  }
  if (parts.length > 0) parts.push(`Risk score ${incident.riskScore}/100.`);
  return parts.join(' ');
}

function runbookRecommendation(ctx: AnalysisContext): string | undefined {
  const runbooks = ctx.runbooks ?? [];
  if (runbooks.length === 0) return undefined;
  const category = categoryForSignal(ctx.incident.signalType);
  const ordered = [
    ...runbooks.filter((r) => r.category === category),
    ...runbooks.filter((r) => r.category !== category),
  ];
  const [first] = ordered;
  const sentence = first.description.split(/(?<=\.)\s/)[0]?.trim() ?? '';
  if (ordered.length === 1)
    return first.category === category
      ? `Runbook ${first.name} covers this case${sentence ? `: ${sentence}` : '.'}`
      : `Candidate runbook ${first.name} (category ${first.category})${sentence ? `: ${sentence}` : '.'}`;
  const names = ordered.slice(0, 3).map((r) => r.name);
  return `Matching runbooks: ${names.join(', ')}${ordered.length > 3 ? ` and ${ordered.length - 3} more` : ''}; ${first.name} fits best${sentence ? ` (${sentence})` : ''}.`;
}

/** Keeps only actions whose params the runbook action schema accepts (a bad suggestion is worse than none). */
function validActions(actions: SuggestedAction[]): SuggestedAction[] {
  const seen = new Set<string>();
  return actions.filter((a) => {
    const key = `${a.action}:${JSON.stringify(a.params)}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return actionSchema.safeParse({ type: a.action, params: a.params, description: a.description }).success;
  });
}

/** The built-in rules analysis of one incident. Pure and deterministic. */
export function analyzeWithRules(ctx: AnalysisContext): Insight {
  const { incident } = ctx;
  const f = factsOf(ctx);
  const rule = RULES[incident.signalType] ?? RULES.Custom;
  const result = rule.run(f, incident.name);
  const confidence = calibrate(rule.base, result.evidence.length, f.description !== '');

  const runbook = runbookRecommendation(ctx);
  const recommendations = [...result.recommendations.slice(0, runbook ? 4 : 5), ...(runbook ? [runbook] : [])];

  const cascade = cascadeAnalysis(ctx);
  const correlated = incident.correlatedSignals ?? [];
  const related = ctx.related ?? [];

  const analysis = [
    `${incident.resource} in namespace ${incident.namespace} reports ${incident.signalType} ` +
      `(severity ${incident.severity ?? 'unrated'}, risk ${incident.riskScore}/100).`,
    f.description !== '' ? `Source description: "${f.description}".` : 'The source gave no description.',
    result.rootCause,
    result.evidence.length > 0 ? `Supporting evidence: ${result.evidence.join('; ')}.` : '',
    correlated.length > 0
      ? `${correlated.length} correlated signal${correlated.length === 1 ? '' : 's'}: ${correlated.map((s) => s.signalType).join(', ')}.`
      : '',
    related.length > 0
      ? `${related.length} related open incident${related.length === 1 ? '' : 's'} in the namespace (see cascade analysis).`
      : '',
    `Confidence ${Math.round(confidence * 100)}%.`,
  ]
    .filter((s) => s !== '')
    .join(' ');

  return {
    analysis,
    confidence,
    recommendations,
    suggestedActions: validActions(result.actions),
    logAnalysis: '',
    gitOpsContext: '',
    cascadeAnalysis: cascade,
    blastRadiusPrediction: blastRadius(ctx),
    rootCause: result.rootCause,
    recommendation: recommendations[0] ?? '',
    relatedEvents: [
      ...related.map((r) => r.name),
      ...correlated.map((s) =>
        s.description.trim() !== ''
          ? s.description.trim()
          : `${s.signalType} signal${Number.isNaN(s.at.getTime()) ? '' : ` at ${s.at.toISOString()}`}`,
      ),
    ],
  };
}
