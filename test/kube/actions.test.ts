import { activityRunner } from '../harness/activity';
import { AppsV1Api, CoreV1Api, PatchStrategy, setHeaderOptions, type V1ReplicaSet } from '@kubernetes/client-node';
import { ApplicationFailure } from '@temporalio/common';
import { createServer, type Socket } from 'net';
import { createKubeActionActivities } from '../../activities/kube-actions';
import { kubeconfigYaml } from '../../cli/embedded/kube';
import { RESTARTED_AT_ANNOTATION, REVISION_ANNOTATION } from '../../domain/kube-actions';
import { findKubeAction } from '../../store/kube-actions';
import { KubeActionModel } from '../../store/models/kube-action';
import { registerTestCluster, useRegisteredKube } from '../clusters/fixtures';
import { markRevision } from '../fixtures/revisions';
import { waitFor, type KubeCluster } from '../harness/kube';

// Each Kubernetes action against a real API server (with its controllers and KWOK's fake
// kubelet): applied and observed through the server, applied once per key, failures classified.

const activities = createKubeActionActivities();
const run = activityRunner(activities);

/** The failure an activity threw (fails the test when it did not throw one). */
async function failure(promise: Promise<unknown>): Promise<ApplicationFailure> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApplicationFailure);
  return err as ApplicationFailure;
}

let env: Awaited<ReturnType<typeof useRegisteredKube>>;
let kube: KubeCluster;
let apps: AppsV1Api;
let core: CoreV1Api;
const ns = 'default';
const cluster = 'prod';

beforeAll(async () => {
  env = await useRegisteredKube(cluster);
  ({ kube, apps, core } = env);
  await registerTestCluster('locked', kubeconfigYaml(kube.server, kube.caData, kube.restrictedToken, 'restricted'));
}, 300_000);

afterAll(() => env?.stop(), 60_000);

async function createDeployment(name: string, replicas: number, image = `example.com/${name}:1`) {
  await apps.createNamespacedDeployment({
    namespace: ns,
    body: {
      metadata: { name, namespace: ns },
      spec: {
        replicas,
        selector: { matchLabels: { app: name } },
        template: {
          metadata: { labels: { app: name } },
          spec: { containers: [{ name: 'app', image }] },
        },
      },
    },
  });
  await waitFor(`${name} rolled out`, async () => {
    const d = await deploymentOf(name);
    return d.metadata?.annotations?.[REVISION_ANNOTATION] === '1' && (d.status?.availableReplicas ?? 0) === replicas;
  });
}

const deploymentOf = (name: string) => apps.readNamespacedDeployment({ name, namespace: ns });

async function replicaSetsOf(name: string): Promise<V1ReplicaSet[]> {
  const d = await deploymentOf(name);
  const sets = await apps.listNamespacedReplicaSet({ namespace: ns, labelSelector: `app=${name}` });
  return sets.items.filter((rs) => rs.metadata?.ownerReferences?.some((o) => o.uid === d.metadata?.uid));
}

/** Marks a done key pending again: what a worker killed after applying, before recording, leaves. */
const forgetCompletion = (key: string) =>
  KubeActionModel.updateOne({ key }, { $set: { state: 'pending' }, $unset: { result: 1, doneAt: 1 } });

describe('RestartDeployment', () => {
  beforeAll(() => createDeployment('web', 1), 120_000);

  test('sets restartedAt once per key: a new ReplicaSet, and a repeat writes nothing', async () => {
    const input = { key: 'RP-1/0', cluster, namespace: ns, deployment: 'web' };
    const first = await run('kubeRestartDeployment', input);
    expect(first).toMatchObject({
      key: 'RP-1/0',
      action: 'RestartDeployment',
      cluster,
      target: 'deployment default/web',
      before: { restartedAt: null },
      repeated: false,
    });
    const restartedAt = first.after.restartedAt;
    expect(new Date(restartedAt).toISOString()).toBe(restartedAt);

    const d = await deploymentOf('web');
    expect(d.spec?.template?.metadata?.annotations?.[RESTARTED_AT_ANNOTATION]).toBe(restartedAt);
    await waitFor('a second ReplicaSet with the restarted template', async () => {
      const sets = await replicaSetsOf('web');
      return (
        sets.length === 2 &&
        sets.some((rs) => rs.spec?.template?.metadata?.annotations?.[RESTARTED_AT_ANNOTATION] === restartedAt)
      );
    });
    const generation = (await deploymentOf('web')).metadata?.generation;

    const repeat = await run('kubeRestartDeployment', input);
    expect(repeat).toEqual({ ...first, repeated: true });

    // A worker killed after the patch, before recording it: the retry re-applies the same value.
    await forgetCompletion('RP-1/0');
    const retried = await run('kubeRestartDeployment', input);
    expect(retried).toEqual(first);
    expect((await findKubeAction('RP-1/0'))?.state).toBe('done');

    const after = await deploymentOf('web');
    expect(after.spec?.template?.metadata?.annotations?.[RESTARTED_AT_ANNOTATION]).toBe(restartedAt);
    expect(after.metadata?.generation).toBe(generation); // no spec change since the first apply
    expect(await replicaSetsOf('web')).toHaveLength(2);
  }, 120_000);

  test('a reused key with other parameters is refused', async () => {
    await createDeployment('other', 1);
    const err = await failure(
      run('kubeRestartDeployment', { key: 'RP-1/0', cluster, namespace: ns, deployment: 'other' }),
    );
    expect(err.nonRetryable).toBe(true);
    expect(err.type).toBe('KubeActionKeyReused');
    expect(err.message).toContain('RP-1/0');
    expect(
      (await deploymentOf('other')).spec?.template?.metadata?.annotations?.[RESTARTED_AT_ANNOTATION],
    ).toBeUndefined();

    const scale = await failure(
      run('kubeScaleDeployment', { key: 'RP-1/0', cluster, namespace: ns, deployment: 'web', replicas: 2 }),
    );
    expect(scale.type).toBe('KubeActionKeyReused');
  }, 120_000);
});

describe('ScaleDeployment', () => {
  test('changes replicas through the scale subresource and returns the replicas before', async () => {
    await createDeployment('scaled', 1);
    const input = { key: 'RP-2/0', cluster, namespace: ns, deployment: 'scaled', replicas: 3 };
    const first = await run('kubeScaleDeployment', input);
    expect(first).toMatchObject({ before: { replicas: 1 }, after: { replicas: 3 }, repeated: false });
    expect((await deploymentOf('scaled')).spec?.replicas).toBe(3);
    await waitFor('3 available', async () => (await deploymentOf('scaled')).status?.availableReplicas === 3);

    // Someone scales by hand; the repeat of the done key must not undo it, nor report new "before" values.
    await apps.patchNamespacedDeploymentScale(
      { name: 'scaled', namespace: ns, body: { spec: { replicas: 2 } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const repeat = await run('kubeScaleDeployment', input);
    expect(repeat).toEqual({ ...first, repeated: true });
    expect((await deploymentOf('scaled')).spec?.replicas).toBe(2);

    const down = await run('kubeScaleDeployment', { ...input, key: 'RP-2/1', replicas: 0 });
    expect(down).toMatchObject({ before: { replicas: 2 }, after: { replicas: 0 } });
    expect((await deploymentOf('scaled')).spec?.replicas).toBe(0);
  }, 120_000);
});

describe('AdjustResources', () => {
  test("sets a container's requests and limits and returns the values before", async () => {
    await createDeployment('sized', 1);
    const first = await run('kubeAdjustResources', {
      key: 'RP-3/0',
      cluster,
      namespace: ns,
      deployment: 'sized',
      container: 'app',
      requests: { cpu: '100m', memory: '128Mi' },
      limits: { memory: '256Mi' },
    });
    expect(first).toMatchObject({
      before: { container: 'app', requests: {}, limits: {} },
      after: { container: 'app', requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '256Mi' } },
    });
    let container = (await deploymentOf('sized')).spec?.template?.spec?.containers[0];
    expect(container?.resources).toEqual({ requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '256Mi' } });

    const second = await run('kubeAdjustResources', {
      key: 'RP-3/1',
      cluster,
      namespace: ns,
      deployment: 'sized',
      container: 'app',
      limits: { memory: '512Mi', cpu: '1' },
    });
    expect(second.before).toEqual({
      container: 'app',
      requests: { cpu: '100m', memory: '128Mi' },
      limits: { memory: '256Mi' },
    });
    expect(second.after.limits).toEqual({ memory: '512Mi', cpu: '1' });
    container = (await deploymentOf('sized')).spec?.template?.spec?.containers[0];
    expect(container?.resources).toEqual({
      requests: { cpu: '100m', memory: '128Mi' },
      limits: { memory: '512Mi', cpu: '1' },
    });
    expect(container?.image).toBe('example.com/sized:1');

    const missing = await failure(
      run('kubeAdjustResources', {
        key: 'RP-3/2',
        cluster,
        namespace: ns,
        deployment: 'sized',
        container: 'sidecar',
        limits: { cpu: '2' },
      }),
    );
    expect(missing).toMatchObject({ nonRetryable: true, type: 'KubeActionNotApplicable' });
    expect(missing.message).toContain('container sidecar not found in deployment default/sized in cluster prod');

    // A limit below the request: the API server's 422, not retried.
    const invalid = await failure(
      run('kubeAdjustResources', {
        key: 'RP-3/3',
        cluster,
        namespace: ns,
        deployment: 'sized',
        container: 'app',
        limits: { memory: '64Mi' },
      }),
    );
    expect(invalid).toMatchObject({ nonRetryable: true, type: 'KubeInvalid' });
    expect(invalid.message).toContain('deployment default/sized');
  }, 120_000);
});

describe('RollbackDeployment', () => {
  test("puts the newest healthy revision's template back, never one seen failing", async () => {
    await createDeployment('release', 1);
    const lone = await failure(
      run('kubeRollbackDeployment', { key: 'RP-4/0', cluster, namespace: ns, deployment: 'release' }),
    );
    expect(lone).toMatchObject({ nonRetryable: true, type: 'KubeActionNotApplicable' });
    expect(lone.message).toContain('(it has no earlier revision): no rollback');

    await apps.patchNamespacedDeployment(
      {
        name: 'release',
        namespace: ns,
        body: { spec: { template: { spec: { containers: [{ name: 'app', image: 'example.com/release:2' }] } } } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    await waitFor(
      'revision 2',
      async () => (await deploymentOf('release')).metadata?.annotations?.[REVISION_ANNOTATION] === '2',
    );

    // Revision 1 never seen healthy: no rollback to it.
    const where = { cluster, namespace: ns, deployment: 'release' };
    const unproven = await failure(run('kubeRollbackDeployment', { key: 'RP-4/2', ...where }));
    expect(unproven).toMatchObject({ nonRetryable: true, type: 'KubeActionNotApplicable' });
    expect(unproven.message).toContain('(revisions: 1 unknown): no rollback');
    await markRevision(apps, where, 1, 'Healthy');
    await markRevision(apps, where, 2, 'Failed');

    const input = { key: 'RP-4/1', ...where };
    const first = await run('kubeRollbackDeployment', input);
    expect(first).toMatchObject({
      before: { revision: 2, images: ['example.com/release:2'] },
      after: {
        revision: 1,
        images: ['example.com/release:1'],
        reason: expect.stringMatching(
          /^revision 1 \(app=example.com\/release:1\), the newest revision Foghorn saw healthy/,
        ),
      },
      repeated: false,
    });
    const d = await deploymentOf('release');
    expect(d.spec?.template?.spec?.containers[0].image).toBe('example.com/release:1');
    expect(d.spec?.template?.metadata?.labels).toEqual({ app: 'release' }); // no pod-template-hash
    await waitFor(
      'revision 3',
      async () => (await deploymentOf('release')).metadata?.annotations?.[REVISION_ANNOTATION] === '3',
    );
    expect(await replicaSetsOf('release')).toHaveLength(2); // the old ReplicaSet is reused, none new

    await forgetCompletion('RP-4/1');
    expect(await run('kubeRollbackDeployment', input)).toEqual(first);
    expect(await run('kubeRollbackDeployment', input)).toEqual({ ...first, repeated: true });
    const again = await deploymentOf('release');
    expect(again.spec?.template?.spec?.containers[0].image).toBe('example.com/release:1');
    expect(again.metadata?.annotations?.[REVISION_ANNOTATION]).toBe('3');
    expect(again.metadata?.generation).toBe(d.metadata?.generation);
  }, 180_000);
});

describe('DeletePod', () => {
  test('deletes the pod it found, once', async () => {
    await core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'solo', namespace: ns },
        spec: { containers: [{ name: 'app', image: 'example.com/solo:1' }] },
      },
    });
    await waitFor(
      'solo Running',
      async () => (await core.readNamespacedPod({ name: 'solo', namespace: ns })).status?.phase === 'Running',
    );
    const uid = (await core.readNamespacedPod({ name: 'solo', namespace: ns })).metadata?.uid;

    const input = { key: 'RP-5/0', cluster, namespace: ns, pod: 'solo' };
    const first = await run('kubeDeletePod', input);
    expect(first).toMatchObject({ before: { uid, phase: 'Running', node: 'kwok-node-1' }, after: { deleted: true } });
    await waitFor('solo gone', () =>
      core.readNamespacedPod({ name: 'solo', namespace: ns }).then(
        () => false,
        (err: { code?: number }) => err.code === 404,
      ),
    );

    // Killed after the delete, before recording it: the retry finds the pod gone and finishes.
    await forgetCompletion('RP-5/0');
    expect(await run('kubeDeletePod', input)).toEqual(first);
    expect(await run('kubeDeletePod', input)).toEqual({ ...first, repeated: true });

    // A new pod of the same name is not the one the step was about: the retry leaves it alone.
    await core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'solo', namespace: ns },
        spec: { containers: [{ name: 'app', image: 'example.com/solo:1' }] },
      },
    });
    await forgetCompletion('RP-5/0');
    expect(await run('kubeDeletePod', input)).toEqual(first);
    const namesake = await core.readNamespacedPod({ name: 'solo', namespace: ns });
    expect(namesake.metadata?.uid).not.toBe(uid);
    expect(namesake.metadata?.deletionTimestamp).toBeUndefined();
  }, 120_000);
});

describe('errors', () => {
  test('a missing deployment is not retried, names the object, and records nothing', async () => {
    const err = await failure(
      run('kubeRestartDeployment', { key: 'RP-6/0', cluster, namespace: 'payments', deployment: 'api' }),
    );
    expect(err).toMatchObject({ nonRetryable: true, type: 'KubeNotFound' });
    expect(err.message).toBe('deployment payments/api not found in cluster prod');
    expect(await findKubeAction('RP-6/0')).toBeUndefined();

    const pod = await failure(run('kubeDeletePod', { key: 'RP-6/1', cluster, namespace: ns, pod: 'nobody' }));
    expect(pod).toMatchObject({
      nonRetryable: true,
      type: 'KubeNotFound',
      message: 'pod default/nobody not found in cluster prod',
    });
  }, 60_000);

  test('a credential without rights is forbidden, not retried, and never shown', async () => {
    const err = await failure(
      run('kubeScaleDeployment', { key: 'RP-7/0', cluster: 'locked', namespace: ns, deployment: 'web', replicas: 5 }),
    );
    expect(err).toMatchObject({ nonRetryable: true, type: 'KubeForbidden' });
    expect(err.message).toContain('access to deployment default/web in cluster locked is forbidden');
    expect(JSON.stringify({ message: err.message, details: err.details, stack: err.stack })).not.toContain(
      kube.restrictedToken,
    );
    expect((await deploymentOf('web')).spec?.replicas).toBe(1);
  }, 60_000);

  test('an unregistered cluster and a bad input are not retried', async () => {
    const cluster404 = await failure(
      run('kubeRestartDeployment', { key: 'RP-8/0', cluster: 'nowhere', namespace: ns, deployment: 'web' }),
    );
    expect(cluster404).toMatchObject({ nonRetryable: true, type: 'ClusterNotFound' });
    const bad = await failure(
      run('kubeScaleDeployment', { key: 'RP-8/1', cluster, namespace: ns, deployment: 'web', replicas: -1 }),
    );
    expect(bad).toMatchObject({ nonRetryable: true, type: 'InvalidInput' });
    expect(bad.message).toContain('replicas');
  }, 60_000);

  test('an API server that never answers is a retryable timeout', async () => {
    // Accepts connections and says nothing: only the per-call abort ends the attempt.
    const sockets: Socket[] = [];
    const silent = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as { port: number }).port;
    try {
      await registerTestCluster('silent', kubeconfigYaml(`https://127.0.0.1:${port}`, kube.caData, 'not-a-real-token'));
      const err = await failure(
        run('kubeScaleDeployment', {
          key: 'RP-10/0',
          cluster: 'silent',
          namespace: ns,
          deployment: 'web',
          replicas: 2,
        }),
      );
      expect(err).toMatchObject({ nonRetryable: false, type: 'KubeTimeout' });
      expect(err.message).toBe('cluster silent did not answer in time (deployment default/web)');
    } finally {
      sockets.forEach((s) => s.destroy());
      await new Promise((resolve) => silent.close(resolve));
    }
  }, 120_000);

  test('an API server that is down is retried', async () => {
    await kube.stopApiServer();
    try {
      const err = await failure(
        run('kubeRestartDeployment', { key: 'RP-9/0', cluster, namespace: ns, deployment: 'web' }),
      );
      expect(err).toMatchObject({ nonRetryable: false, type: 'KubeUnreachable' });
      expect(err.message).toContain('cluster prod is unreachable');
      expect(await findKubeAction('RP-9/0')).toBeUndefined();
    } finally {
      await kube.startApiServer();
    }
    // The retry after the outage applies the step.
    await waitFor('API server back', async () => Boolean(await deploymentOf('web')));
    const done = await run('kubeRestartDeployment', { key: 'RP-9/0', cluster, namespace: ns, deployment: 'web' });
    expect(done.repeated).toBe(false);
    expect((await deploymentOf('web')).spec?.template?.metadata?.annotations?.[RESTARTED_AT_ANNOTATION]).toBe(
      done.after.restartedAt,
    );
  }, 180_000);
});
