import { resourceKey } from '../../domain/incident';
import { signalSchema } from '../../contracts/incidents';
import { nodeWorkload, parseWorkloadKey, podWorkload, workloadKey, type KubeMeta } from '../../domain/kube-owners';
import {
  deploymentFailure,
  failureSignal,
  nodeFailure,
  podFailure,
  recoverySignal,
  WATCHER_DETECTION_SOURCE,
  type ContainerStatus,
  type PodLike,
} from '../../domain/kube-signals';
import { FailureTracker, type WatchAction } from '../../domain/kube-watch-state';
import { watchCheckpointSchema } from '../../contracts/kube-watch';

const NOW = Date.parse('2026-11-23T12:00:00Z');
const ago = (ms: number) => new Date(NOW - ms).toISOString();
const TH = { notReadyAfterMs: 5 * 60_000 };

/** A pod of Deployment `checkout` (ReplicaSet checkout-7d9f8b6c5), as the API server returns it. */
function pod(name: string, containers: ContainerStatus[], conditions: PodLike['status'] = {}): PodLike {
  return {
    metadata: {
      name,
      namespace: 'shop',
      labels: { app: 'checkout', 'pod-template-hash': '7d9f8b6c5' },
      ownerReferences: [{ kind: 'ReplicaSet', name: 'checkout-7d9f8b6c5', controller: true }],
    },
    spec: { nodeName: 'node-1' },
    status: { phase: 'Running', containerStatuses: containers, ...conditions },
  };
}

const crashLooping = (name = 'app', restartCount = 5): ContainerStatus => ({
  name,
  ready: false,
  restartCount,
  state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 2m40s restarting failed container=app' } },
  lastState: { terminated: { reason: 'Error', exitCode: 1, finishedAt: ago(20_000) } },
});
const oomKilled = (): ContainerStatus => ({
  name: 'app',
  ready: false,
  restartCount: 3,
  state: { waiting: { reason: 'CrashLoopBackOff' } },
  lastState: { terminated: { reason: 'OOMKilled', exitCode: 137, finishedAt: new Date(NOW - 10_000) } },
});
const healthy = (): ContainerStatus => ({ name: 'app', ready: true, restartCount: 0, state: { running: {} } });

describe('owner mapping', () => {
  const rsCache = new Map<string, { metadata: KubeMeta }>([
    [
      'shop/checkout-7d9f8b6c5',
      {
        metadata: {
          name: 'checkout-7d9f8b6c5',
          ownerReferences: [{ kind: 'Deployment', name: 'checkout', controller: true }],
        },
      },
    ],
    ['shop/bare-rs', { metadata: { name: 'bare-rs' } }],
  ]);
  const lookup = (ns: string, name: string) => rsCache.get(`${ns}/${name}`);

  it('maps a pod through its ReplicaSet to the Deployment', () => {
    expect(podWorkload(pod('checkout-7d9f8b6c5-abcde', []), lookup)).toEqual({
      namespace: 'shop',
      kind: 'Deployment',
      name: 'checkout',
    });
  });

  it('maps a pod whose ReplicaSet is not cached yet by the pod-template-hash suffix', () => {
    expect(podWorkload(pod('checkout-7d9f8b6c5-abcde', []), () => undefined)).toEqual({
      namespace: 'shop',
      kind: 'Deployment',
      name: 'checkout',
    });
  });

  it('maps StatefulSet and DaemonSet pods directly, bare and Job pods to themselves', () => {
    const owned = (kind: string, name: string) => ({
      metadata: { name: 'p-0', namespace: 'db', ownerReferences: [{ kind, name, controller: true }] },
    });
    expect(podWorkload(owned('StatefulSet', 'postgres'), lookup)).toEqual({
      namespace: 'db',
      kind: 'StatefulSet',
      name: 'postgres',
    });
    expect(podWorkload(owned('DaemonSet', 'fluentd'), lookup)).toEqual({
      namespace: 'db',
      kind: 'DaemonSet',
      name: 'fluentd',
    });
    expect(podWorkload(owned('Job', 'migrate'), lookup)).toEqual({ namespace: 'db', kind: 'Pod', name: 'p-0' });
    expect(podWorkload({ metadata: { name: 'debug', namespace: 'db' } }, lookup)).toEqual({
      namespace: 'db',
      kind: 'Pod',
      name: 'debug',
    });
    // A ReplicaSet nobody manages, and an owner reference that is not the controller.
    expect(
      podWorkload(
        {
          metadata: {
            name: 'x',
            namespace: 'shop',
            ownerReferences: [{ kind: 'ReplicaSet', name: 'bare-rs', controller: true }],
          },
        },
        lookup,
      ),
    ).toEqual({ namespace: 'shop', kind: 'Pod', name: 'x' });
    expect(
      podWorkload(
        { metadata: { name: 'y', namespace: 'shop', ownerReferences: [{ kind: 'StatefulSet', name: 's' }] } },
        lookup,
      ),
    ).toEqual({ namespace: 'shop', kind: 'Pod', name: 'y' });
  });

  it('files nodes under the default namespace and round-trips workload keys', () => {
    expect(nodeWorkload('worker-3')).toEqual({ namespace: 'default', kind: 'Node', name: 'worker-3' });
    const key = workloadKey({ namespace: 'shop', kind: 'Deployment', name: 'checkout' });
    expect(key).toBe('shop/Deployment/checkout');
    expect(parseWorkloadKey(key)).toEqual({ namespace: 'shop', kind: 'Deployment', name: 'checkout' });
    expect(parseWorkloadKey('shop/ReplicaSet/x')).toBeUndefined();
  });
});

describe('pod failures (kubelet semantics)', () => {
  it('CrashLoopBackOff from the waiting reason, with the last exit', () => {
    const f = podFailure(pod('p', [crashLooping()]), NOW, TH);
    expect(f).toMatchObject({
      type: 'CrashLoopBackOff',
      reason: 'CrashLoopBackOff',
      container: 'app',
      restartCount: 5,
      exitCode: 1,
    });
    expect(f!.message).toContain('last exit: Error, code 1');
  });

  it('stays CrashLoopBackOff between two back-offs (running again, not ready, recent non-zero exit)', () => {
    const between: ContainerStatus = { ...crashLooping(), state: { running: { startedAt: ago(2_000) } } };
    expect(podFailure(pod('p', [between]), NOW, TH)).toMatchObject({ type: 'CrashLoopBackOff', container: 'app' });
  });

  it('OOMKilled from the last termination wins over CrashLoopBackOff', () => {
    expect(podFailure(pod('p', [oomKilled()]), NOW, TH)).toMatchObject({
      type: 'OOMKilled',
      reason: 'OOMKilled',
      exitCode: 137,
      restartCount: 3,
    });
  });

  it('a ready container OOMKilled long ago is healthy; recently, it still counts', () => {
    const old: ContainerStatus = {
      ...healthy(),
      restartCount: 1,
      lastState: { terminated: { reason: 'OOMKilled', exitCode: 137, finishedAt: ago(3_600_000) } },
    };
    expect(podFailure(pod('p', [old]), NOW, TH)).toBeUndefined();
    const recent: ContainerStatus = {
      ...old,
      lastState: { terminated: { reason: 'OOMKilled', exitCode: 137, finishedAt: ago(30_000) } },
    };
    expect(podFailure(pod('p', [recent]), NOW, TH)).toMatchObject({ type: 'OOMKilled' });
  });

  it('ImagePullBackOff, ErrImagePull and InvalidImageName are ImagePullBackOff, also in init containers', () => {
    for (const reason of ['ImagePullBackOff', 'ErrImagePull', 'InvalidImageName']) {
      const c: ContainerStatus = {
        name: 'app',
        ready: false,
        restartCount: 0,
        state: { waiting: { reason, message: 'not found' } },
      };
      expect(podFailure(pod('p', [c]), NOW, TH)).toMatchObject({ type: 'ImagePullBackOff', reason });
    }
    const p = pod('p', [{ name: 'app', ready: false, state: { waiting: { reason: 'PodInitializing' } } }]);
    p.status!.initContainerStatuses = [{ name: 'init', ready: false, state: { waiting: { reason: 'ErrImagePull' } } }];
    expect(podFailure(p, NOW, TH)).toMatchObject({ type: 'ImagePullBackOff', container: 'init' });
  });

  it('PodNotReady only once Ready=False has lasted the threshold', () => {
    const notReady = (since: number) =>
      pod('p', [{ name: 'app', ready: false, restartCount: 0, state: { running: {} } }], {
        conditions: [{ type: 'Ready', status: 'False', reason: 'ContainersNotReady', lastTransitionTime: ago(since) }],
      });
    expect(podFailure(notReady(60_000), NOW, TH)).toBeUndefined();
    expect(podFailure(notReady(6 * 60_000), NOW, TH)).toMatchObject({
      type: 'PodNotReady',
      reason: 'ContainersNotReady',
      container: 'app',
    });
  });

  it('an unschedulable pod is PodNotReady after the threshold', () => {
    const p: PodLike = {
      metadata: { name: 'p', namespace: 'shop' },
      status: {
        phase: 'Pending',
        conditions: [
          {
            type: 'PodScheduled',
            status: 'False',
            reason: 'Unschedulable',
            message: '0/3 nodes are available',
            lastTransitionTime: new Date(NOW - 600_000),
          },
        ],
      },
    };
    expect(podFailure(p, NOW, TH)).toMatchObject({ type: 'PodNotReady', reason: 'Unschedulable' });
  });

  it('healthy, terminating and completed pods are not failures', () => {
    expect(
      podFailure(pod('p', [healthy()], { conditions: [{ type: 'Ready', status: 'True' }] }), NOW, TH),
    ).toBeUndefined();
    const terminating = pod('p', [crashLooping()]);
    terminating.metadata!.deletionTimestamp = ago(1000);
    expect(podFailure(terminating, NOW, TH)).toBeUndefined();
    const done = pod('p', [], {
      phase: 'Succeeded',
      conditions: [{ type: 'Ready', status: 'False', reason: 'PodCompleted', lastTransitionTime: ago(3_600_000) }],
    });
    expect(podFailure(done, NOW, TH)).toBeUndefined();
  });
});

describe('deployment and node failures', () => {
  const dep = (status: object, spec: object = { replicas: 3 }) => ({
    metadata: { name: 'checkout', namespace: 'shop' },
    spec,
    status,
  });

  it('ProgressDeadlineExceeded is DeploymentFailing at once', () => {
    const d = dep({
      unavailableReplicas: 1,
      conditions: [
        {
          type: 'Progressing',
          status: 'False',
          reason: 'ProgressDeadlineExceeded',
          message: 'ReplicaSet "checkout-1" has timed out progressing.',
        },
      ],
    });
    expect(deploymentFailure(d, NOW, TH)).toMatchObject({
      type: 'DeploymentFailing',
      reason: 'ProgressDeadlineExceeded',
    });
  });

  it('unavailable replicas count once they lasted the threshold (Available=False time, or first seen)', () => {
    const d = dep({
      replicas: 3,
      unavailableReplicas: 2,
      conditions: [{ type: 'Available', status: 'False', lastTransitionTime: ago(60_000) }],
    });
    expect(deploymentFailure(d, NOW, TH)).toBeUndefined();
    expect(deploymentFailure(d, NOW + 5 * 60_000, TH)).toMatchObject({
      type: 'DeploymentFailing',
      reason: 'UnavailableReplicas',
    });
    const stillAvailable = dep({
      replicas: 4,
      unavailableReplicas: 1,
      conditions: [{ type: 'Available', status: 'True' }],
    });
    expect(deploymentFailure(stillAvailable, NOW, TH)).toBeUndefined();
    expect(deploymentFailure(stillAvailable, NOW, TH, NOW - 10 * 60_000)!.message).toContain(
      '1 of 3 replicas unavailable',
    );
    expect(deploymentFailure(dep({ unavailableReplicas: 0 }), NOW, TH, NOW - 10 * 60_000)).toBeUndefined();
    expect(
      deploymentFailure(dep({ unavailableReplicas: 2 }, { replicas: 3, paused: true }), NOW, TH, NOW - 10 * 60_000),
    ).toBeUndefined();
  });

  it('a node with Ready False or Unknown is NotReady', () => {
    const node = (status: string) => ({
      metadata: { name: 'node-1' },
      status: { conditions: [{ type: 'Ready', status, reason: 'KubeletNotReady' }] },
    });
    expect(nodeFailure(node('True'))).toBeUndefined();
    expect(nodeFailure(node('False'))).toMatchObject({ type: 'Custom', reason: 'NodeNotReady' });
    expect(nodeFailure(node('Unknown'))!.message).toContain('Ready=Unknown');
  });
});

describe('signals', () => {
  const workload = { namespace: 'shop', kind: 'Deployment' as const, name: 'checkout' };

  it('a failing pod becomes a schema-valid signal on its workload, deduplicated with the cluster', () => {
    const f = podFailure(pod('checkout-7d9f8b6c5-abcde', [oomKilled()]), NOW, TH)!;
    const s = failureSignal('prod-eu', workload, 'Pod/checkout-7d9f8b6c5-abcde', f, {
      reason: 'BackOff',
      message: 'Back-off restarting failed container',
      count: 7,
    });
    expect(signalSchema.parse(s)).toEqual(s);
    expect(s).toMatchObject({
      resource: 'Deployment/checkout',
      namespace: 'shop',
      cluster: 'prod-eu',
      signalType: 'OOMKilled',
      severity: 'high',
      detectionSource: WATCHER_DETECTION_SOURCE,
      labels: {
        object: 'Pod/checkout-7d9f8b6c5-abcde',
        pod: 'checkout-7d9f8b6c5-abcde',
        deployment: 'checkout',
        namespace: 'shop',
        container: 'app',
        reason: 'OOMKilled',
        restartCount: '3',
        exitCode: '137',
        event: 'BackOff',
      },
    });
    expect(s.description).toContain('Back-off restarting failed container (×7)');
    expect(resourceKey(s)).toBe('prod-eu/shop/Deployment/checkout');
  });

  it('a NotReady node is a critical Custom signal on Node/<name>', () => {
    const s = failureSignal(
      'local',
      nodeWorkload('node-1'),
      'Node/node-1',
      nodeFailure({ metadata: { name: 'node-1' }, status: { conditions: [{ type: 'Ready', status: 'Unknown' }] } })!,
    );
    expect(s).toMatchObject({
      resource: 'Node/node-1',
      namespace: 'default',
      signalType: 'Custom',
      severity: 'critical',
      labels: { node: 'node-1', reason: 'NodeNotReady', object: 'Node/node-1' },
    });
    expect(recoverySignal('local', nodeWorkload('node-1'))).toMatchObject({
      resource: 'Node/node-1',
      detectionSource: WATCHER_DETECTION_SOURCE,
    });
  });
});

describe('failure tracker', () => {
  const dep = { namespace: 'shop', kind: 'Deployment' as const, name: 'checkout' };
  const crash = podFailure(pod('a', [crashLooping()]), NOW, TH)!;
  const oom = podFailure(pod('a', [oomKilled()]), NOW, TH)!;

  /** Delivers everything the tracker wants sent; returns what was sent. */
  function drain(t: FailureTracker): WatchAction[] {
    const sent: WatchAction[] = [];
    for (const key of t.takeDirty())
      for (let a = t.next(key); a; a = t.next(key)) {
        sent.push(a);
        t.done(a);
      }
    return sent;
  }
  const summary = (actions: WatchAction[]) =>
    actions.map((a) => (a.status === 'firing' ? `firing ${a.member} ${a.type}` : `resolved ${a.workload}`));

  it('first failing pod opens, the others join once each, recovery of all resolves', () => {
    const t = new FailureTracker({ cluster: 'local', maxSignalsPerWorkload: 50 });
    t.observe(dep, 'Pod/a', crash);
    t.observe(dep, 'Pod/b', crash);
    expect(summary(drain(t))).toEqual(['firing Pod/a CrashLoopBackOff', 'firing Pod/b CrashLoopBackOff']);
    // restartCount rising is the same failure: nothing new
    t.observe(dep, 'Pod/a', { ...crash, restartCount: 9 });
    t.observe(dep, 'Pod/c', crash);
    expect(summary(drain(t))).toEqual(['firing Pod/c CrashLoopBackOff']);
    // another type for a known pod is news
    t.observe(dep, 'Pod/a', oom);
    expect(summary(drain(t))).toEqual(['firing Pod/a OOMKilled']);
    t.observe(dep, 'Pod/a', undefined);
    t.observe(dep, 'Pod/b', undefined);
    expect(drain(t)).toEqual([]);
    t.observe(dep, 'Pod/c', undefined);
    const last = drain(t);
    expect(summary(last)).toEqual(['resolved shop/Deployment/checkout']);
    expect(last[0].signal).toMatchObject({ resource: 'Deployment/checkout', signalType: 'OOMKilled' });
    expect(t.stats()).toEqual({ workloads: 0, failingMembers: 0, pending: 0, open: 0 });
  });

  it('keeps undelivered signals until ingestion takes them, even when the pod recovered meanwhile', () => {
    const t = new FailureTracker({ cluster: 'local', maxSignalsPerWorkload: 50 });
    t.observe(dep, 'Pod/a', crash);
    const key = t.takeDirty()[0];
    expect(t.next(key)).toMatchObject({ status: 'firing', member: 'Pod/a' }); // delivery fails: not done()
    t.observe(dep, 'Pod/a', undefined);
    expect(summary(drain(t))).toEqual(['firing Pod/a CrashLoopBackOff', 'resolved shop/Deployment/checkout']);
  });

  it('caps the signals per incident', () => {
    const t = new FailureTracker({ cluster: 'local', maxSignalsPerWorkload: 3 });
    for (let i = 0; i < 10; i++) t.observe(dep, `Pod/p${i}`, crash);
    expect(drain(t)).toHaveLength(3);
    expect(t.stats()).toMatchObject({ failingMembers: 10, pending: 0, open: 1 });
  });

  it('resumes from a checkpoint: sends only what changed while it was down', () => {
    const before = new FailureTracker({ cluster: 'local', maxSignalsPerWorkload: 50 });
    const web = { namespace: 'shop', kind: 'Deployment' as const, name: 'web' };
    before.observe(dep, 'Pod/a', crash);
    before.observe(web, 'Pod/w', crash);
    drain(before);
    before.observe(dep, 'Pod/b', crash); // seen, not delivered before the crash
    const cp = watchCheckpointSchema.parse(JSON.parse(JSON.stringify(before.checkpoint({ pods: '42' }, new Map()))));
    expect(cp.resourceVersions).toEqual({ pods: '42' });

    const after = new FailureTracker({ cluster: 'local', maxSignalsPerWorkload: 50 });
    after.restore(cp);
    // The relist: a is still failing, b too, c failed while down; web recovered while down.
    after.observe(dep, 'Pod/a', { ...crash, restartCount: 12 });
    after.observe(dep, 'Pod/b', crash);
    after.observe(dep, 'Pod/c', crash);
    for (const ref of after.workloadRefs())
      for (const m of after.members(ref)) if (ref.name === 'web') after.observe(ref, m, undefined);
    expect(summary(drain(after)).sort()).toEqual([
      'firing Pod/b CrashLoopBackOff',
      'firing Pod/c CrashLoopBackOff',
      'resolved shop/Deployment/web',
    ]);
  });

  it('caps the rollout clocks a checkpoint carries', () => {
    const t = new FailureTracker({ cluster: 'local', maxSignalsPerWorkload: 50 });
    const since = new Map(Array.from({ length: 2_500 }, (_, i) => [`shop/Deployment/d${i}`, i] as [string, number]));
    const cp = t.checkpoint({}, since);
    expect(Object.keys(cp.unavailableSince)).toHaveLength(2_000);
    expect(cp.unavailableSince['shop/Deployment/d0']).toBe(0);
    expect(cp.unavailableSince['shop/Deployment/d1999']).toBe(1_999);
  });

  it('takes what ingestion already has as known (a crash after delivery, before the checkpoint)', () => {
    const t = new FailureTracker({ cluster: 'local', maxSignalsPerWorkload: 50 });
    t.knownToIngestion(dep, [['Pod/a', 'CrashLoopBackOff']], true);
    t.observe(dep, 'Pod/a', crash);
    t.observe(dep, 'Pod/b', crash);
    expect(summary(drain(t))).toEqual(['firing Pod/b CrashLoopBackOff']);
  });
});
