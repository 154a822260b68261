import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AppsV1Api, CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { WorkflowHandle } from '@temporalio/client';
import { clusterWatchWorkflowId } from '../../domain/cluster';
import { clusterWatchWorkflow } from '../../workflows/cluster-watch';
import { REMEDIATION_STATE } from '../../workflows/search-attributes';
import { deploymentManifest, useKube, waitFor, type KubeCluster } from '../harness/kube';
import { useStack } from '../harness/stack';

/**
 * The whole loop against a real kube-apiserver with KWOK's fake kubelets: the cluster watcher
 * opens the incident; a pod crashing with no change before it is restarted (the plan the
 * evidence calls for), the new pods are healthy, verification passes and the incident is
 * Resolved by `system`. A Deployment whose only revision crashes has no revision to go back to
 * and a restart runs the same template: nothing runs, a person is paged at once.
 */

jest.setTimeout(600_000);

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- API JSON
type Json = any;

let kube: KubeCluster;
let apps: AppsV1Api;
let core: CoreV1Api;
let s: Awaited<ReturnType<typeof useStack>>;
let watch: WorkflowHandle;
let dir: string;
const savedKubeconfig = process.env.KUBECONFIG;

beforeAll(async () => {
  kube = await useKube();
  await kube.addNode('node-a');
  await kube.addNode('node-b');
  apps = kube.kc.makeApiClient(AppsV1Api);
  core = kube.kc.makeApiClient(CoreV1Api);
  // The `local` cluster comes from KUBECONFIG (activities/kube/client.ts).
  dir = mkdtempSync(path.join(tmpdir(), 'foghorn-remediate-'));
  writeFileSync(path.join(dir, 'kubeconfig'), kube.kubeconfig, { mode: 0o600 });
  process.env.KUBECONFIG = path.join(dir, 'kubeconfig');
  s = await useStack({ env: { FOGHORN_VERIFY_WINDOW: '20s', FOGHORN_REVISION_STABLE_AFTER: '2s' } });
  watch = await s.client.workflow.start(clusterWatchWorkflow, {
    taskQueue: s.wf.taskQueue,
    workflowId: clusterWatchWorkflowId('local'),
    args: [{ cluster: 'local' }],
  });
}, 300_000);

afterAll(async () => {
  await watch?.cancel().catch(() => undefined);
  await s?.stop();
  await kube?.stop();
  if (savedKubeconfig === undefined) delete process.env.KUBECONFIG;
  else process.env.KUBECONFIG = savedKubeconfig;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const get = (path: string) => s.call('GET', path, { token: s.tokens.viewer });
const plans = async (name: string): Promise<Json[]> =>
  ((await get(`/remediations?incident=${name}`)).body.items as Json[]).sort((a, b) => a.attempt - b.attempt);
const timeline = async (name: string): Promise<Json[]> => (await get(`/incidents/${name}/timeline`)).body.events;

async function incidentOf(resource: string): Promise<string> {
  const found = await s.eventually(
    () => get(`/incidents?resource=${encodeURIComponent(resource)}`),
    (r) => r.body.items?.length > 0,
    120_000,
  );
  return found.body.items[0].name;
}

/** Polls `check` on the incident detail, skipping `skipMs` of workflow time between polls. */
async function until(name: string, check: (d: Json) => boolean, skipMs = 0, timeoutMs = 240_000): Promise<Json> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const d = (await get(`/incidents/${name}`)).body;
    if (check(d)) return d;
    if (Date.now() > deadline)
      throw new Error(`${name} is ${d.status?.state}; plans: ${JSON.stringify(await plans(name))}`);
    if (skipMs > 0) await s.wf.env.sleep(skipMs);
    else await new Promise((r) => setTimeout(r, 500));
  }
}

it('a pod labelled to fail: restart, healthy new pods, verified, Resolved by system', async () => {
  await apps.createNamespacedDeployment({ namespace: 'default', body: deploymentManifest('web', 2) });
  await waitFor('web available', async () => {
    const d = await apps.readNamespacedDeployment({ name: 'web', namespace: 'default' });
    return d.status?.availableReplicas === 2;
  });
  // Revision 1 proven healthy: the crash that follows comes with no change before it.
  await waitFor('revision 1 healthy', async () => {
    const changes = (await get('/changes?namespace=default&resource=Deployment/web')).body.items ?? [];
    return changes.some((c: Json) => c.revision === 1 && c.revisionHealth?.state === 'Healthy');
  });
  const [pod] = (await core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=web' })).items;
  await core.patchNamespacedPod(
    { name: pod.metadata!.name!, namespace: 'default', body: { metadata: { labels: { sim: 'crashloop' } } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );

  const name = await incidentOf('Deployment/web');
  const resolved = await until(name, (d) => d.status.state === 'Resolved', 0);
  expect(resolved.status.resolution).toMatch(/^Remediated automatically by plan RP-/);

  const [plan] = await plans(name);
  expect(plan).toMatchObject({
    attempt: 1,
    strategy:
      'from the evidence: restart Deployment/web once: it crashes with no change before it; if the crash returns, a person takes over',
    state: 'Completed',
    actions: [{ type: 'RestartDeployment', params: {}, outcome: 'ok' }],
  });
  expect(plan.result).toMatch(/^verified: /);

  // The restart really happened, once, by Foghorn: the template carries its timestamp, and the
  // labelled pod is gone.
  const d = await apps.readNamespacedDeployment({ name: 'web', namespace: 'default' });
  expect(d.spec!.template.metadata!.annotations!['kubectl.kubernetes.io/restartedAt']).toBeDefined();
  const pods = (await core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=web' })).items;
  expect(pods.map((p) => p.metadata!.name)).not.toContain(pod.metadata!.name);

  const events = await timeline(name);
  const types = events.map((e) => e.type);
  for (const t of ['RemediationStarted', 'ActionExecuted', 'Verification', 'RemediationCompleted', 'Resolved'])
    expect(types).toContain(t);
  expect(events.find((e) => e.type === 'Verification').details).toMatchObject({ passed: true });
  expect(events.find((e) => e.type === 'Resolved')).toMatchObject({ source: 'remediation-engine' });

  const audit = await s.call('GET', `/audit?action=remediation.execute&resource=${plan.name}`, {
    token: s.tokens.operator,
  });
  expect(audit.body.items).toHaveLength(1);
  expect(audit.body.items[0]).toMatchObject({
    user: 'system',
    resourceType: 'Remediation',
    details: { incident: name, runbook: '', step: 1, action: 'RestartDeployment', outcome: 'ok' },
  });
  const pm = await s.eventually(
    () => get(`/postmortems?incident=${name}`),
    (r) => r.body.items?.length === 1,
  );
  const report = (await get(`/postmortems/${pm.body.items[0].name}`)).body.report;
  expect(report.remediationApplied.steps[0]).toMatch(/^RestartDeployment /);
  expect(report.remediationApplied.result).toMatch(new RegExp(`^${plan.name} Completed`));
  // The plan ran in the incident's workflow, which says its state.
  const described = await s.client.workflow.getHandle(name).describe();
  expect(described.typedSearchAttributes.get(REMEDIATION_STATE)).toBe('Completed');
});

it('the only revision crashes: no restart, no rollback, a person paged at once with the reason', async () => {
  await apps.createNamespacedDeployment({ namespace: 'default', body: deploymentManifest('broken', 2, 'crashloop') });
  const name = await incidentOf('Deployment/broken');
  const escalated = await until(name, (d) => d.status.state === 'Escalated', 0);
  expect(escalated.status.remediationAttempts ?? 0).toBe(0);
  expect(await plans(name)).toEqual([]);
  const events = await timeline(name);
  expect(events.find((e) => e.type === 'Escalation').message).toMatch(
    /^revision 1 rolled out .* the failure began, but Foghorn saw no earlier revision of Deployment\/broken healthy: no rollback \(evidence E\d+\); escalated to on-call$/,
  );
  // Both crash-loop runbooks were matched and skipped, each saying why.
  const skipped = events.filter((e) => e.type === 'RunbookMatch' && e.details.skipped).map((e) => e.message);
  expect(skipped).toEqual(
    expect.arrayContaining([
      expect.stringMatching(/^Runbook crashloop-restart skipped: RestartDeployment is ruled out: /),
    ]),
  );
  const d = await apps.readNamespacedDeployment({ name: 'broken', namespace: 'default' });
  expect(d.metadata!.annotations!['deployment.kubernetes.io/revision']).toBe('1');
  expect(d.spec!.template.metadata!.annotations?.['kubectl.kubernetes.io/restartedAt']).toBeUndefined();
});
