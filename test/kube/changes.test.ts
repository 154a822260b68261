import { AppsV1Api, CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { randomBytes } from 'crypto';
import { ClusterWatcher } from '../../activities/kube-watch/engine';
import type { ChangeSink } from '../../activities/kube-watch/changes';
import type { AvailabilitySample, Change, RevisionHealth } from '../../domain/changes';
import type { WatchCheckpoint } from '../../domain/kube-watch-state';
import { deploymentManifest, useKube, waitFor, type KubeCluster } from '../harness/kube';

/**
 * The change record against a real kube-apiserver with KWOK nodes (issue 60 §1–2): rollouts with
 * their template diff and author, a restart that is only a restart, Foghorn's own writes, scale,
 * a mounted ConfigMap and a Secret read from env (hashes only), node conditions, revision health;
 * and a hand-over through the checkpoint that loses no change and records none twice.
 */

jest.setTimeout(300_000);

let kube: KubeCluster;
let apps: AppsV1Api;
let core: CoreV1Api;

const SECRET_VALUE = 'hunter2-the-database-password';
/** One key for every watcher of the suite, as one FOGHORN_SECRET_KEY is for every worker. */
const HASH_KEY = randomBytes(32);

/** The store, in memory: every write as the watcher made it. */
function memorySink(shared?: Map<string, Change>) {
  const changes = shared ?? new Map<string, Change>();
  const writes: string[] = [];
  const revisions = new Map<string, RevisionHealth>();
  const samples: AvailabilitySample[] = [];
  const sink: ChangeSink = {
    changes: async (cs) => {
      for (const c of cs) {
        writes.push(c.id);
        if (!changes.has(c.id)) changes.set(c.id, c);
      }
    },
    revision: async (h) => {
      const k = `${h.resource}#${h.revision}`;
      const held = revisions.get(k);
      // The store's rule: a proven verdict is never taken back by a weaker one.
      const weaker = held?.state === 'Unobserved' || (held?.state === 'Progressing' && h.state !== 'Unobserved');
      if (!held || weaker || (held.state === 'Failed' && h.state === 'Healthy')) revisions.set(k, { ...held, ...h });
    },
    availability: async (s) => void samples.push(...s),
    latest: async () => {
      const newest = new Map<string, Change>();
      for (const c of [...changes.values()].sort((a, b) => b.at.getTime() - a.at.getTime()))
        if ((c.type === 'Scale' || c.type === 'Config') && !newest.has(`${c.namespace}/${c.resource}`))
          newest.set(`${c.namespace}/${c.resource}`, c);
      return [...newest.values()];
    },
  };
  return { sink, changes, writes, revisions, samples };
}

function watcher(sink: ChangeSink, checkpoint?: WatchCheckpoint) {
  const w = new ClusterWatcher({
    cluster: 'local',
    kc: kube.kc,
    thresholds: { notReadyAfterMs: 4_000 },
    deliver: async () => undefined,
    changes: { sink, hashKey: HASH_KEY, stableAfterMs: 1_000, retentionMs: 7 * 24 * 3600_000 },
  });
  if (checkpoint) w.restore(checkpoint);
  return w;
}

async function patchDeployment(name: string, body: object, fieldManager: string) {
  await apps.patchNamespacedDeployment(
    { name, namespace: 'default', body, fieldManager },
    setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
  );
}

const find = (m: Map<string, Change>, pred: (c: Change) => boolean) => [...m.values()].find(pred);

beforeAll(async () => {
  kube = await useKube();
  await kube.addNode('node-a');
  apps = kube.kc.makeApiClient(AppsV1Api);
  core = kube.kc.makeApiClient(CoreV1Api);
});

afterAll(async () => {
  await kube?.stop();
});

it('records rollouts, restarts, scale, config and node changes with who made them, and revision health', async () => {
  const mem = memorySink();
  const w = watcher(mem.sink);
  await w.start();
  try {
    await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'checkout-config' }, data: { 'app.yaml': 'timeout: 5s' } },
    });
    await core.createNamespacedSecret({
      namespace: 'default',
      body: { metadata: { name: 'checkout-db' }, stringData: { password: SECRET_VALUE } },
    });
    const manifest = deploymentManifest('checkout', 2);
    manifest.spec!.template.spec!.containers[0].image = 'checkout:1';
    manifest.spec!.template.spec!.containers[0].env = [
      { name: 'DB_PASSWORD', valueFrom: { secretKeyRef: { name: 'checkout-db', key: 'password' } } },
    ];
    manifest.spec!.template.spec!.containers[0].volumeMounts = [{ name: 'config', mountPath: '/etc/checkout' }];
    manifest.spec!.template.spec!.volumes = [{ name: 'config', configMap: { name: 'checkout-config' } }];
    await apps.createNamespacedDeployment({ namespace: 'default', body: manifest });

    // Revision 1 becomes healthy once fully available for the stability window.
    await waitFor('revision 1 healthy', async () => mem.revisions.get('Deployment/checkout#1')?.state === 'Healthy');
    const first = find(mem.changes, (c) => c.resource === 'Deployment/checkout' && c.revision === 1);
    expect(first).toMatchObject({ type: 'Rollout', namespace: 'default' });

    // A bad deploy: image checkout:2 whose pods crash-loop.
    await patchDeployment(
      'checkout',
      {
        metadata: { annotations: { 'kubernetes.io/change-cause': 'deploy checkout 2' } },
        spec: {
          template: {
            metadata: { labels: { sim: 'crashloop' } },
            spec: { containers: [{ name: 'app', image: 'checkout:2' }] },
          },
        },
      },
      'kubectl-client-side-apply',
    );
    await waitFor('revision 2 recorded', async () => !!find(mem.changes, (c) => c.revision === 2));
    const rollout = find(mem.changes, (c) => c.revision === 2)!;
    expect(rollout).toMatchObject({
      type: 'Rollout',
      previousRevision: 1,
      by: { manager: 'kubectl-client-side-apply', foghorn: false },
    });
    expect(rollout.diff).toContainEqual({ field: 'image app', from: 'checkout:1', to: 'checkout:2' });
    expect(rollout.summary).toContain('revision 2 of default/Deployment/checkout replaced 1');
    await waitFor('revision 2 failed', async () => mem.revisions.get('Deployment/checkout#2')?.state === 'Failed');
    expect(mem.revisions.get('Deployment/checkout#2')!.failure).toMatchObject({
      signal: 'CrashLoopBackOff',
      exitCode: 1,
    });
    expect(mem.revisions.get('Deployment/checkout#2')!.images).toEqual(['app=checkout:2']);

    // Foghorn's own restart (its field manager, the restart annotation): a restart, marked Foghorn's.
    await patchDeployment(
      'checkout',
      {
        spec: {
          template: { metadata: { annotations: { 'kubectl.kubernetes.io/restartedAt': new Date().toISOString() } } },
        },
      },
      'foghorn',
    );
    await waitFor('revision 3 recorded', async () => !!find(mem.changes, (c) => c.revision === 3));
    expect(find(mem.changes, (c) => c.revision === 3)).toMatchObject({
      type: 'Restart',
      previousRevision: 2,
      by: { manager: 'foghorn', foghorn: true },
      diff: [],
    });

    // Scale through the scale subresource.
    await apps.patchNamespacedDeploymentScale(
      { name: 'checkout', namespace: 'default', body: { spec: { replicas: 3 } }, fieldManager: 'hpa-like' },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await waitFor('scale recorded', async () => !!find(mem.changes, (c) => c.type === 'Scale'));
    expect(find(mem.changes, (c) => c.type === 'Scale')).toMatchObject({
      diff: [{ field: 'replicas', from: '2', to: '3' }],
      by: { manager: 'hpa-like' },
    });

    // The mounted ConfigMap and the Secret the container reads change.
    await core.patchNamespacedConfigMap(
      { name: 'checkout-config', namespace: 'default', body: { data: { 'app.yaml': 'timeout: 1ms' } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await core.patchNamespacedSecret(
      { name: 'checkout-db', namespace: 'default', body: { stringData: { password: `${SECRET_VALUE}-rotated` } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await waitFor('config changes recorded', async () =>
      ['ConfigMap/checkout-config', 'Secret/checkout-db'].every((r) => find(mem.changes, (c) => c.resource === r)),
    );
    const cm = find(mem.changes, (c) => c.resource === 'ConfigMap/checkout-config')!;
    expect(cm).toMatchObject({ type: 'Config', workloads: ['Deployment/checkout'] });
    expect(cm.diff).toContainEqual({ field: 'keys', from: '', to: 'changed app.yaml' });
    const secret = find(mem.changes, (c) => c.resource === 'Secret/checkout-db')!;
    expect(secret.diff[0].field).toBe('content hash');
    expect(secret.diff[0].from).not.toBe(secret.diff[0].to);

    // A node going NotReady.
    await core.patchNode(
      { name: 'node-a', body: { metadata: { labels: { 'node-not-ready.stage.kwok.x-k8s.io': 'true' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await waitFor('node condition recorded', async () => !!find(mem.changes, (c) => c.type === 'NodeCondition'));
    expect(find(mem.changes, (c) => c.type === 'NodeCondition')).toMatchObject({
      resource: 'Node/node-a',
      diff: [{ field: 'Ready', from: 'True', to: 'False' }],
    });
    await core.patchNode(
      { name: 'node-a', body: { metadata: { labels: { 'node-not-ready.stage.kwok.x-k8s.io': null } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );

    // No Secret value anywhere in what was recorded, nor in the checkpoint.
    const everything = JSON.stringify([...mem.changes.values(), ...mem.revisions.values(), w.checkpoint()]);
    expect(everything).not.toContain(SECRET_VALUE);
    expect(everything).not.toContain(Buffer.from(SECRET_VALUE).toString('base64'));
    // Each change written once.
    expect(new Set(mem.writes).size).toBe(mem.writes.length);
  } finally {
    await w.stop();
  }
});

it('a watcher that takes over from a checkpoint records what changed meanwhile, and nothing twice', async () => {
  const before = memorySink();
  const first = watcher(before.sink);
  await first.start();
  const manifest = deploymentManifest('cart', 1);
  manifest.spec!.template.spec!.containers[0].image = 'cart:1';
  await apps.createNamespacedDeployment({ namespace: 'default', body: manifest });
  await waitFor('cart revision 1', async () => !!find(before.changes, (c) => c.resource === 'Deployment/cart'));
  await first.changesStored(10_000);
  const checkpoint = first.checkpoint();
  await first.stop();
  expect(checkpoint.changes?.revisions['default/Deployment/cart']).toBe(1);

  // Two rollouts while nobody watches.
  await patchDeployment(
    'cart',
    { spec: { template: { spec: { containers: [{ name: 'app', image: 'cart:2' }] } } } },
    'ci',
  );
  await waitFor(
    'cart revision 2 exists',
    async () =>
      (await apps.readNamespacedDeployment({ name: 'cart', namespace: 'default' })).metadata?.annotations?.[
        'deployment.kubernetes.io/revision'
      ] === '2',
  );
  await patchDeployment(
    'cart',
    { spec: { template: { spec: { containers: [{ name: 'app', image: 'cart:3' }] } } } },
    'ci',
  );
  // The controller has made revision 3 before anyone watches again: revision 2 was never current while watched.
  await waitFor(
    'cart revision 3 exists',
    async () =>
      (await apps.readNamespacedDeployment({ name: 'cart', namespace: 'default' })).metadata?.annotations?.[
        'deployment.kubernetes.io/revision'
      ] === '3',
  );

  const after = memorySink();
  const second = watcher(after.sink, JSON.parse(JSON.stringify(checkpoint)) as WatchCheckpoint);
  await second.start();
  try {
    await waitFor('cart revisions 2 and 3', async () =>
      [2, 3].every((r) => find(after.changes, (c) => c.resource === 'Deployment/cart' && c.revision === r)),
    );
    await second.changesStored(10_000);
    const cart = [...after.changes.values()].filter((c) => c.resource === 'Deployment/cart');
    expect(cart.map((c) => c.revision).sort()).toEqual([2, 3]);
    expect(cart.find((c) => c.revision === 3)!.diff).toContainEqual({
      field: 'image app',
      from: 'cart:2',
      to: 'cart:3',
    });
    // Revision 2 was replaced before anyone saw it run.
    expect(after.revisions.get('Deployment/cart#2')?.state).toBe('Unobserved');
    expect(['Progressing', 'Healthy']).toContain(after.revisions.get('Deployment/cart#3')?.state);
    // Nothing the first watcher stored is written again (checkout's history included).
    expect(after.writes.filter((id) => before.changes.has(id))).toEqual([]);
  } finally {
    await second.stop();
  }
});

it('records StatefulSet and DaemonSet rollouts from their ControllerRevisions', async () => {
  const mem = memorySink();
  const w = watcher(mem.sink);
  await w.start();
  try {
    const template = (image: string) => ({
      metadata: { labels: { app: 'db' } },
      spec: { containers: [{ name: 'db', image }] },
    });
    await apps.createNamespacedStatefulSet({
      namespace: 'default',
      body: {
        metadata: { name: 'db' },
        spec: { serviceName: 'db', replicas: 1, selector: { matchLabels: { app: 'db' } }, template: template('db:1') },
      },
    });
    await apps.createNamespacedDaemonSet({
      namespace: 'default',
      body: {
        metadata: { name: 'agent' },
        spec: { selector: { matchLabels: { app: 'db' } }, template: template('agent:1') },
      },
    });
    await waitFor('first revisions', async () =>
      ['StatefulSet/db', 'DaemonSet/agent'].every((r) => find(mem.changes, (c) => c.resource === r)),
    );
    await apps.patchNamespacedStatefulSet(
      { name: 'db', namespace: 'default', body: { spec: { template: template('db:2') } }, fieldManager: 'helm' },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    await apps.patchNamespacedDaemonSet(
      { name: 'agent', namespace: 'default', body: { spec: { template: template('agent:2') } }, fieldManager: 'helm' },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    await waitFor('second revisions', async () =>
      ['StatefulSet/db', 'DaemonSet/agent'].every((r) =>
        find(mem.changes, (c) => c.resource === r && c.revision === 2),
      ),
    );
    expect(find(mem.changes, (c) => c.resource === 'StatefulSet/db' && c.revision === 2)).toMatchObject({
      type: 'Rollout',
      previousRevision: 1,
      diff: [{ field: 'image db', from: 'db:1', to: 'db:2' }],
      by: { manager: 'helm' },
    });
    expect(find(mem.changes, (c) => c.resource === 'DaemonSet/agent' && c.revision === 2)!.diff).toEqual([
      { field: 'image db', from: 'agent:1', to: 'agent:2' },
    ]);
  } finally {
    await w.stop();
  }
});

it('a checkpoint behind the store (heartbeats are throttled) records no scale or config change twice', async () => {
  const store = new Map<string, Change>();
  const first = memorySink(store);
  const w1 = watcher(first.sink);
  await w1.start();
  await core.createNamespacedConfigMap({
    namespace: 'default',
    body: { metadata: { name: 'orders-config' }, data: { 'a.yaml': 'one' } },
  });
  const manifest = deploymentManifest('orders', 1);
  manifest.spec!.template.spec!.volumes = [{ name: 'c', configMap: { name: 'orders-config' } }];
  await apps.createNamespacedDeployment({ namespace: 'default', body: manifest });
  await waitFor('orders revision 1', async () => !!find(store, (c) => c.resource === 'Deployment/orders'));
  await w1.changesStored(10_000);
  const stale = JSON.parse(JSON.stringify(w1.checkpoint())) as WatchCheckpoint;
  expect(stale.changes?.configs['default/ConfigMap/orders-config']).toBeDefined();

  // Stored, but the checkpoint handed over is from before (the kill came before the next heartbeat).
  await apps.patchNamespacedDeploymentScale(
    { name: 'orders', namespace: 'default', body: { spec: { replicas: 2 } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
  await core.patchNamespacedConfigMap(
    { name: 'orders-config', namespace: 'default', body: { data: { 'a.yaml': 'two' } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
  await waitFor('scale and config stored', async () =>
    ['Scale', 'Config'].every((t) => find(store, (c) => c.resource.includes('orders') && c.type === t)),
  );
  await w1.stop();
  const configBefore = find(store, (c) => c.resource === 'ConfigMap/orders-config')!;

  // While nobody watches: a rollout (a new generation) and another config change.
  await patchDeployment(
    'orders',
    { spec: { template: { spec: { containers: [{ name: 'app', image: 'o:2' }] } } } },
    'ci',
  );
  await core.patchNamespacedConfigMap(
    { name: 'orders-config', namespace: 'default', body: { data: { 'a.yaml': 'three' } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );

  const second = memorySink(store);
  const w2 = watcher(second.sink, stale);
  await w2.start();
  try {
    await waitFor(
      'the second config change',
      async () => [...store.values()].filter((c) => c.resource === 'ConfigMap/orders-config').length === 2,
    );
    await waitFor(
      'orders revision 2',
      async () => !!find(store, (c) => c.resource === 'Deployment/orders' && c.revision === 2),
    );
    await w2.changesStored(10_000);
    expect([...store.values()].filter((c) => c.type === 'Scale' && c.resource === 'Deployment/orders')).toHaveLength(1);
    const configAfter = [...store.values()].find(
      (c) => c.resource === 'ConfigMap/orders-config' && c.id !== configBefore.id,
    )!;
    // Diffed against the stored change, not against the stale checkpoint's content.
    expect(configAfter.diff[0].from).toBe(configBefore.diff[0].to);
  } finally {
    await w2.stop();
  }
});
