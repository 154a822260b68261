import { runActivity } from '../harness/activity';
import { AppsV1Api, CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { ApplicationFailure } from '@temporalio/common';
import { createKubeVerifyActivities } from '../../activities/kube-verify';
import { createRemediationVerifyActivities } from '../../activities/remediation-verify';
import type { TargetHealth } from '../../domain/kube-health';
import type { VerifyTargetInput } from '../../contracts/kube-actions';
import { useRegisteredKube } from '../clusters/fixtures';
import { deploymentManifest, waitFor, type KubeCluster } from '../harness/kube';

// The verdict after a fix, against a real API server (with its real deployment controller)
// whose pods run, crash-loop, get OOM-killed or fail to pull on KWOK's fake node
// (tools/kube/stages/failures.yaml).

const { kubeVerifyTarget } = createKubeVerifyActivities();
const { awaitTargetHealthy } = createRemediationVerifyActivities();
const verify = (input: VerifyTargetInput) => runActivity(kubeVerifyTarget, input);

let env: Awaited<ReturnType<typeof useRegisteredKube>>;
let apps: AppsV1Api;
let core: CoreV1Api;
let kube: KubeCluster;
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
  ({ apps, core, kube } = env);
}, 300_000);

afterAll(() => env?.stop(), 60_000);

const strategic = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);
const jsonPatch = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);
const crashLines = (h: TargetHealth) => h.seen.filter((l) => l.endsWith('CrashLoopBackOff'));
/** The current template's ReplicaSet and hash as the verdict names them. */
const currentTemplate = (h: TargetHealth) =>
  h.seen.map((l) => /^current template: ReplicaSet (\S+) \(revision (\d+), (\S+)\)$/.exec(l)).find(Boolean);

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
    strategic,
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

test('a rollback is judged on the pods of the revision it restores, never on the crashing ones it replaces', async () => {
  // Revision 1 runs; revision 2 (every pod at once: maxUnavailable 2) crash-loops.
  const body = deploymentManifest('undo', 2);
  body.spec!.strategy = { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: 2 } };
  await apps.createNamespacedDeployment({ namespace: ns, body });
  const first = await verdictWhen('undo healthy', target('undo', new Date()), (v) => v.healthy);
  const [, rs1, rev1] = currentTemplate(first)!;
  expect(rev1).toBe('1');
  await apps.patchNamespacedDeployment(
    { name: 'undo', namespace: ns, body: { spec: { template: { metadata: { labels: { sim: 'crashloop' } } } } } },
    strategic,
  );
  await verdictWhen('undo revision 2 crash-looping', target('undo', new Date(0)), (v) => crashLines(v).length === 2);

  // The rollback (`kubectl rollout undo`: revision 1's template again), one pod at a time, each
  // available only after 5 s: the crashing pods of revision 2 stay while it rolls out.
  const since = new Date();
  await apps.patchNamespacedDeployment(
    {
      name: 'undo',
      namespace: ns,
      body: [
        { op: 'replace', path: '/spec/strategy/rollingUpdate', value: { maxSurge: 1, maxUnavailable: 0 } },
        { op: 'add', path: '/spec/minReadySeconds', value: 5 },
        { op: 'remove', path: '/spec/template/metadata/labels/sim' },
      ],
    },
    jsonPatch,
  );
  const verdicts: TargetHealth[] = [];
  await waitFor(
    'undo healthy again',
    async () => {
      const v = await verify(target('undo', since));
      verdicts.push(v);
      return v.healthy;
    },
    180_000,
  );
  // Once the controller has seen the rollback, revision 1's ReplicaSet is current again (as revision 3).
  const afterRollback = verdicts.filter((v) => currentTemplate(v)?.[2] === '3');
  expect(afterRollback.length).toBeGreaterThan(0);
  for (const v of afterRollback) {
    expect(currentTemplate(v)![1]).toBe(rs1);
    expect(crashLines(v)).toEqual([]);
    expect(v.summary).not.toContain('container crash');
  }
  // While it rolled out, the crashing pods were there, counted and not judged; the verdict waited for them to go.
  const during = afterRollback.filter((v) =>
    v.seen.some((l) => /^\d+ pods? of replaced ReplicaSets not judged$/.test(l)),
  );
  expect(during.length).toBeGreaterThan(0);
  for (const v of during) {
    expect(v.healthy).toBe(false);
    expect(v.summary).toMatch(/^deployment default\/undo is unhealthy: .*rollout incomplete \(/);
  }
  expect(during.some((v) => /rollout incomplete \(.*old replicas? left/.test(v.summary))).toBe(true);
  expect(verdicts.at(-1)!.summary).toBe(
    'deployment default/undo is healthy: 2/2 updated and available, no crash since the fix',
  );
}, 300_000);

test('a rollout past its progress deadline ends the wait at once: unhealthy and final', async () => {
  const body = deploymentManifest('stuck', 1, 'imagepull');
  body.spec!.progressDeadlineSeconds = 10;
  const since = new Date();
  await apps.createNamespacedDeployment({ namespace: ns, body });
  const started = Date.now();
  const h = await runActivity(awaitTargetHealthy, {
    ...target('stuck', since),
    signature: { reasons: ['ImagePullBackOff'] },
    timeoutMs: 170_000,
  });
  const waited = Date.now() - started;
  expect(h.healthy).toBe(false);
  expect(h.final).toBe(true);
  expect(waited).toBeLessThan(60_000); // the deadline is 10 s; the wait would have lasted 170 s
  expect(h.summary).toMatch(
    /^deployment default\/stuck is unhealthy: its rollout exceeded its progress deadline \(ProgressDeadlineExceeded: ReplicaSet "stuck-[a-z0-9]+" has timed out progressing\.\)/,
  );
  expect(h.summary).toContain('the failure signature is back (1): pod stuck-');
  expect(h.seen).toContain('Progressing False (ProgressDeadlineExceeded)');
  expect(h.checked).toContain('the failure signature (ImagePullBackOff) is gone');
  // The real deployment controller set the condition.
  const d = await apps.readNamespacedDeployment({ name: 'stuck', namespace: ns });
  expect(d.status?.conditions?.find((c) => c.type === 'Progressing')).toMatchObject({
    status: 'False',
    reason: 'ProgressDeadlineExceeded',
  });
}, 240_000);

test("the signature's log line still printed by the fixed pods is unhealthy; gone, healthy", async () => {
  await apps.createNamespacedDeployment({ namespace: ns, body: deploymentManifest('chatty', 2) });
  await verdictWhen('chatty healthy', target('chatty', new Date()), (v) => v.healthy);
  // Revision 1's pods print the failure; the fix rolls out revision 2.
  await kube.setContainerLogs({
    labelSelector: 'app=chatty',
    container: 'app',
    current: ['starting', 'FATAL: out of connections to db'],
  });
  const since = new Date();
  await apps.patchNamespacedDeployment(
    {
      name: 'chatty',
      namespace: ns,
      body: { spec: { template: { spec: { containers: [{ name: 'app', image: 'example.com/chatty:2' }] } } } },
    },
    strategic,
  );
  const signature = { reasons: [], logLine: '  FATAL: out of connections ' };
  const fixed = await verdictWhen(
    'chatty revision 2 healthy',
    { ...target('chatty', since), signature },
    (v) => v.healthy && currentTemplate(v)?.[2] === '2',
  );
  expect(fixed.summary).toBe(
    'deployment default/chatty is healthy: 2/2 updated and available, no crash since the fix, the failure signature is gone',
  );
  expect(fixed.checked).toContain('the failure signature (log line "FATAL: out of connections") is gone');
  expect(fixed.seen).toContain('2 container logs searched (last 200 lines)');

  // The new pods print it too: the fix did not work.
  const hash = currentTemplate(fixed)![3];
  const pods = await kube.setContainerLogs({
    labelSelector: `app=chatty,pod-template-hash=${hash}`,
    container: 'app',
    current: [
      'starting',
      ...Array.from({ length: 50 }, (_, i) => `request ${i} ok`),
      'FATAL: out of connections to db token=hunter2hunter2',
      'bye',
    ],
  });
  expect(pods).toHaveLength(2);
  const back = await verify({ ...target('chatty', since), signature });
  expect(back.healthy).toBe(false);
  expect(back.final).toBeUndefined();
  for (const pod of pods)
    expect(back.seen).toContain(
      `pod ${pod} container app log still prints "FATAL: out of connections to db token=[REDACTED]" (the failure signature)`,
    );
  expect(back.summary).toMatch(
    /^deployment default\/chatty is unhealthy: the failure signature is back \(2\): pod chatty-\S+ container app log still prints "FATAL: out of connections to db token=\[REDACTED\]"/,
  );
  expect(JSON.stringify(back)).not.toContain('hunter2');

  // They no longer print it.
  await kube.setContainerLogs({
    labelSelector: `app=chatty,pod-template-hash=${hash}`,
    container: 'app',
    current: ['starting', 'connected to db'],
  });
  const gone = await verify({ ...target('chatty', since), signature });
  expect(gone.healthy).toBe(true);
  expect(gone.seen).toContain('2 pods: no sign of the failure signature');
}, 300_000);

test('a Deployment with minReadySeconds is not healthy before its pods have been available that long', async () => {
  const body = deploymentManifest('patient', 2);
  body.spec!.minReadySeconds = 15;
  const since = new Date();
  await apps.createNamespacedDeployment({ namespace: ns, body });
  // KWOK makes the pods Ready at once; Ready's time is in whole seconds (so readyAt is not later than the truth).
  let readyAt = 0;
  await waitFor('patient pods Ready', async () => {
    const { items } = await core.listNamespacedPod({ namespace: ns, labelSelector: 'app=patient' });
    const times = items.map((p) => p.status?.conditions?.find((c) => c.type === 'Ready' && c.status === 'True'));
    if (items.length !== 2 || times.some((c) => !c)) return false;
    readyAt = Math.max(...times.map((c) => new Date(c!.lastTransitionTime!).getTime()));
    return true;
  });
  const early = await verify(target('patient', since));
  expect(Date.now()).toBeLessThan(readyAt + 15_000);
  expect(early.healthy).toBe(false);
  expect(early.summary).toMatch(/rollout incomplete \(.*\d of 2 updated replicas available\)/);
  const h = await verdictWhen('patient healthy', target('patient', since), (v) => v.healthy);
  expect(Date.now()).toBeGreaterThanOrEqual(readyAt + 15_000);
  expect(h.seen).toContain('2/2 updated, 2/2 available, 2 current');
}, 240_000);
