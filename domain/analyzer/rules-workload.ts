import type { SignalType } from '../vocabulary';
import { memoryChange, notify, restartAction, rollbackAction, workloadTarget } from './actions';
import { isK8sName } from './facts';
import { describePods, exitCodeMeaning, has, logsCmd, type Rule } from './rule';
import type { SuggestedAction } from './types';

/** Pods and their controllers failing to start or stay up. */
export const WORKLOAD_RULES: Readonly<
  Record<
    Extract<SignalType, 'OOMKilled' | 'CrashLoopBackOff' | 'ImagePullBackOff' | 'PodNotReady' | 'DeploymentFailing'>,
    Rule
  >
> = {
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
};
