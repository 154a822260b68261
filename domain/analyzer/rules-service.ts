import type { SignalType } from '../vocabulary';
import { memoryChange, notify, restartAction, rollbackAction, workloadTarget } from './actions';
import { labelOf } from './facts';
import { logsCmd, type Rule } from './rule';
import type { SuggestedAction } from './types';

/** Services degrading under load: latency, errors, CPU, memory. */
export const SERVICE_RULES: Readonly<
  Record<Extract<SignalType, 'HighLatency' | 'HighErrorRate' | 'HighCPU' | 'HighMemory'>, Rule>
> = {
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
};
