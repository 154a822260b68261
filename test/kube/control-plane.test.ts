import {
  AppsV1Api,
  CoreV1Api,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  VersionApi,
  type V1Pod,
} from '@kubernetes/client-node';
import { kubeconfigYaml } from '../../cli/embedded/kube';
import { deploymentManifest, useKube, waitFor, type KubeCluster } from '../harness/kube';

// The local control plane itself (cli/embedded/kube.ts): the simulated failures every
// Kubernetes suite relies on behave as on a real node.
let kube: KubeCluster;
let core: CoreV1Api;
let apps: AppsV1Api;

beforeAll(async () => {
  kube = await useKube();
  core = kube.kc.makeApiClient(CoreV1Api);
  apps = kube.kc.makeApiClient(AppsV1Api);
  await kube.addNode('kwok-node-1');
}, 240_000);

afterAll(() => kube?.stop(), 60_000);

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

const podsOf = async (app: string): Promise<V1Pod[]> =>
  (await core.listNamespacedPod({ namespace: 'default', labelSelector: `app=${app}` })).items;

test('the API server reports its version and answers the restricted token with 403', async () => {
  const version = await kube.kc.makeApiClient(VersionApi).getCode();
  expect(version.gitVersion).toBe('v1.33.13');
  const restricted = new KubeConfig();
  restricted.loadFromString(kubeconfigYaml(kube.server, kube.caData, kube.restrictedToken, 'restricted'));
  await expect(restricted.makeApiClient(CoreV1Api).listNamespace()).rejects.toMatchObject({ code: 403 });
  await expect(core.listNamespace()).resolves.toBeDefined();
}, 60_000);

test('a Deployment becomes available on a fake node', async () => {
  await apps.createNamespacedDeployment({ namespace: 'default', body: deploymentManifest('healthy', 2) });
  await waitFor('2 available replicas', async () => {
    const d = await apps.readNamespacedDeployment({ name: 'healthy', namespace: 'default' });
    return d.status?.availableReplicas === 2;
  });
  const pods = await podsOf('healthy');
  expect(pods.every((p) => p.status?.phase === 'Running' && p.spec?.nodeName === 'kwok-node-1')).toBe(true);
}, 120_000);

test('sim=crashloop pods crash-loop with a rising restart count', async () => {
  await apps.createNamespacedDeployment({ namespace: 'default', body: deploymentManifest('crashy', 2, 'crashloop') });
  await waitFor('restartCount ≥ 2 with CrashLoopBackOff', async () => {
    const pods = await podsOf('crashy');
    return (
      pods.length === 2 &&
      pods.every((p) => {
        const s = p.status?.containerStatuses?.[0];
        return (
          s?.state?.waiting?.reason === 'CrashLoopBackOff' &&
          s.lastState?.terminated?.reason === 'Error' &&
          (s.restartCount ?? 0) >= 2
        );
      })
    );
  });
  const ready = (await podsOf('crashy'))[0].status?.conditions?.find((c) => c.type === 'Ready');
  expect(ready?.status).toBe('False');
}, 120_000);

test('sim=oomkilled containers are OOM-killed, sim=imagepull pods never start', async () => {
  await apps.createNamespacedDeployment({ namespace: 'default', body: deploymentManifest('hungry', 1, 'oomkilled') });
  await apps.createNamespacedDeployment({
    namespace: 'default',
    body: deploymentManifest('unpullable', 1, 'imagepull'),
  });
  await waitFor('OOMKilled, exit 137', async () => {
    const s = (await podsOf('hungry'))[0]?.status?.containerStatuses?.[0];
    return s?.lastState?.terminated?.reason === 'OOMKilled' && s.lastState.terminated.exitCode === 137;
  });
  await waitFor('ImagePullBackOff', async () => {
    const p = (await podsOf('unpullable'))[0];
    return (
      p?.status?.phase === 'Pending' && p.status.containerStatuses?.[0]?.state?.waiting?.reason === 'ImagePullBackOff'
    );
  });
}, 120_000);

test('a crash-looping container serves the log lines a test chose, current and previous', async () => {
  await apps.createNamespacedDeployment({ namespace: 'default', body: deploymentManifest('chatty', 1, 'crashloop') });
  await apps.createNamespacedDeployment({ namespace: 'default', body: deploymentManifest('quiet', 1) });
  await waitFor('chatty restarting, quiet running', async () => {
    const [chatty] = await podsOf('chatty');
    const [quiet] = await podsOf('quiet');
    return (chatty?.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1 && quiet?.status?.phase === 'Running';
  });
  const current = ['starting', 'connecting to db:5432', 'FATAL: password authentication failed'];
  const previous = ['starting', 'panic: out of retries', 'exit status 1'];
  const names = await kube.setContainerLogs({ labelSelector: 'app=chatty', container: 'app', current, previous });
  expect(names).toHaveLength(1);
  const read = (name: string, opts: { previous?: boolean; tailLines?: number } = {}) =>
    core.readNamespacedPodLog({ name, namespace: 'default', container: 'app', ...opts });
  expect(await read(names[0])).toBe(current.map((l) => `${l}\n`).join(''));
  expect(await read(names[0], { tailLines: 1 })).toBe('FATAL: password authentication failed\n');
  expect(await read(names[0], { previous: true, tailLines: 2 })).toBe('panic: out of retries\nexit status 1\n');
  // A later call replaces the lines; without `previous` the container has none.
  await kube.setContainerLogs({ pod: names[0], container: 'app', current: ['again'] });
  expect(await read(names[0])).toBe('again\n');
  await expect(read(names[0], { previous: true })).rejects.toMatchObject({ code: 400 });
  // A pod no test gave lines: an empty log, and 400 for previous=true, as for a container that
  // printed nothing and never restarted; an unknown container is refused by the API server.
  const [quiet] = await podsOf('quiet');
  expect(await read(quiet.metadata!.name!)).toBe('');
  await expect(read(quiet.metadata!.name!, { previous: true })).rejects.toMatchObject({ code: 400 });
  await expect(
    core.readNamespacedPodLog({ name: quiet.metadata!.name!, namespace: 'default', container: 'nope' }),
  ).rejects.toMatchObject({ code: 400 });
}, 120_000);

test('a labelled node goes NotReady and recovers when the label is removed', async () => {
  await kube.addNode('kwok-node-2');
  const readyOf = async () =>
    (await core.readNode({ name: 'kwok-node-2' })).status?.conditions?.find((c) => c.type === 'Ready')?.status;
  await core.patchNode(
    { name: 'kwok-node-2', body: { metadata: { labels: { 'node-not-ready.stage.kwok.x-k8s.io': 'true' } } } },
    mergePatch,
  );
  await waitFor('NotReady', async () => (await readyOf()) === 'False');
  await core.patchNode(
    { name: 'kwok-node-2', body: { metadata: { labels: { 'node-not-ready.stage.kwok.x-k8s.io': null } } } },
    mergePatch,
  );
  await waitFor('Ready again', async () => (await readyOf()) === 'True');
}, 180_000);

test('the API server stops and starts again with its data', async () => {
  await kube.stopApiServer();
  await expect(core.listNamespace()).rejects.toThrow();
  await kube.startApiServer();
  const d = await apps.readNamespacedDeployment({ name: 'healthy', namespace: 'default' });
  expect(d.metadata?.name).toBe('healthy');
}, 180_000);
