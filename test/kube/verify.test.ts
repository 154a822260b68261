import { runActivity } from '../harness/activity';
import { AppsV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { ApplicationFailure } from '@temporalio/common';
import { createKubeVerifyActivities } from '../../activities/kube-verify';
import type { TargetHealth } from '../../domain/kube-health';
import type { VerifyTargetInput } from '../../contracts/kube-actions';
import { useRegisteredKube } from '../clusters/fixtures';
import { deploymentManifest, waitFor } from '../harness/kube';

// The verdict after a fix, against a real API server whose pods run, crash-loop or get
// OOM-killed on KWOK's fake node (tools/kube/stages/failures.yaml).

const { kubeVerifyTarget } = createKubeVerifyActivities();
const verify = (input: VerifyTargetInput) => runActivity(kubeVerifyTarget, input);

let env: Awaited<ReturnType<typeof useRegisteredKube>>;
let apps: AppsV1Api;
const ns = 'default';
const cluster = 'prod';
const target = (deployment: string, since: Date) => ({
  cluster,
  namespace: ns,
  deployment,
  since: since.toISOString(),
});

beforeAll(async () => {
  env = await useRegisteredKube(cluster);
  ({ apps } = env);
}, 300_000);

afterAll(() => env?.stop(), 60_000);

/** Verifies until `ok` holds for the verdict (the control plane converges asynchronously); returns it. */
async function verdictWhen(what: string, input: VerifyTargetInput, ok: (h: TargetHealth) => boolean) {
  let last: TargetHealth | undefined;
  await waitFor(what, async () => ok((last = await verify(input))), 180_000);
  return last!;
}

test('a Deployment rolled out with its pods running is healthy', async () => {
  const since = new Date();
  await apps.createNamespacedDeployment({ namespace: ns, body: deploymentManifest('api', 2) });
  const h = await verdictWhen('api healthy', target('api', since), (v) => v.healthy);
  expect(h.summary).toBe('deployment default/api is healthy: 2/2 updated and available, no crash since the fix');
  expect(h.seen).toContain('2/2 updated, 2/2 available, 2 current');
  expect(h.seen).toContain(
    `2 pods: no crash since ${new Date(Math.floor(since.getTime() / 1000) * 1000).toISOString()}`,
  );
  expect(h.checked).toEqual(
    expect.arrayContaining([
      'the controller has observed the latest generation',
      'no container waiting in CrashLoopBackOff',
    ]),
  );
}, 240_000);

test('a crash-looping Deployment is unhealthy and the crashing pod is named', async () => {
  const since = new Date();
  await apps.createNamespacedDeployment({ namespace: ns, body: deploymentManifest('crashy', 1, 'crashloop') });
  const h = await verdictWhen('crashy crash-looping', target('crashy', since), (v) =>
    v.seen.some((l) => l.endsWith('container app CrashLoopBackOff')),
  );
  expect(h.healthy).toBe(false);
  expect(h.summary).toMatch(
    /^deployment default\/crashy is unhealthy: .*pod crashy-[a-z0-9-]+ container app CrashLoopBackOff/,
  );
  // Its restarts came after `since`: they are listed too.
  expect(h.seen.some((l) => /^pod crashy-\S+ container app restarted after Error, exit 1 at /.test(l))).toBe(true);
}, 240_000);

test('an OOM kill since the fix is unhealthy; the same kill before the fix is history', async () => {
  await apps.createNamespacedDeployment({ namespace: ns, body: deploymentManifest('oom', 1, 'oomkilled') });
  const h = await verdictWhen('oom OOMKilled', target('oom', new Date(0)), (v) =>
    v.seen.some((l) => l.includes('OOMKilled, exit 137')),
  );
  expect(h.healthy).toBe(false);
  // A fix "in the future" of every kill: only the CrashLoopBackOff it is in now remains against it.
  const later = await verify(target('oom', new Date(Date.now() + 3_600_000)));
  expect(later.seen.some((l) => l.includes('OOMKilled'))).toBe(false);
  expect(later.seen.some((l) => l.endsWith('CrashLoopBackOff'))).toBe(true);
}, 240_000);

test('a fix that broke the rollout (its new pods crash, old ones remain) is unhealthy', async () => {
  await apps.createNamespacedDeployment({ namespace: ns, body: deploymentManifest('rolling', 2) });
  await verdictWhen('rolling healthy', target('rolling', new Date()), (v) => v.healthy);
  const since = new Date();
  await apps.patchNamespacedDeployment(
    { name: 'rolling', namespace: ns, body: { spec: { template: { metadata: { labels: { sim: 'crashloop' } } } } } },
    setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
  );
  const h = await verdictWhen('rolling stuck on a crashing pod', target('rolling', since), (v) =>
    v.seen.some((l) => l.endsWith('CrashLoopBackOff')),
  );
  expect(h.healthy).toBe(false);
  expect(h.summary).toContain('rollout incomplete');
}, 240_000);

test('a Deployment that is gone is unhealthy, not an error', async () => {
  const h = await verify(target('missing', new Date()));
  expect(h).toEqual({
    healthy: false,
    checked: ['the Deployment exists'],
    seen: ['deployment default/missing not found'],
    summary: 'deployment default/missing is gone (not found): nothing runs to verify',
  });
});

test('a bad input and an unregistered cluster fail, not retried', async () => {
  const bad = await verify({ ...target('api', new Date()), since: 'yesterday' }).catch((e: unknown) => e);
  expect(bad).toBeInstanceOf(ApplicationFailure);
  expect(bad).toMatchObject({ nonRetryable: true, type: 'InvalidInput' });
  expect((bad as Error).message).toContain('since');
  const nowhere = await verify({ ...target('api', new Date()), cluster: 'nowhere' }).catch((e: unknown) => e);
  expect(nowhere).toMatchObject({ nonRetryable: true, type: 'ClusterNotFound' });
});
