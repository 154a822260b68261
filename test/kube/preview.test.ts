import { runActivity } from '../harness/activity';
import { AppsV1Api, CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { createKubePreviewActivities } from '../../activities/kube-preview';
import { kubeconfigYaml } from '../../cli/embedded/kube';
import { RESTARTED_AT_ANNOTATION, REVISION_ANNOTATION } from '../../domain/kube-actions';
import { DIFF_TRUNCATED_LINE, MAX_PREVIEW_DIFF_BYTES, type KubePreviewInput } from '../../domain/kube-diff';
import { registerTestCluster, useRegisteredKube } from '../clusters/fixtures';
import { markRevision } from '../fixtures/revisions';
import { deploymentManifest, waitFor, type KubeCluster } from '../harness/kube';

// Approval previews against a real API server: the action's own write sent as a dry run, the
// object before diffed against the server's answer, nothing stored, and never a failure.

const { kubePreviewAction } = createKubePreviewActivities();
const preview = (input: KubePreviewInput) => runActivity(kubePreviewAction, input);

let env: Awaited<ReturnType<typeof useRegisteredKube>>;
let kube: KubeCluster;
let apps: AppsV1Api;
let core: CoreV1Api;
const ns = 'default';
const cluster = 'prod';
const web = { cluster, namespace: ns, deployment: 'web' };

const deploymentOf = (name: string) => apps.readNamespacedDeployment({ name, namespace: ns });
/** The lines a diff adds or removes, without the sign and indentation. */
const diffLines = (diff: string, sign: '+' | '-') =>
  diff
    .split('\n')
    .filter((l) => l.startsWith(sign) && !l.startsWith(`${sign}${sign}${sign} `))
    .map((l) => l.slice(1).trim());

beforeAll(async () => {
  env = await useRegisteredKube(cluster);
  ({ kube, apps, core } = env);
  await registerTestCluster('locked', kubeconfigYaml(kube.server, kube.caData, kube.restrictedToken, 'restricted'));
  await apps.createNamespacedDeployment({ namespace: ns, body: deploymentManifest('web', 2) });
  await waitFor('web available', async () => (await deploymentOf('web')).status?.availableReplicas === 2);
}, 300_000);

afterAll(() => env?.stop(), 60_000);

/** The dry runs the API server saw for `name`, once at least `count` are logged; and no write of ours stored. */
async function onlyDryRuns(name: string, count = 1) {
  await waitFor(
    `${count} dry-run writes of ${name}`,
    async () => (await kube.writes({ name })).filter((w) => w.dryRun).length >= count,
  );
  const writes = await kube.writes({ name });
  const controller = (w: { userAgent: string }) => w.userAgent.startsWith('kube-controller-manager/');
  expect(writes.filter((w) => !w.dryRun && w.verb !== 'create' && !controller(w))).toEqual([]);
  return writes.filter((w) => w.dryRun);
}

test('RestartDeployment: the new restartedAt on the pod template, stored nowhere', async () => {
  const p = await preview({ action: 'RestartDeployment', ...web });
  expect(p).toMatchObject({
    target: 'deployment default/web',
    dryRun: true,
    summary: 'restart deployment default/web: a rolling update replaces its 2 pods',
  });
  expect(p.error).toBeUndefined();
  expect(p.diff.startsWith('--- live/deployment/default/web\n+++ dry-run/deployment/default/web\n@@ -')).toBe(true);
  const added = diffLines(p.diff, '+');
  expect(added.some((l) => l.startsWith(`${RESTARTED_AT_ANNOTATION}: `))).toBe(true);
  // Nothing but the annotation (and the map that holds it) changes: no status, no resourceVersion.
  expect(diffLines(p.diff, '-').filter((l) => l !== 'annotations: {}')).toEqual([]);
  expect(p.diff).not.toMatch(/resourceVersion|managedFields|generation:/);

  expect((await deploymentOf('web')).spec?.template?.metadata?.annotations?.[RESTARTED_AT_ANNOTATION]).toBeUndefined();
  expect(await onlyDryRuns('web')).toEqual([expect.objectContaining({ verb: 'patch', resource: 'deployments' })]);
}, 60_000);

test('ScaleDeployment: the replicas of the scale subresource', async () => {
  const p = await preview({ action: 'ScaleDeployment', ...web, replicas: 5 });
  expect(p).toMatchObject({ dryRun: true, summary: 'scale deployment default/web from 2 to 5 replicas' });
  expect(diffLines(p.diff, '-')).toEqual(['replicas: 2']);
  expect(diffLines(p.diff, '+')).toEqual(['replicas: 5']);
  expect((await deploymentOf('web')).spec?.replicas).toBe(2);
  expect((await onlyDryRuns('web', 2)).some((w) => w.subresource === 'scale')).toBe(true);
}, 60_000);

test('AdjustResources: the container resources as the server would store them', async () => {
  const p = await preview({
    action: 'AdjustResources',
    ...web,
    container: 'app',
    requests: { cpu: '0.25', memory: '64Mi' },
    limits: { memory: '128Mi' },
  });
  expect(p).toMatchObject({
    dryRun: true,
    summary:
      'adjust deployment default/web: requests cpu unset → 0.25, requests memory unset → 64Mi, limits memory unset → 128Mi for container app',
  });
  expect(diffLines(p.diff, '+')).toEqual([
    'resources:',
    'limits:',
    'memory: 128Mi',
    'requests:',
    'cpu: 250m',
    'memory: 64Mi',
  ]);
  expect((await deploymentOf('web')).spec?.template?.spec?.containers?.[0].resources?.requests).toBeUndefined();
  await onlyDryRuns('web', 3);
}, 60_000);

test('RollbackDeployment: the previous revision’s template back in place', async () => {
  await apps.createNamespacedDeployment({ namespace: ns, body: deploymentManifest('rolled', 1) });
  await waitFor(
    'rolled at revision 1',
    async () => (await deploymentOf('rolled')).metadata?.annotations?.[REVISION_ANNOTATION] === '1',
  );
  await apps.patchNamespacedDeployment(
    {
      name: 'rolled',
      namespace: ns,
      body: { spec: { template: { spec: { containers: [{ name: 'app', image: 'example.com/rolled:2' }] } } } },
    },
    setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
  );
  await waitFor(
    'rolled at revision 2',
    async () => (await deploymentOf('rolled')).metadata?.annotations?.[REVISION_ANNOTATION] === '2',
  );

  await markRevision(apps, { cluster, namespace: ns, deployment: 'rolled' }, 1, 'Healthy');
  const p = await preview({ action: 'RollbackDeployment', cluster, namespace: ns, deployment: 'rolled' });
  expect(p).toMatchObject({ dryRun: true });
  expect(p.summary).toMatch(
    /^roll back deployment default\/rolled from revision 2 \(example.com\/rolled:2\) to the template of revision 1 \(app=example.com\/rolled:1\), the newest revision Foghorn saw healthy \(at .*\)$/,
  );
  expect(diffLines(p.diff, '-')).toEqual(['- image: example.com/rolled:2']);
  expect(diffLines(p.diff, '+')).toEqual(['- image: example.com/rolled:1']);
  expect(p.diff).not.toContain('pod-template-hash');
  expect((await deploymentOf('rolled')).spec?.template?.spec?.containers?.[0].image).toBe('example.com/rolled:2');
}, 120_000);

test('DeletePod: the whole pod removed; the pod is still there', async () => {
  const pods = await core.listNamespacedPod({ namespace: ns, labelSelector: 'app=web' });
  const pod = pods.items[0];
  const name = pod.metadata!.name!;
  const p = await preview({ action: 'DeletePod', cluster, namespace: ns, pod: name });
  expect(p).toMatchObject({ target: `pod default/${name}`, dryRun: true });
  expect(p.summary).toMatch(
    new RegExp(
      `^delete pod default/${name} \\(Running on node kwok-node-1\\): its ReplicaSet web-[a-z0-9]+ creates a replacement$`,
    ),
  );
  expect(p.diff.startsWith(`--- live/pod/default/${name}\n+++ /dev/null\n@@ -1,`)).toBe(true);
  expect(diffLines(p.diff, '+')).toEqual([]);
  expect(diffLines(p.diff, '-')).toContain(`name: ${name}`);
  const still = await core.readNamespacedPod({ name, namespace: ns });
  expect(still.metadata?.uid).toBe(pod.metadata?.uid);
  // Not even marked for deletion: the delete options (dryRun with them) travel in the body.
  expect(still.metadata?.deletionTimestamp).toBeUndefined();
  expect(await onlyDryRuns(name)).toEqual([expect.objectContaining({ verb: 'delete', resource: 'pods' })]);
}, 60_000);

test('a large object gives a diff bounded to 8 KiB, cut at a line', async () => {
  const annotations = Object.fromEntries(
    Array.from({ length: 300 }, (_, i) => [`example.com/note-${i}`, `value ${i} `.repeat(4)]),
  );
  await core.createNamespacedPod({
    namespace: ns,
    body: {
      metadata: { name: 'bulky', annotations },
      spec: { containers: [{ name: 'app', image: 'example.com/bulky:1' }] },
    },
  });
  const p = await preview({ action: 'DeletePod', cluster, namespace: ns, pod: 'bulky' });
  expect(p.dryRun).toBe(true);
  expect(p.summary).toContain('no controller owns it, so nothing replaces it');
  expect(new TextEncoder().encode(p.diff).length).toBeLessThanOrEqual(MAX_PREVIEW_DIFF_BYTES);
  expect(p.diff.endsWith(`\n${DIFF_TRUNCATED_LINE}\n`)).toBe(true);
}, 60_000);

test('a preview never fails: each problem comes back as a classified error, without credentials', async () => {
  const gone = await preview({ action: 'RestartDeployment', cluster, namespace: ns, deployment: 'missing' });
  expect(gone).toEqual({
    target: 'deployment default/missing',
    diff: '',
    summary: 'no preview of RestartDeployment on deployment default/missing',
    dryRun: false,
    error: 'deployment default/missing not found in cluster prod',
  });

  const noContainer = await preview({ action: 'AdjustResources', ...web, container: 'sidecar', limits: { cpu: '1' } });
  expect(noContainer.error).toBe(
    'container sidecar not found in deployment default/web in cluster prod (containers: app)',
  );

  const locked = await preview({ action: 'ScaleDeployment', ...web, cluster: 'locked', replicas: 3 });
  expect(locked).toMatchObject({ dryRun: false, diff: '' });
  expect(locked.error).toContain('access to deployment default/web in cluster locked is forbidden');
  expect(JSON.stringify(locked)).not.toContain(kube.restrictedToken);

  const nowhere = await preview({ action: 'DeletePod', cluster: 'nowhere', namespace: ns, pod: 'x' });
  expect(nowhere).toMatchObject({ target: 'pod default/x', dryRun: false, error: 'Cluster nowhere is not registered' });

  const bad = await preview({ action: 'ScaleDeployment', ...web, replicas: -1 });
  expect(bad.error).toMatch(/^invalid input: replicas: /);

  const noRevision = await preview({ action: 'RollbackDeployment', ...web });
  expect(noRevision.error).toBe(
    'cannot roll back deployment default/web in cluster prod: no earlier revision of deployment default/web was seen healthy (it has no earlier revision): no rollback',
  );
}, 60_000);
