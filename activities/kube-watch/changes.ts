import { createHmac } from 'node:crypto';
import type {
  V1ConfigMap,
  V1ControllerRevision,
  V1DaemonSet,
  V1Deployment,
  V1Node,
  V1ReplicaSet,
  V1Secret,
  V1StatefulSet,
} from '@kubernetes/client-node';
import {
  authorOf,
  configChange,
  configRefs,
  imagesOf,
  keyChanges,
  lastWriteOf,
  nodeConditionChange,
  ownerOf,
  revisionChange,
  scaleChange,
  type ObjectMeta,
  type PodTemplate,
} from '../../domain/change-record';
import type {
  AvailabilitySample,
  Change,
  ChangeCheckpoint,
  RevisionFailure,
  RevisionHealth,
} from '../../domain/changes';
import { REVISION_ANNOTATION } from '../../domain/kube-actions';
import { controllerOf } from '../../domain/kube-owners';

/**
 * The watcher's change record: from the objects the informers see to change
 * records, revision health and availability samples, handed to a sink (the store) in order and
 * retried until stored. What is recorded moves into the checkpoint only once stored, so a watcher
 * killed with -9 relists and records what its predecessor had not stored yet, and nothing twice
 * (ids are deterministic; the store upserts).
 */

export interface ChangeSink {
  changes(changes: Change[]): Promise<unknown>;
  /** The newest stored Scale and Config change of each object of the cluster (the resume base). */
  latest?(): Promise<Change[]>;
  revision(health: RevisionHealth): Promise<unknown>;
  availability(samples: AvailabilitySample[]): Promise<unknown>;
}

export interface ChangeRecorderOptions {
  cluster: string;
  sink: ChangeSink;
  /** Key of the content hashes (a Secret's hash must not be open to a dictionary attack). */
  hashKey: Buffer;
  /** Fully available this long before a revision counts as healthy. */
  stableAfterMs: number;
  /** Revisions created before this are history a first start does not record (the retention). */
  retentionMs: number;
  log: { warn(message: string, meta?: Record<string, unknown>): void };
}

type Workload = V1Deployment | V1StatefulSet | V1DaemonSet;
type Lookup<T> = () => readonly T[];

/** The informer caches the recorder reads (a cache lookup, no API call). */
export interface ChangeCaches {
  deployments: Lookup<V1Deployment>;
  statefulSets: Lookup<V1StatefulSet>;
  daemonSets: Lookup<V1DaemonSet>;
  replicaSets: Lookup<V1ReplicaSet>;
  controllerRevisions: Lookup<V1ControllerRevision>;
  /** ConfigMaps and Secrets, as stripped in the cache. */
  configs: Lookup<{ kind: 'ConfigMap' | 'Secret'; obj: V1ConfigMap | V1Secret }>;
}

interface Revision {
  number: number;
  name: string;
  template: PodTemplate;
  meta: ObjectMeta;
  at: Date;
  templateHash: string;
}

const MAX_QUEUE = 10_000;
const MAX_CHECKPOINT_ENTRIES = 5_000;
const RETRY_MS = 2_000;

/**
 * A config base known only by the content hash of its last stored change (the key hashes are not
 * stored): its next change shows the content hash, not which keys changed.
 */
const STORED_CONTENT = '\0stored';

const key = (namespace: string, kind: string, name: string) => `${namespace}/${kind}/${name}`;
const time = (t: Date | string | undefined) => (t ? new Date(t) : undefined);

/** Whether the ReplicaSet was made current again by an undo (its revision annotation was rewritten). */
const reused = (rs: V1ReplicaSet) => !!rs.metadata?.annotations?.['deployment.kubernetes.io/revision-history'];

/** When a ReplicaSet's revision reached the cluster: its creation, or its last spec write when an undo reused it. */
function replicaSetAt(rs: V1ReplicaSet): Date {
  const created = time(rs.metadata?.creationTimestamp) ?? new Date();
  if (!reused(rs)) return created;
  const writes = (rs.metadata?.managedFields ?? [])
    .filter((m) => !m.subresource)
    .map((m) => time(m.time)?.getTime() ?? 0);
  return writes.length > 0 ? new Date(Math.max(created.getTime(), ...writes)) : created;
}

export class ChangeRecorder {
  private recorded: ChangeCheckpoint = { revisions: {}, replicas: {}, configs: {}, nodes: {} };
  /** Workload key → the configs (`ns/Kind/name`) its template reads. */
  private readonly reads = new Map<string, string[]>();
  /** Content hashes as last seen, recorded or not (a config no workload reads yet). */
  private readonly hashes = new Map<string, Record<string, string>>();
  private readonly completeSince = new Map<string, { revision: number; since: number }>();
  private readonly verdicts = new Set<string>();
  private readonly queuedChanges = new Set<string>();
  private readonly lastAvailability = new Map<string, string>();
  private readonly queue: { write: () => Promise<unknown>; done: () => void }[] = [];
  private writing = false;
  private retryTimer?: NodeJS.Timeout;
  private stopped = false;
  /** Which revision sources are listed (ReplicaSets with Deployments; ControllerRevisions with StatefulSets and DaemonSets). */
  private readonly begun = new Set<'Deployment' | 'ControllerRevision'>();
  readonly stats = { changes: 0, revisions: 0, samples: 0, writeErrors: 0, dropped: 0 };

  constructor(
    private readonly opts: ChangeRecorderOptions,
    private readonly caches: ChangeCaches,
  ) {}

  restore(cp: ChangeCheckpoint | undefined): void {
    if (!cp) return;
    this.recorded = structuredClone(cp);
    if (cp.hashKeyId !== this.hashKeyId) this.recorded.configs = {}; // hashes under another key compare with nothing
  }

  /**
   * The store is never behind the checkpoint (what is stored enters the checkpoint after the
   * write) but the checkpoint can be behind the store: heartbeats are throttled, so a worker killed
   * with -9 hands over a checkpoint up to a heartbeat timeout old. Scale and config bases are
   * taken from the newest stored change, so a change already stored is neither recorded again
   * under another id nor diffed against a state from before it.
   */
  async rebase(): Promise<void> {
    if (!this.opts.sink.latest) return;
    let latest: Change[];
    try {
      latest = await this.opts.sink.latest();
    } catch (err) {
      this.opts.log.warn('change record base not read; resuming from the checkpoint', {
        cluster: this.opts.cluster,
        error: err instanceof Error ? err.constructor.name : typeof err,
      });
      return;
    }
    for (const c of latest) {
      const at = `${c.namespace}/${c.resource}`;
      if (c.type === 'Scale') this.recorded.replicas[at] = Number(c.diff[0]?.to);
      const to = c.diff.find((d) => d.field === 'content hash')?.to;
      // Only a base the checkpoint holds (under the same hash key) is refreshed.
      if (c.type === 'Config' && to && this.recorded.configs[at] && this.contentHash(this.recorded.configs[at]) !== to)
        this.recorded.configs[at] = { [STORED_CONTENT]: to };
    }
  }

  /** Names the hash key without revealing it. */
  private get hashKeyId(): string {
    return createHmac('sha256', this.opts.hashKey).update('key-id').digest('hex').slice(0, 8);
  }

  checkpoint(): ChangeCheckpoint {
    const cap = <T>(r: Record<string, T>) => Object.fromEntries(Object.entries(r).slice(-MAX_CHECKPOINT_ENTRIES));
    return {
      revisions: cap(this.recorded.revisions),
      replicas: cap(this.recorded.replicas),
      configs: cap(this.recorded.configs),
      nodes: cap(this.recorded.nodes),
      hashKeyId: this.hashKeyId,
    };
  }

  /** Nothing left to store. */
  get idle(): boolean {
    return this.queue.length === 0 && !this.writing;
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
  }

  // --- content hashes --------------------------------------------------------------------

  /** A keyed hash, short: equal content, equal hash; nothing about the content otherwise. */
  private hash(value: string): string {
    return createHmac('sha256', this.opts.hashKey).update(value).digest('hex').slice(0, 16);
  }

  /**
   * Reduces a ConfigMap or Secret to its key hashes, in place, as it enters the informer's
   * cache: the watcher never keeps a Secret's content (nor a large ConfigMap's).
   */
  strip<T extends V1ConfigMap | V1Secret>(kind: 'ConfigMap' | 'Secret', obj: T): T {
    const data = { ...(obj.data ?? {}), ...((obj as V1ConfigMap).binaryData ?? {}) };
    if (Object.keys(data).length === 0 && this.hashes.has(this.configKey(kind, obj))) return obj; // already reduced
    const keys: Record<string, string> = {};
    for (const [k, v] of Object.entries(data)) keys[k] = this.hash(`${k}\0${v}`);
    this.hashes.set(this.configKey(kind, obj), keys);
    obj.data = undefined;
    (obj as V1ConfigMap).binaryData = undefined;
    (obj as V1Secret).stringData = undefined;
    return obj;
  }

  private configKey(kind: string, obj: { metadata?: ObjectMeta }) {
    return key(obj.metadata?.namespace ?? '', kind, obj.metadata?.name ?? '');
  }

  private contentHash(keys: Record<string, string>): string {
    if (keys[STORED_CONTENT] !== undefined) return keys[STORED_CONTENT];
    return this.hash(
      Object.entries(keys)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => `${k}=${v}`)
        .join('\n'),
    );
  }

  // --- workloads -------------------------------------------------------------------------

  /** The caches are listed: record what they hold, then every update as it comes. */
  begin(revisions: 'Deployment' | 'ControllerRevision'): void {
    if (this.begun.has(revisions)) return;
    this.begun.add(revisions);
    if (revisions === 'Deployment') for (const d of this.caches.deployments()) this.onWorkload('Deployment', d);
    else {
      for (const s of this.caches.statefulSets()) this.onWorkload('StatefulSet', s);
      for (const d of this.caches.daemonSets()) this.onWorkload('DaemonSet', d);
    }
  }

  /** A Deployment, StatefulSet or DaemonSet was added or updated: revisions, scale, availability, reads. */
  onWorkload(kind: 'Deployment' | 'StatefulSet' | 'DaemonSet', w: Workload, now = Date.now()): void {
    if (!this.begun.has(kind === 'Deployment' ? 'Deployment' : 'ControllerRevision')) return;
    const ns = w.metadata?.namespace ?? '';
    const name = w.metadata?.name ?? '';
    const wk = key(ns, kind, name);
    const template = (w.spec as { template?: PodTemplate } | undefined)?.template ?? {};
    const reads = configRefs(template).map((r) => `${ns}/${r}`);
    const readBefore = this.reads.get(wk);
    this.reads.set(wk, reads);
    // A template that starts reading a config makes the config's current content the base.
    if (reads.some((r) => !readBefore?.includes(r)))
      for (const c of this.caches.configs())
        if (reads.includes(this.configKey(c.kind, c.obj))) this.onConfig(c.kind, c.obj);
    this.recordRevisions(kind, w, now);
    if (kind !== 'DaemonSet') this.recordScale(kind, w as V1Deployment | V1StatefulSet);
    if (kind === 'Deployment') {
      this.recordAvailability(w as V1Deployment, now);
      this.judgeHealthy(w as V1Deployment, now);
    }
  }

  onWorkloadDeleted(kind: string, w: Workload): void {
    const wk = key(w.metadata?.namespace ?? '', kind, w.metadata?.name ?? '');
    this.reads.delete(wk);
    this.completeSince.delete(wk);
  }

  /** The revisions of a workload, oldest first, from its ReplicaSets (Deployment) or ControllerRevisions. */
  private revisionsOf(kind: string, w: Workload): Revision[] {
    const ns = w.metadata?.namespace;
    const uid = w.metadata?.uid;
    const owned = (meta: ObjectMeta & { ownerReferences?: { uid?: string; controller?: boolean }[] }) =>
      meta && (meta as { namespace?: string }).namespace === ns && controllerOf(meta as never)?.uid === uid;
    if (kind === 'Deployment')
      return this.caches
        .replicaSets()
        .filter((rs) => owned(rs.metadata as never))
        .map((rs) => ({
          number: Number(rs.metadata?.annotations?.[REVISION_ANNOTATION] ?? NaN),
          name: rs.metadata?.name ?? '',
          template: (rs.spec?.template ?? {}) as PodTemplate,
          meta: rs.metadata as ObjectMeta,
          at: replicaSetAt(rs),
          templateHash: rs.metadata?.labels?.['pod-template-hash'] ?? '',
        }))
        .filter((r) => Number.isInteger(r.number))
        .sort((a, b) => a.number - b.number);
    return this.caches
      .controllerRevisions()
      .filter((cr) => owned(cr.metadata as never))
      .map((cr) => ({
        number: cr.revision,
        name: cr.metadata?.name ?? '',
        template: ((cr.data as { spec?: { template?: PodTemplate } } | undefined)?.spec?.template ?? {}) as PodTemplate,
        meta: cr.metadata as ObjectMeta,
        at: time(cr.metadata?.creationTimestamp) ?? new Date(),
        templateHash: cr.metadata?.labels?.['controller-revision-hash'] ?? '',
      }))
      .sort((a, b) => a.number - b.number);
  }

  /** Every revision newer than the recorded one, each against the one before it. */
  private recordRevisions(kind: 'Deployment' | 'StatefulSet' | 'DaemonSet', w: Workload, now: number): void {
    const ns = w.metadata?.namespace ?? '';
    const name = w.metadata?.name ?? '';
    const wk = key(ns, kind, name);
    const revisions = this.revisionsOf(kind, w);
    if (revisions.length === 0) return;
    // A Deployment's current revision is named on it once its controller made the ReplicaSet: a
    // ReplicaSet seen before that waits (the Deployment then carries its author's managedFields).
    const current =
      kind === 'Deployment'
        ? Number(w.metadata?.annotations?.[REVISION_ANNOTATION] ?? NaN)
        : revisions[revisions.length - 1].number;
    if (!Number.isInteger(current)) return;
    const known = this.recorded.revisions[wk] ?? 0;
    let previous = revisions.filter((r) => r.number <= known).at(-1);
    for (const r of revisions) {
      if (r.number <= known || r.number > current) continue;
      if (known === 0 && r.at.getTime() < now - this.opts.retentionMs) {
        previous = r; // history older than the retention: the base of the next diff only
        continue;
      }
      const latest = r.number === current;
      const changeCause = r.meta.annotations?.['kubernetes.io/change-cause'] ?? '';
      const by = latest
        ? authorOf(w.metadata as ObjectMeta, ['spec', 'template'], r.at, changeCause, 60_000)
        : { ...authorOf(undefined, [], r.at, changeCause), source: authorOf(r.meta, [], r.at).source };
      const change = revisionChange({
        cluster: this.opts.cluster,
        namespace: ns,
        workload: `${kind}/${name}`,
        revision: r.number,
        ...(previous && { previousRevision: previous.number, previousTemplate: previous.template }),
        template: r.template,
        at: r.at,
        by,
      });
      const number = r.number;
      this.enqueueChange(change, () => {
        this.recorded.revisions[wk] = Math.max(this.recorded.revisions[wk] ?? 0, number);
      });
      // A revision already replaced when first seen was never observed running.
      if (kind === 'Deployment') this.revisionVerdict(ns, name, r, latest ? 'Progressing' : 'Unobserved', now);
      previous = r;
    }
  }

  private recordScale(kind: 'Deployment' | 'StatefulSet', w: V1Deployment | V1StatefulSet): void {
    const ns = w.metadata?.namespace ?? '';
    const name = w.metadata?.name ?? '';
    const wk = key(ns, kind, name);
    const replicas = w.spec?.replicas ?? 1;
    const before = this.recorded.replicas[wk];
    if (before === replicas) return;
    if (before === undefined) {
      this.recorded.replicas[wk] = replicas; // the first sight: the base, not a change
      return;
    }
    const at = this.writeTime(w.metadata as ObjectMeta, ['spec', 'replicas']);
    const change = scaleChange(
      this.opts.cluster,
      ns,
      `${kind}/${name}`,
      w.metadata?.generation ?? 0,
      before,
      replicas,
      at,
      authorOf(w.metadata as ObjectMeta, ['spec', 'replicas'], at),
    );
    this.enqueueChange(change, () => {
      this.recorded.replicas[wk] = replicas;
    });
  }

  /** When the fields under `path` were last written (their newest managedFields entry), else the object's last write. */
  private writeTime(meta: ObjectMeta | undefined, path: string[]): Date {
    const owner = ownerOf(meta, path);
    if (owner?.time) return new Date(owner.time);
    return owner ? new Date() : lastWriteOf(meta, new Date()); // an owner without a time: now, when it is seen
  }

  private recordAvailability(d: V1Deployment, now: number): void {
    const ns = d.metadata?.namespace ?? '';
    const resource = `Deployment/${d.metadata?.name ?? ''}`;
    const desired = d.spec?.replicas ?? 1;
    const available = d.status?.availableReplicas ?? 0;
    const wk = `${ns}/${resource}`;
    const value = `${desired}/${available}`;
    if (this.lastAvailability.get(wk) === value) return;
    this.lastAvailability.set(wk, value);
    const sample = { cluster: this.opts.cluster, namespace: ns, resource, at: new Date(now), desired, available };
    this.enqueue(
      () => this.opts.sink.availability([sample]),
      () => this.stats.samples++,
    );
  }

  // --- revision health --------------------------------------------------------------------

  /** The Deployment's current revision, when it is fully rolled out and available (kubectl rollout status's rules). */
  private completeRevision(d: V1Deployment): Revision | undefined {
    const s = d.status ?? {};
    const desired = d.spec?.replicas ?? 1;
    const complete =
      (s.observedGeneration ?? 0) >= (d.metadata?.generation ?? 0) &&
      (s.updatedReplicas ?? 0) === desired &&
      (s.replicas ?? 0) === desired &&
      (s.availableReplicas ?? 0) === desired &&
      desired > 0;
    if (!complete) return undefined;
    const current = Number(d.metadata?.annotations?.[REVISION_ANNOTATION] ?? NaN);
    return this.revisionsOf('Deployment', d).find((r) => r.number === current);
  }

  /** A Deployment complete on its revision for the stability window: that revision is healthy. */
  private judgeHealthy(d: V1Deployment, now: number): void {
    const wk = key(d.metadata?.namespace ?? '', 'Deployment', d.metadata?.name ?? '');
    const rev = this.completeRevision(d);
    if (!rev) {
      this.completeSince.delete(wk);
      return;
    }
    const since = this.completeSince.get(wk);
    if (!since || since.revision !== rev.number) {
      this.completeSince.set(wk, { revision: rev.number, since: now });
      return;
    }
    if (now - since.since >= this.opts.stableAfterMs)
      this.revisionVerdict(d.metadata?.namespace ?? '', d.metadata?.name ?? '', rev, 'Healthy', now);
  }

  /** The clock: a revision becomes healthy by time passing, not by an event. */
  reevaluate(now = Date.now()): void {
    for (const d of this.caches.deployments()) this.judgeHealthy(d, now);
  }

  /**
   * A failing pod or rollout of a Deployment: the revision the pod runs (its ReplicaSet's) fails,
   * unless already proven healthy (a later crash with no change is not the revision's verdict).
   */
  onFailure(namespace: string, replicaSet: string, failure: RevisionFailure): void {
    const rs = this.caches
      .replicaSets()
      .find((r) => r.metadata?.namespace === namespace && r.metadata?.name === replicaSet);
    const owner = controllerOf(rs?.metadata as never);
    if (!rs || owner?.kind !== 'Deployment') return;
    const number = Number(rs.metadata?.annotations?.[REVISION_ANNOTATION] ?? NaN);
    if (!Number.isInteger(number)) return;
    const rev: Revision = {
      number,
      name: rs.metadata?.name ?? '',
      template: (rs.spec?.template ?? {}) as PodTemplate,
      meta: rs.metadata as ObjectMeta,
      at: replicaSetAt(rs),
      templateHash: rs.metadata?.labels?.['pod-template-hash'] ?? '',
    };
    this.revisionVerdict(namespace, owner.name, rev, 'Failed', failure.at.getTime(), failure);
  }

  /** A rollout past its deadline fails the Deployment's current revision. */
  onRolloutFailure(d: V1Deployment, failure: RevisionFailure): void {
    const current = Number(d.metadata?.annotations?.[REVISION_ANNOTATION] ?? NaN);
    const rev = this.revisionsOf('Deployment', d).find((r) => r.number === current);
    if (rev)
      this.revisionVerdict(d.metadata?.namespace ?? '', d.metadata?.name ?? '', rev, 'Failed', Date.now(), failure);
  }

  private revisionVerdict(
    namespace: string,
    deployment: string,
    rev: Revision,
    state: RevisionHealth['state'],
    now: number,
    failure?: RevisionFailure,
  ): void {
    const verdict = `${namespace}/${deployment}/${rev.number}/${state}`;
    if (this.verdicts.has(verdict) || this.verdicts.has(`${namespace}/${deployment}/${rev.number}/Healthy`)) return;
    this.verdicts.add(verdict);
    const health: RevisionHealth = {
      cluster: this.opts.cluster,
      namespace,
      resource: `Deployment/${deployment}`,
      revision: rev.number,
      replicaSet: rev.name,
      templateHash: rev.templateHash,
      images: imagesOf(rev.template),
      state,
      ...(state === 'Healthy' && { healthyAt: new Date(now) }),
      ...(failure && { failure }),
      firstSeenAt: rev.at,
    };
    this.enqueue(
      () => this.opts.sink.revision(health),
      () => this.stats.revisions++,
      () => this.verdicts.delete(verdict),
    );
  }

  // --- ConfigMaps, Secrets, nodes ---------------------------------------------------------

  /** A ConfigMap or Secret (already stripped) was added or updated: a change when a workload reads it and its content differs. */
  onConfig(kind: 'ConfigMap' | 'Secret', obj: V1ConfigMap | V1Secret): void {
    const ck = this.configKey(kind, obj);
    const keys = this.hashes.get(ck) ?? {};
    const readers = [...this.reads]
      .filter(([, refs]) => refs.includes(ck))
      .map(([wk]) => wk.split('/').slice(1).join('/'));
    const before = this.recorded.configs[ck];
    if (readers.length === 0) return;
    if (!before) {
      this.recorded.configs[ck] = keys; // first sight by a reader: the base
      return;
    }
    if (this.contentHash(before) === this.contentHash(keys)) return;
    const at = this.writeTime(obj.metadata as ObjectMeta, ['data']);
    const change = configChange(
      this.opts.cluster,
      obj.metadata?.namespace ?? '',
      `${kind}/${obj.metadata?.name ?? ''}`,
      obj.metadata?.resourceVersion ?? String(at.getTime()),
      this.contentHash(before),
      this.contentHash(keys),
      keyChanges(before, keys),
      readers,
      at,
      authorOf(obj.metadata as ObjectMeta, [], at),
    );
    this.enqueueChange(change, () => {
      this.recorded.configs[ck] = keys;
    });
  }

  onConfigDeleted(kind: string, obj: { metadata?: ObjectMeta }): void {
    const ck = this.configKey(kind, obj);
    this.hashes.delete(ck);
    delete this.recorded.configs[ck];
  }

  onNode(n: V1Node): void {
    const name = n.metadata?.name ?? '';
    const before = this.recorded.nodes[name];
    const now: Record<string, string> = {};
    for (const c of n.status?.conditions ?? []) now[c.type] = c.status;
    if (!before) {
      this.recorded.nodes[name] = now;
      return;
    }
    for (const c of n.status?.conditions ?? []) {
      if (before[c.type] === undefined) {
        before[c.type] = c.status; // a condition seen the first time (a node still initialising): the base
        continue;
      }
      if (before[c.type] === c.status) continue;
      const change = nodeConditionChange(
        this.opts.cluster,
        name,
        c.type,
        before[c.type],
        c.status,
        c.reason ?? '',
        time(c.lastTransitionTime) ?? new Date(),
      );
      const type = c.type;
      const status = c.status;
      this.enqueueChange(change, () => {
        this.recorded.nodes[name] = { ...this.recorded.nodes[name], [type]: status };
      });
    }
  }

  // --- writing ----------------------------------------------------------------------------

  /** A change once, however often its object is seen before it is stored. */
  private enqueueChange(change: Change, recorded: () => void): void {
    if (this.queuedChanges.has(change.id)) return;
    this.queuedChanges.add(change.id);
    this.enqueue(
      () => this.opts.sink.changes([change]),
      () => {
        this.queuedChanges.delete(change.id);
        this.stats.changes++;
        recorded();
      },
      () => this.queuedChanges.delete(change.id),
    );
  }

  private enqueue(write: () => Promise<unknown>, done: () => void, dropped?: () => void): void {
    if (this.queue.length >= MAX_QUEUE) {
      this.stats.dropped++;
      dropped?.();
      return; // a relist records it again (the checkpoint does not have it)
    }
    this.queue.push({ write, done });
    void this.drain();
  }

  private async drain(): Promise<void> {
    if (this.writing || this.stopped) return;
    this.writing = true;
    try {
      while (this.queue.length > 0 && !this.stopped) {
        const next = this.queue[0];
        try {
          await next.write();
        } catch (err) {
          this.stats.writeErrors++;
          this.opts.log.warn('change record not stored; retrying', {
            cluster: this.opts.cluster,
            error: err instanceof Error ? err.constructor.name : typeof err,
          });
          clearTimeout(this.retryTimer);
          this.retryTimer = setTimeout(() => void this.drain(), RETRY_MS);
          return;
        }
        this.queue.shift();
        next.done();
      }
    } finally {
      this.writing = false;
    }
  }
}
