import {
  AppsV1Api,
  CoreV1Api,
  ListWatch,
  Watch,
  type CoreV1Event,
  type KubeConfig,
  type KubernetesObject,
  type V1ConfigMap,
  type V1ControllerRevision,
  type V1DaemonSet,
  type V1Deployment,
  type V1Node,
  type V1Pod,
  type V1ReplicaSet,
  type V1Secret,
  type V1StatefulSet,
} from '@kubernetes/client-node';
import { ZodError } from 'zod';
import { ApiError } from '../../domain/errors';
import type { Signal } from '../../domain/incident';
import { controllerOf, nodeWorkload, podWorkload, workloadKey, type WorkloadRef } from '../../domain/kube-owners';
import {
  deploymentFailure,
  nodeFailure,
  podFailure,
  type Failure,
  type Thresholds,
  type WarningEvidence,
} from '../../domain/kube-signals';
import { FailureTracker, type WatchAction, type WatchCheckpoint } from '../../domain/kube-watch-state';
import { redactText } from '../../domain/redact';
import type { SignalType } from '../../domain/vocabulary';
import { kubeErrorFacts } from '../kube/errors';
import { ChangeRecorder, type ChangeRecorderOptions } from './changes';

/**
 * One cluster's watch: informers (list + watch, never polling) on pods, ReplicaSets (for pod →
 * Deployment), Deployments, nodes and warning Events, feeding the FailureTracker, and a delivery
 * loop that hands what the tracker wants sent to ingestion. No Temporal here: the activity
 * (activities/kube-watch.ts) adds heartbeats and cancellation; the benchmark drives it directly.
 */

export interface WatchLog {
  info(message: string, meta?: Record<string, unknown>): void;
  warn(message: string, meta?: Record<string, unknown>): void;
}

/** An open incident of this watcher, as ingestion's record has it (see FailureTracker.knownToIngestion). */
export interface KnownIncident {
  workload: WorkloadRef;
  members: [string, SignalType][];
  open: boolean;
}

export interface ClusterWatcherOptions {
  cluster: string;
  kc: KubeConfig;
  thresholds: Thresholds;
  /** Ingestion (applySignal). Throwing an error with a 4xx `status` drops the signal; anything else is retried. */
  deliver(signal: Signal, status: 'firing' | 'resolved'): Promise<unknown>;
  /** What ingestion already has (read once, before the first delivery). */
  knownIncidents?(): Promise<KnownIncident[]>;
  maxSignalsPerWorkload?: number;
  /** Parallel deliveries (each workload's own signals stay in order). */
  concurrency?: number;
  /** The change record (absent: no change is recorded, as in the delivery benchmark). */
  changes?: Omit<ChangeRecorderOptions, 'cluster' | 'log'>;
  log?: WatchLog;
}

export interface WatcherStats {
  /** Pod add/update/delete notifications handled (a status change is an update). */
  podEvents: number;
  deploymentEvents: number;
  nodeEvents: number;
  warningEvents: number;
  firing: number;
  resolved: number;
  deliveryErrors: number;
  /** Informer restarts after an error (disconnect, API server down). */
  restarts: number;
  relists: number;
}

const BACKOFF_START_MS = 500;
const BACKOFF_CAP_MS = 30_000;
const EVIDENCE_CAP = 5_000;
const DEFAULT_MAX_SIGNALS = 50;
/**
 * How long stop() waits for deliveries in flight. Bounded: a delivery to an unavailable Temporal
 * can hang past the activity's heartbeat timeout, and an unbounded wait would have the server
 * start a second attempt (a second watcher) while this one still runs. What is not confirmed
 * stays pending in the checkpoint and is sent again (at least once).
 */
const STOP_WAIT_MS = 10_000;

/** Capped exponential back-off with full jitter. */
export const backoffMs = (attempt: number) =>
  Math.round(Math.min(BACKOFF_CAP_MS, BACKOFF_START_MS * 2 ** Math.min(attempt, 16)) * (0.5 + Math.random() / 2));

/** A failed API server call as log fields: status, reason and the server's own message, redacted. */
const kubeErrorFields = (err: unknown) => {
  const { detail, ...facts } = kubeErrorFacts(err);
  return { ...facts, ...(detail && { detail: redactText(detail).slice(0, 300) }) };
};

/** Any other error (ingestion, a signal schema) as log fields: its class and a short, redacted message. */
const errorFields = (err: unknown) => ({
  error: err instanceof Error ? err.constructor.name : typeof err,
  ...(err instanceof ApiError && { status: err.status }),
  message: redactText(String((err as Error)?.message ?? err)).slice(0, 200),
});

/**
 * client-node's Watch, except that a watch whose request was still being opened when the
 * watcher stopped is aborted once open: ListWatch.stop() only aborts a request it already holds.
 */
class StoppableWatch extends Watch {
  constructor(
    kc: KubeConfig,
    private readonly isStopped: () => boolean,
  ) {
    super(kc);
  }

  override async watch(...args: Parameters<Watch['watch']>): Promise<AbortController> {
    const request = await super.watch(...args);
    if (this.isStopped()) request.abort();
    return request;
  }
}

type Kind =
  | 'pods'
  | 'replicasets'
  | 'deployments'
  | 'nodes'
  | 'events'
  | 'statefulsets'
  | 'daemonsets'
  | 'controllerrevisions'
  | 'configmaps'
  | 'secrets';

/** The failures a revision is judged by: its containers' own (a node down or a slow start is not the template's fault). */
const REVISION_FAILURES = new Set(['CrashLoopBackOff', 'OOMKilled', 'ImagePullBackOff']);

interface Informer<T extends KubernetesObject> {
  kind: Kind;
  lw: ListWatch<T>;
  synced: boolean;
  attempt: number;
  timer?: NodeJS.Timeout;
}

export class ClusterWatcher {
  readonly stats: WatcherStats = {
    podEvents: 0,
    deploymentEvents: 0,
    nodeEvents: 0,
    warningEvents: 0,
    firing: 0,
    resolved: 0,
    deliveryErrors: 0,
    restarts: 0,
    relists: 0,
  };
  private readonly tracker: FailureTracker;
  private readonly log: WatchLog;
  private readonly pods: Informer<V1Pod>;
  private readonly replicaSets: Informer<V1ReplicaSet>;
  private readonly deployments: Informer<V1Deployment>;
  private readonly nodes: Informer<V1Node>;
  private readonly events: Informer<CoreV1Event>;
  private readonly informers: Informer<KubernetesObject>[];
  /** The change record's own informers: they never hold up deliveries (a 403 on Secrets must not silence the watcher). */
  private readonly changeInformers: Informer<KubernetesObject>[] = [];
  readonly changes?: ChangeRecorder;
  /** Each pod's workload as last seen, so a pod that moves (its ReplicaSet appeared) leaves the old one. */
  private readonly podWorkloads = new Map<string, WorkloadRef>();
  private readonly unavailableSince = new Map<string, number>();
  /** Latest warning Event per involved object (`ns/Kind/name`), bounded. */
  private readonly evidence = new Map<string, WarningEvidence>();
  private resourceVersions: Record<string, string> = {};
  private stopped = false;
  private ready = false;
  private pausedUntil = 0;
  private pauseAttempt = 0;
  private retryTimer?: NodeJS.Timeout;
  private tick?: NodeJS.Timeout;
  private readonly inFlight = new Set<string>();
  private readonly queued = new Set<string>();
  private running = 0;
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly opts: ClusterWatcherOptions) {
    this.tracker = new FailureTracker({
      cluster: opts.cluster,
      maxSignalsPerWorkload: opts.maxSignalsPerWorkload ?? DEFAULT_MAX_SIGNALS,
    });
    this.log = opts.log ?? { info: () => undefined, warn: () => undefined };
    const core = opts.kc.makeApiClient(CoreV1Api);
    const apps = opts.kc.makeApiClient(AppsV1Api);
    const watch = new StoppableWatch(opts.kc, () => this.stopped);
    const make = <T extends KubernetesObject>(
      kind: Kind,
      path: string,
      list: () => Promise<{ items: T[]; metadata?: { resourceVersion?: string } }>,
      fieldSelector?: string,
    ): Informer<T> => ({
      kind,
      lw: new ListWatch<T>(
        path,
        watch,
        async () => {
          this.stats.relists++;
          const result = await list();
          // ListWatch checks `stopped` only before its list: without this a stop() during the
          // list would still open a watch afterwards. The error ends the start (see onInformerError).
          if (this.stopped) throw new Error('cluster watcher stopped');
          return result;
        },
        false,
        undefined,
        fieldSelector,
      ),
      synced: false,
      attempt: 0,
    });
    this.pods = make('pods', '/api/v1/pods', () => core.listPodForAllNamespaces());
    this.replicaSets = make('replicasets', '/apis/apps/v1/replicasets', () => apps.listReplicaSetForAllNamespaces());
    this.deployments = make('deployments', '/apis/apps/v1/deployments', () => apps.listDeploymentForAllNamespaces());
    this.nodes = make('nodes', '/api/v1/nodes', () => core.listNode());
    this.events = make(
      'events',
      '/api/v1/events',
      () => core.listEventForAllNamespaces({ fieldSelector: 'type=Warning' }),
      'type=Warning',
    );
    // ReplicaSets first: pods then map to their Deployment from the first list on.
    this.informers = [
      this.replicaSets,
      this.events,
      this.pods,
      this.deployments,
      this.nodes,
    ] as Informer<KubernetesObject>[];

    const onPod = (deleted: boolean) => (pod: V1Pod) => {
      this.stats.podEvents++;
      this.onPod(pod, deleted);
    };
    this.pods.lw.on('add', onPod(false));
    this.pods.lw.on('update', onPod(false));
    this.pods.lw.on('delete', onPod(true));
    const onDeployment = (deleted: boolean) => (d: V1Deployment) => {
      this.stats.deploymentEvents++;
      this.onDeployment(d, deleted, Date.now());
      this.kick();
    };
    this.deployments.lw.on('add', onDeployment(false));
    this.deployments.lw.on('update', onDeployment(false));
    this.deployments.lw.on('delete', onDeployment(true));
    const onNode = (deleted: boolean) => (n: V1Node) => {
      this.stats.nodeEvents++;
      this.onNode(n, deleted);
      this.kick();
    };
    this.nodes.lw.on('add', onNode(false));
    this.nodes.lw.on('update', onNode(false));
    this.nodes.lw.on('delete', onNode(true));
    this.events.lw.on('add', (e) => this.onEvent(e));
    this.events.lw.on('update', (e) => this.onEvent(e));
    if (opts.changes) this.changes = this.recordChanges(opts.changes, core, apps, make);
    for (const inf of [...this.informers, ...this.changeInformers])
      inf.lw.on('error', (err) => this.onInformerError(inf, err));
  }

  /** The change record's informers and handlers: workloads, their revisions, what they read. */
  private recordChanges(
    options: NonNullable<ClusterWatcherOptions['changes']>,
    core: CoreV1Api,
    apps: AppsV1Api,
    make: <T extends KubernetesObject>(
      kind: Kind,
      path: string,
      list: () => Promise<{ items: T[]; metadata?: { resourceVersion?: string } }>,
    ) => Informer<T>,
  ): ChangeRecorder {
    const statefulSets = make<V1StatefulSet>('statefulsets', '/apis/apps/v1/statefulsets', () =>
      apps.listStatefulSetForAllNamespaces(),
    );
    const daemonSets = make<V1DaemonSet>('daemonsets', '/apis/apps/v1/daemonsets', () =>
      apps.listDaemonSetForAllNamespaces(),
    );
    const revisions = make<V1ControllerRevision>('controllerrevisions', '/apis/apps/v1/controllerrevisions', () =>
      apps.listControllerRevisionForAllNamespaces(),
    );
    const recorder: ChangeRecorder = new ChangeRecorder(
      { ...options, cluster: this.opts.cluster, log: this.log },
      {
        deployments: () => this.deployments.lw.list(),
        statefulSets: () => statefulSets.lw.list(),
        daemonSets: () => daemonSets.lw.list(),
        replicaSets: () => this.replicaSets.lw.list(),
        controllerRevisions: () => revisions.lw.list(),
        configs: () => [
          ...configMaps.lw.list().map((obj) => ({ kind: 'ConfigMap' as const, obj })),
          ...secrets.lw.list().map((obj) => ({ kind: 'Secret' as const, obj })),
        ],
      },
    );
    // ConfigMaps and Secrets enter the cache reduced to key hashes (ChangeRecorder.strip).
    const configs = <T extends V1ConfigMap | V1Secret>(
      kind: 'ConfigMap' | 'Secret',
      informer: Kind,
      path: string,
      list: () => Promise<{ items: T[]; metadata?: { resourceVersion?: string } }>,
    ): Informer<T> => {
      const inf = make<T>(informer, path, async () => {
        const result = await list();
        return { ...result, items: result.items.map((o) => recorder.strip(kind, o)) };
      });
      const seen = (o: T) => recorder.onConfig(kind, recorder.strip(kind, o));
      inf.lw.on('add', seen);
      inf.lw.on('update', seen);
      inf.lw.on('delete', (o) => recorder.onConfigDeleted(kind, o as never));
      return inf;
    };
    const configMaps: Informer<V1ConfigMap> = configs<V1ConfigMap>(
      'ConfigMap',
      'configmaps',
      '/api/v1/configmaps',
      () => core.listConfigMapForAllNamespaces(),
    );
    const secrets: Informer<V1Secret> = configs<V1Secret>('Secret', 'secrets', '/api/v1/secrets', () =>
      core.listSecretForAllNamespaces(),
    );
    const workload = <T extends V1Deployment | V1StatefulSet | V1DaemonSet>(
      kind: 'Deployment' | 'StatefulSet' | 'DaemonSet',
      inf: Informer<T>,
    ) => {
      const seen = (w: T) => recorder.onWorkload(kind, w);
      inf.lw.on('add', seen);
      inf.lw.on('update', seen);
      inf.lw.on('delete', (w) => recorder.onWorkloadDeleted(kind, w));
    };
    workload('Deployment', this.deployments);
    workload('StatefulSet', statefulSets);
    workload('DaemonSet', daemonSets);
    const owner = (o: KubernetesObject) => {
      const c = controllerOf(o.metadata as never);
      const ns = o.metadata?.namespace;
      if (!c) return;
      const lists: Record<string, () => readonly (V1Deployment | V1StatefulSet | V1DaemonSet)[]> = {
        Deployment: () => this.deployments.lw.list(ns),
        StatefulSet: () => statefulSets.lw.list(ns),
        DaemonSet: () => daemonSets.lw.list(ns),
      };
      const w = lists[c.kind]?.().find((x) => x.metadata?.name === c.name);
      if (w) recorder.onWorkload(c.kind as 'Deployment', w);
    };
    this.replicaSets.lw.on('add', owner);
    this.replicaSets.lw.on('update', owner);
    revisions.lw.on('add', owner);
    revisions.lw.on('update', owner);
    this.nodes.lw.on('add', (n) => recorder.onNode(n));
    this.nodes.lw.on('update', (n) => recorder.onNode(n));
    this.changeInformers.push(
      ...([statefulSets, daemonSets, revisions, configMaps, secrets] as Informer<KubernetesObject>[]),
    );
    return recorder;
  }

  /** What a previous run knew (checkpoint from a heartbeat or the previous round). */
  restore(cp: WatchCheckpoint): void {
    this.tracker.restore(cp);
    this.changes?.restore(cp.changes);
    for (const [k, v] of Object.entries(cp.unavailableSince)) this.unavailableSince.set(k, v);
    this.resourceVersions = { ...cp.resourceVersions };
  }

  /**
   * Starts the informers; deliveries begin once every one of them listed (and ingestion's open
   * incidents were read), so nothing is judged on a half-known cluster.
   */
  async start(): Promise<void> {
    const known = (await this.opts.knownIncidents?.()) ?? [];
    // Stopped (cancelled) while ingestion's record was read: start nothing that stop() would miss.
    if (this.stopped) return;
    for (const k of known) this.tracker.knownToIngestion(k.workload, k.members, k.open);
    await this.changes?.rebase();
    if (this.stopped) return;
    // Not awaited: an API server that accepts connections and never answers must not hold up
    // the activity (its heartbeats and its round); deliveries wait for every first list anyway.
    for (const inf of [...this.informers, ...this.changeInformers]) void this.startInformer(inf);
    const period = Math.min(15_000, Math.max(1_000, Math.floor(this.opts.thresholds.notReadyAfterMs / 4)));
    // No event arrives when time passes: "not ready for longer than" needs a clock.
    this.tick = setInterval(() => this.reevaluate(), period);
    this.maybeReady();
  }

  get isReady(): boolean {
    return this.ready;
  }

  /** A timer is still set (the clock, a delivery retry, an informer restart): false once stopped. */
  get hasTimers(): boolean {
    return !!this.tick || !!this.retryTimer || [...this.informers, ...this.changeInformers].some((i) => i.timer);
  }

  checkpoint(): WatchCheckpoint {
    for (const inf of this.informers) {
      const rv = inf.lw.latestResourceVersion();
      if (rv) this.resourceVersions[inf.kind] = rv;
    }
    const cp = this.tracker.checkpoint({ ...this.resourceVersions }, this.unavailableSince);
    return this.changes ? { ...cp, changes: this.changes.checkpoint() } : cp;
  }

  trackerStats() {
    return this.tracker.stats();
  }

  /** Resolves once nothing is queued or being delivered (benchmark, tests, stop()). */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((r) => this.idleWaiters.push(r));
  }

  /**
   * Stops watching (idempotent); waits up to STOP_WAIT_MS for deliveries in flight (the rest
   * stays in the checkpoint).
   */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.tick);
    this.tick = undefined;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    const all = [...this.informers, ...this.changeInformers];
    for (const inf of all) {
      clearTimeout(inf.timer);
      inf.timer = undefined;
    }
    // Every one of them, whatever another's stop does (a start still listing or opening its watch
    // ends by itself: see the list wrapper and StoppableWatch).
    await Promise.allSettled(all.map((inf) => inf.lw.stop()));
    await this.changesStored(STOP_WAIT_MS);
    this.changes?.stop();
    this.queued.clear();
    let timer: NodeJS.Timeout | undefined;
    const waited = await Promise.race([
      this.idle().then(() => true),
      new Promise<boolean>((r) => (timer = setTimeout(() => r(false), STOP_WAIT_MS))),
    ]);
    clearTimeout(timer);
    if (!waited)
      this.log.warn('cluster watch stopped with deliveries in flight; they stay in the checkpoint', {
        cluster: this.opts.cluster,
        inFlight: this.running,
      });
  }

  /** Waits (bounded) until the change record has stored what it saw: what it has not stays out of the checkpoint. */
  async changesStored(timeoutMs: number): Promise<void> {
    const until = Date.now() + timeoutMs;
    while (this.changes && !this.changes.idle && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  }

  /** Nothing being delivered, and nothing queued unless stopped (a stopped watcher sends nothing more). */
  private isIdle(): boolean {
    return this.running === 0 && (this.stopped || this.queued.size === 0);
  }

  // --- informers -------------------------------------------------------------------------

  private async startInformer(inf: Informer<KubernetesObject>): Promise<void> {
    if (this.stopped) return;
    let failed = false;
    const onError = () => (failed = true);
    inf.lw.on('error', onError);
    try {
      await inf.lw.start();
    } catch (err) {
      failed = true;
      this.onInformerError(inf, err);
    } finally {
      inf.lw.off('error', onError);
    }
    if (failed || this.stopped) return;
    if (inf.attempt > 0)
      this.log.info('cluster watch resumed', {
        cluster: this.opts.cluster,
        resource: inf.kind,
        restarts: this.stats.restarts,
      });
    inf.attempt = 0;
    if (!inf.synced) {
      inf.synced = true;
      this.maybeReady();
      this.maybeRecordChanges();
    }
  }

  /** Disconnect, API server down, 403 …: back off (capped, jittered) and start again. 410 Gone never gets here: the informer relists itself. */
  private onInformerError(inf: Informer<KubernetesObject>, err: unknown): void {
    if (this.stopped || inf.timer) return;
    const delay = backoffMs(inf.attempt++);
    this.log.warn('cluster watch interrupted; resuming', {
      cluster: this.opts.cluster,
      resource: inf.kind,
      retryInMs: delay,
      ...kubeErrorFields(err),
    });
    inf.timer = setTimeout(() => {
      inf.timer = undefined;
      this.stats.restarts++;
      void this.startInformer(inf);
    }, delay);
  }

  /**
   * The change record starts once every workload and revision collection listed: judged on a
   * half-listed cache, a revision would be diffed against the wrong predecessor.
   */
  private maybeRecordChanges(): void {
    const all = [...this.informers, ...this.changeInformers];
    const listed = (kinds: Kind[]) => kinds.every((k) => all.find((i) => i.kind === k)?.synced);
    // Apart: a cluster that refuses ControllerRevisions (RBAC) still gets its Deployments' record.
    if (listed(['replicasets', 'deployments'])) this.changes?.begin('Deployment');
    if (listed(['statefulsets', 'daemonsets', 'controllerrevisions'])) this.changes?.begin('ControllerRevision');
  }

  private maybeReady(): void {
    if (this.ready || !this.informers.every((i) => i.synced)) return;
    this.ready = true;
    this.log.info('cluster watch synced', { cluster: this.opts.cluster });
    this.reevaluate();
  }

  // --- objects → tracker -----------------------------------------------------------------

  private thresholds(): Thresholds {
    return this.opts.thresholds;
  }

  private onPod(pod: V1Pod, deleted: boolean, now = Date.now()): WorkloadRef | undefined {
    const ns = pod.metadata?.namespace ?? '';
    const name = pod.metadata?.name ?? '';
    const key = `${ns}/${name}`;
    const member = `Pod/${name}`;
    const prev = this.podWorkloads.get(key);
    const wl = deleted
      ? undefined
      : podWorkload(
          pod,
          (n, rs) => this.replicaSets.lw.get(rs, n) as { metadata?: V1ReplicaSet['metadata'] } | undefined,
        );
    if (prev && (!wl || workloadKey(prev) !== workloadKey(wl))) this.tracker.observe(prev, member, undefined);
    if (!wl) {
      this.podWorkloads.delete(key);
      this.kick();
      return undefined;
    }
    this.podWorkloads.set(key, wl);
    const failure = podFailure(pod, now, this.thresholds());
    this.observe(wl, member, failure, `${ns}/Pod/${name}`);
    const rs = controllerOf(pod.metadata as never);
    if (failure && rs?.kind === 'ReplicaSet' && REVISION_FAILURES.has(failure.type))
      this.changes?.onFailure(ns, rs.name, {
        signal: failure.type,
        reason: failure.reason,
        ...(failure.exitCode !== undefined && { exitCode: failure.exitCode }),
        at: new Date(now),
      });
    this.kick();
    return wl;
  }

  private onDeployment(d: V1Deployment, deleted: boolean, now: number): WorkloadRef {
    const ref: WorkloadRef = {
      namespace: d.metadata?.namespace ?? '',
      kind: 'Deployment',
      name: d.metadata?.name ?? '',
    };
    const key = workloadKey(ref);
    if (deleted || !((d.status?.unavailableReplicas ?? 0) > 0)) this.unavailableSince.delete(key);
    else if (!this.unavailableSince.has(key)) this.unavailableSince.set(key, now);
    const failure = deleted ? undefined : deploymentFailure(d, now, this.thresholds(), this.unavailableSince.get(key));
    if (failure?.reason === 'ProgressDeadlineExceeded')
      this.changes?.onRolloutFailure(d, { signal: failure.type, reason: failure.reason, at: new Date(now) });
    this.observe(ref, `Deployment/${ref.name}`, failure, `${ref.namespace}/Deployment/${ref.name}`);
    return ref;
  }

  private onNode(n: V1Node, deleted: boolean): WorkloadRef {
    const ref = nodeWorkload(n.metadata?.name ?? '');
    this.observe(ref, `Node/${ref.name}`, deleted ? undefined : nodeFailure(n), `/Node/${ref.name}`);
    return ref;
  }

  private onEvent(e: CoreV1Event): void {
    this.stats.warningEvents++;
    const o = e.involvedObject;
    if (!o?.kind || !o.name) return;
    const key = `${o.namespace ?? ''}/${o.kind}/${o.name}`;
    this.evidence.delete(key); // re-insert: the Map's order is recency
    this.evidence.set(key, {
      reason: e.reason ?? '',
      message: (e.message ?? '').slice(0, 300),
      count: e.count ?? e.series?.count ?? 1,
    });
    if (this.evidence.size > EVIDENCE_CAP) this.evidence.delete(this.evidence.keys().next().value as string);
  }

  private observe(ref: WorkloadRef, member: string, failure: Failure | undefined, evidenceKey: string): void {
    try {
      this.tracker.observe(ref, member, failure, failure ? this.evidence.get(evidenceKey) : undefined);
    } catch (err) {
      // An object Foghorn cannot name as a signal (it would fail the signal schema): skip it,
      // never let it break the informer's callback chain.
      this.log.warn('cluster watch skipped an object', {
        cluster: this.opts.cluster,
        workload: workloadKey(ref),
        member,
        ...errorFields(err),
      });
    }
  }

  /**
   * Everything again against the clock (thresholds), and every tracked member the caches no
   * longer hold is gone (deleted while a watch was down, or while this worker was dead).
   */
  private reevaluate(): void {
    if (this.stopped) return;
    const now = Date.now();
    const seen = new Set<string>();
    const mark = (ref: WorkloadRef | undefined, member: string) => ref && seen.add(`${workloadKey(ref)}|${member}`);
    for (const pod of this.pods.lw.list()) mark(this.onPod(pod, false, now), `Pod/${pod.metadata?.name}`);
    for (const d of this.deployments.lw.list())
      mark(this.onDeployment(d, false, now), `Deployment/${d.metadata?.name}`);
    for (const n of this.nodes.lw.list()) mark(this.onNode(n, false), `Node/${n.metadata?.name}`);
    this.changes?.reevaluate(now);
    if (this.ready)
      for (const ref of this.tracker.workloadRefs())
        for (const m of this.tracker.members(ref))
          if (!seen.has(`${workloadKey(ref)}|${m}`)) this.tracker.observe(ref, m, undefined);
    this.kick();
  }

  // --- delivery --------------------------------------------------------------------------

  private kick(): void {
    if (!this.ready || this.stopped) return;
    for (const key of this.tracker.takeDirty()) this.queued.add(key);
    if (Date.now() < this.pausedUntil) return;
    const limit = this.opts.concurrency ?? 4;
    for (const key of [...this.queued]) {
      if (this.running >= limit) break;
      if (this.inFlight.has(key)) continue;
      this.queued.delete(key);
      this.inFlight.add(key);
      this.running++;
      void this.deliverWorkload(key).finally(() => {
        this.inFlight.delete(key);
        this.running--;
        if (this.isIdle()) for (const w of this.idleWaiters.splice(0)) w();
        this.kick();
      });
    }
  }

  /** Sends a workload's signals in order until it has none or ingestion is unavailable. */
  private async deliverWorkload(key: string): Promise<void> {
    for (let action = this.tracker.next(key); action && !this.stopped; action = this.tracker.next(key)) {
      if (Date.now() < this.pausedUntil) {
        this.queued.add(key);
        return;
      }
      try {
        await this.opts.deliver(action.signal, action.status);
      } catch (err) {
        this.stats.deliveryErrors++;
        if ((err instanceof ApiError && err.status >= 400 && err.status < 500) || err instanceof ZodError) {
          this.log.warn('cluster watch signal refused by ingestion; dropped', {
            cluster: this.opts.cluster,
            workload: key,
            ...errorFields(err),
          });
          this.tracker.drop(action);
          continue;
        }
        this.pauseDelivery(key, err);
        return;
      }
      this.delivered(action);
    }
  }

  private delivered(action: WatchAction): void {
    this.tracker.done(action);
    this.pauseAttempt = 0;
    if (action.status === 'firing') this.stats.firing++;
    else this.stats.resolved++;
  }

  /** Ingestion unavailable (Temporal or MongoDB down): keep everything, try again after a back-off. */
  private pauseDelivery(key: string, err: unknown): void {
    this.queued.add(key);
    const delay = backoffMs(this.pauseAttempt++);
    this.pausedUntil = Math.max(this.pausedUntil, Date.now() + delay);
    this.log.warn('cluster watch cannot deliver a signal; retrying', {
      cluster: this.opts.cluster,
      workload: key,
      retryInMs: delay,
      ...errorFields(err),
    });
    if (this.stopped) return; // no retry timer after stop(): the checkpoint keeps the signal
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => this.kick(), this.pausedUntil - Date.now() + 5);
  }
}
