/**
 * The change record: what changed in a watched cluster, when it reached the cluster, and who
 * changed it where the object says. The watcher writes it (activities/kube-watch/changes.ts);
 * evidence, the rollback target and the postmortem read it. Plain types and pure helpers only.
 */

export const CHANGE_TYPES = ['Rollout', 'Restart', 'Scale', 'Config', 'NodeCondition'] as const;
export type ChangeType = (typeof CHANGE_TYPES)[number];

/** One field of what changed: `image app`, `env app`, `limits.memory app`, `replicas`, `content`, … */
export interface FieldChange {
  field: string;
  from: string;
  to: string;
}

/** Who made the change, as far as the object says; '' where it says nothing. */
export interface ChangeAuthor {
  /** The field manager that last wrote what changed (`kubectl-client-side-apply`, `helm`, `argocd-controller`, `foghorn`). */
  manager: string;
  /** `kubernetes.io/change-cause`. */
  changeCause: string;
  /** The source the GitOps or release tool names: `argocd revision 1a2b3c`, `flux main@sha1:…`, `helm chart shop-1.4.2`. */
  source: string;
  /** Foghorn's own action (its field manager). */
  foghorn: boolean;
}

export interface Change {
  /** Deterministic: the same change seen twice (a relist after a hand-over) has the same id. */
  id: string;
  cluster: string;
  /** '' for cluster-scoped objects (nodes). */
  namespace: string;
  /** `<Kind>/<name>` of the changed object. */
  resource: string;
  type: ChangeType;
  /** When it reached the cluster (the new ReplicaSet's creation, the object's last write). */
  at: Date;
  /** Rollouts and restarts: the workload's revision after and before. */
  revision?: number;
  previousRevision?: number;
  summary: string;
  diff: FieldChange[];
  by: ChangeAuthor;
  /** The workloads it concerns (`<Kind>/<name>`): the workload itself, or those that mount or read a ConfigMap/Secret. */
  workloads: string[];
}

/** What Foghorn has seen of one revision of a watched Deployment. */
export const REVISION_STATES = ['Progressing', 'Healthy', 'Failed', 'Unobserved'] as const;
export type RevisionState = (typeof REVISION_STATES)[number];

export interface RevisionFailure {
  /** The signal type that failed it: CrashLoopBackOff, OOMKilled, ImagePullBackOff, DeploymentFailing, … */
  signal: string;
  reason: string;
  exitCode?: number;
  at: Date;
}

export interface RevisionHealth {
  cluster: string;
  namespace: string;
  /** `Deployment/<name>`. */
  resource: string;
  revision: number;
  /** The ReplicaSet that holds the revision's template. */
  replicaSet: string;
  /** `pod-template-hash`: the same template under a later revision (an undo) has the same hash. */
  templateHash: string;
  images: string[];
  state: RevisionState;
  /** When it became fully available and stayed so for the stability window. */
  healthyAt?: Date;
  failure?: RevisionFailure;
  firstSeenAt: Date;
}

/** One observation of a Deployment's availability; recorded when it changes. */
export interface AvailabilitySample {
  cluster: string;
  namespace: string;
  resource: string;
  at: Date;
  desired: number;
  available: number;
}

/**
 * What the watcher has recorded, carried in its checkpoint so a resumed watcher records what
 * changed while nobody watched and nothing twice. Written only after the record is stored.
 */
export interface ChangeCheckpoint {
  /** Workload key (`ns/Kind/name`) → highest revision recorded. */
  revisions: Record<string, number>;
  /** Workload key → replicas last recorded. */
  replicas: Record<string, number>;
  /** `ns/Kind/name` of a ConfigMap or Secret a workload reads → key → keyed content hash. */
  configs: Record<string, Record<string, string>>;
  /** Node → condition type → status. */
  nodes: Record<string, Record<string, string>>;
  /** Names the key of the content hashes: hashes under another key (a rotated secret key) are a new base, not a change. */
  hashKeyId?: string;
}
