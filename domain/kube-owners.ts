import type { ResourceKind } from './vocabulary';

/**
 * Which workload a Kubernetes object belongs to, for the cluster watcher: the incident is about
 * the workload (`Deployment/checkout`), not about each of its pods, so five crashing pods of one
 * Deployment make one incident. Pure: the caller passes what its informer caches hold.
 *
 * Structural types (not @kubernetes/client-node's) keep domain/ free of the client; its V1Pod,
 * V1ReplicaSet … fit them, whether timestamps arrived as Date (list) or as text (watch).
 */

export interface OwnerReference {
  kind: string;
  name: string;
  uid?: string;
  controller?: boolean;
}

export interface KubeMeta {
  name?: string;
  namespace?: string;
  labels?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  deletionTimestamp?: Date | string;
  resourceVersion?: string;
}

/** The incident's resource: namespace + `<Kind>/<name>` (nodes are filed under `default`, as alerts are). */
export interface WorkloadRef {
  namespace: string;
  kind: ResourceKind;
  name: string;
}

/** Namespace of cluster-scoped objects (nodes), the same default the Alertmanager mapping uses. */
export const CLUSTER_SCOPED_NAMESPACE = 'default';

/** `<namespace>/<Kind>/<name>`: the key the watcher tracks a workload by (the cluster is implied). */
export const workloadKey = (w: WorkloadRef): string => `${w.namespace}/${w.kind}/${w.name}`;

export const workloadResource = (w: WorkloadRef): string => `${w.kind}/${w.name}`;

/** Inverse of workloadKey; undefined for a key it did not make. */
export function parseWorkloadKey(key: string): WorkloadRef | undefined {
  const m = /^([^/]+)\/(Deployment|StatefulSet|DaemonSet|Pod|Node)\/([^/]+)$/.exec(key);
  return m ? { namespace: m[1], kind: m[2] as ResourceKind, name: m[3] } : undefined;
}

/** The managing controller: the owner reference marked `controller`, as Kubernetes does. */
export function controllerOf(meta: KubeMeta | undefined): OwnerReference | undefined {
  return meta?.ownerReferences?.find((o) => o.controller === true);
}

/** Looks a ReplicaSet up in the watcher's cache. */
export type ReplicaSetLookup = (namespace: string, name: string) => { metadata?: KubeMeta } | undefined;

/**
 * The workload a pod belongs to: ReplicaSet → its Deployment; StatefulSet and DaemonSet
 * directly; anything else (a bare pod, a Job's pod, a ReplicaSet nobody manages) → the pod.
 * A ReplicaSet not cached yet is recognised by the `pod-template-hash` suffix the Deployment
 * controller gives it (`<deployment>-<hash>`), so watch order does not split an incident.
 */
export function podWorkload(pod: { metadata?: KubeMeta }, replicaSet: ReplicaSetLookup): WorkloadRef {
  const meta = pod.metadata ?? {};
  const namespace = meta.namespace || CLUSTER_SCOPED_NAMESPACE;
  const self: WorkloadRef = { namespace, kind: 'Pod', name: meta.name ?? '' };
  const owner = controllerOf(meta);
  if (!owner) return self;
  if (owner.kind === 'StatefulSet' || owner.kind === 'DaemonSet')
    return { namespace, kind: owner.kind, name: owner.name };
  if (owner.kind !== 'ReplicaSet') return self;
  const rs = replicaSet(namespace, owner.name);
  if (rs) {
    const rsOwner = controllerOf(rs.metadata);
    return rsOwner?.kind === 'Deployment' ? { namespace, kind: 'Deployment', name: rsOwner.name } : self;
  }
  const hash = meta.labels?.['pod-template-hash'];
  if (hash && owner.name.endsWith(`-${hash}`) && owner.name.length > hash.length + 1)
    return { namespace, kind: 'Deployment', name: owner.name.slice(0, -(hash.length + 1)) };
  return self;
}

export const nodeWorkload = (name: string): WorkloadRef => ({
  namespace: CLUSTER_SCOPED_NAMESPACE,
  kind: 'Node',
  name,
});
