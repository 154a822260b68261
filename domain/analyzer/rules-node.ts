import { NODE_DISK_CLEANUP_SCRIPT } from '../disk-cleanup';
import type { SignalType } from '../vocabulary';
import { notify } from './actions';
import { isK8sName, labelOf } from './facts';
import type { Rule } from './rule';
import type { SuggestedAction } from './types';

/** Node and network trouble. */
export const NODE_RULES: Readonly<Record<Extract<SignalType, 'DiskPressure' | 'NetworkUnavailable'>, Rule>> = {
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
};
