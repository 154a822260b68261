import { activityRunner } from '../harness/activity';
import { AppsV1Api, CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import {
  createKubeActionActivities,
  deletePodIntent,
  deploymentTarget,
  podTarget,
  readDeployment,
  readPod,
  resourcesIntent,
  restartIntent,
  writeDeletePod,
  writeResources,
  writeRestart,
  writeScale,
} from '../../activities/kube-actions';
import { actionParams, describeTarget, type KubeActionType, type KubeTarget } from '../../domain/kube-actions';
import { findKubeAction, recordKubeActionIntent } from '../../store/kube-actions';
import { useRegisteredKube } from '../clusters/fixtures';
import { deploymentManifest, waitFor, type KubeCluster, type WriteFilter } from '../harness/kube';

// A worker killed after its write reached the API server, before it recorded the step done,
// leaves the key's intent pending. The retry must not send the write again: counted in the
// API server's own audit log.

const activities = createKubeActionActivities();
const run = activityRunner(activities);

let env: Awaited<ReturnType<typeof useRegisteredKube>>;
let kube: KubeCluster;
let apps: AppsV1Api;
let core: CoreV1Api;
const ns = 'default';
const cluster = 'prod';

beforeAll(async () => {
  env = await useRegisteredKube(cluster);
  ({ kube, apps, core } = env);
  for (const [name, replicas] of [
    ['restarted', 1],
    ['scaled', 1],
    ['resized', 1],
    ['pending', 1],
    ['victim', 1],
    ['marker', 0],
  ] as const)
    await apps.createNamespacedDeployment({ namespace: ns, body: deploymentManifest(name, replicas) });
  await waitFor('the deployments available', async () => {
    const list = await apps.listNamespacedDeployment({ namespace: ns });
    return list.items.length === 6 && list.items.every((d) => (d.status?.availableReplicas ?? 0) === d.spec?.replicas);
  });
}, 300_000);

afterAll(() => env?.stop(), 60_000);

/** What a worker that died right after its write leaves: the intent recorded, the key pending. */
function recordIntent<I>(
  key: string,
  action: KubeActionType,
  target: KubeTarget,
  input: Record<string, unknown>,
  intent: I,
) {
  return recordKubeActionIntent({
    key,
    action,
    cluster,
    target: describeTarget(target),
    params: actionParams({ key, ...input }),
    intent,
  });
}

/** Stored writes (not dry runs) matching `filter`. */
const stored = async (filter: WriteFilter) => (await kube.writes(filter)).filter((w) => !w.dryRun);

let marks = 0;
/**
 * Every write the API server completed so far is in its log: a write's event is logged as its
 * handler returns, so one sent now and seen in the log comes after all the earlier ones.
 */
async function settled(): Promise<void> {
  const value = `m${++marks}`;
  await apps.patchNamespacedDeployment(
    { name: 'marker', namespace: ns, body: { metadata: { labels: { mark: value } } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
  await waitFor(
    `mark ${value} in the audit log`,
    async () => (await stored({ verb: 'patch', name: 'marker' })).length >= marks,
  );
}

test('RestartDeployment: the annotation already there, the retry writes nothing', async () => {
  const input = { cluster, namespace: ns, deployment: 'restarted' };
  const target = deploymentTarget(input);
  const intent = restartIntent(await readDeployment(apps, target), target);
  await recordIntent('RP-R/0', 'RestartDeployment', target, input, intent);
  await writeRestart(apps, target, intent.restartedAt);

  const result = await run('kubeRestartDeployment', { key: 'RP-R/0', ...input });
  expect(result).toMatchObject({ after: { restartedAt: intent.restartedAt }, repeated: false });
  expect((await findKubeAction('RP-R/0'))?.state).toBe('done');
  await settled();
  const patches = await stored({ verb: 'patch', resource: 'deployments', name: 'restarted' });
  expect(patches).toHaveLength(1);
}, 120_000);

test('ScaleDeployment: the replicas already there, the retry writes nothing', async () => {
  const input = { cluster, namespace: ns, deployment: 'scaled', replicas: 3 };
  const target = deploymentTarget(input);
  await recordIntent('RP-S/0', 'ScaleDeployment', target, input, { before: 1, replicas: 3 });
  await writeScale(apps, target, 3);

  const result = await run('kubeScaleDeployment', { key: 'RP-S/0', ...input });
  expect(result).toMatchObject({ before: { replicas: 1 }, after: { replicas: 3 }, repeated: false });
  await settled();
  expect(await stored({ verb: 'patch', name: 'scaled' })).toEqual([
    expect.objectContaining({ resource: 'deployments', subresource: 'scale' }),
  ]);
}, 120_000);

test('AdjustResources: the values already there (as the server rewrote them), the retry writes nothing', async () => {
  const input = { cluster, namespace: ns, deployment: 'resized', container: 'app', requests: { cpu: '0.5' } };
  const target = deploymentTarget(input);
  const intent = resourcesIntent(await readDeployment(apps, target), target, input);
  await recordIntent('RP-A/0', 'AdjustResources', target, input, intent);
  await writeResources(apps, target, 'app', intent.after);
  const stored500m = (await readDeployment(apps, target)).spec?.template?.spec?.containers?.[0].resources?.requests;
  expect(stored500m).toEqual({ cpu: '500m' }); // the server's canonical form of 0.5

  const result = await run('kubeAdjustResources', { key: 'RP-A/0', ...input });
  expect(result).toMatchObject({ after: { container: 'app', requests: { cpu: '0.5' }, limits: {} }, repeated: false });
  await settled();
  expect(await stored({ verb: 'patch', name: 'resized' })).toHaveLength(1);
}, 120_000);

test('DeletePod: the pod deleted already, the retry sends no second delete', async () => {
  const pods = await core.listNamespacedPod({ namespace: ns, labelSelector: 'app=victim' });
  const name = pods.items[0].metadata!.name!;
  const input = { cluster, namespace: ns, pod: name };
  const target = podTarget(input);
  const intent = deletePodIntent(await readPod(core, target));
  await recordIntent('RP-D/0', 'DeletePod', target, input, intent);
  expect(await writeDeletePod(core, target, intent.uid)).toBe('deleted');

  const result = await run('kubeDeletePod', { key: 'RP-D/0', ...input });
  expect(result).toMatchObject({ before: intent, after: { deleted: true }, repeated: false });
  await settled();
  const deletes = await stored({ verb: 'delete', resource: 'pods', name });
  // KWOK, as the pod's kubelet, deletes it too once it has stopped: not Foghorn's write.
  expect(deletes.filter((w) => !w.userAgent.startsWith('kwok/'))).toHaveLength(1);
}, 120_000);

test('an intent recorded but never written: the retry writes it, once', async () => {
  const input = { cluster, namespace: ns, deployment: 'pending', replicas: 2 };
  const target = deploymentTarget(input);
  await recordIntent('RP-P/0', 'ScaleDeployment', target, input, { before: 1, replicas: 2 });

  const result = await run('kubeScaleDeployment', { key: 'RP-P/0', ...input });
  expect(result).toMatchObject({ after: { replicas: 2 }, repeated: false });
  expect((await apps.readNamespacedDeploymentScale({ name: 'pending', namespace: ns })).spec?.replicas).toBe(2);
  const again = await run('kubeScaleDeployment', { key: 'RP-P/0', ...input });
  expect(again).toEqual({ ...result, repeated: true });
  await settled();
  expect(await stored({ verb: 'patch', name: 'pending' })).toHaveLength(1);
}, 120_000);
