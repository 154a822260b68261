import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AppsV1Api, CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { WorkflowHandle } from '@temporalio/client';
import { clusterWatchWorkflowId } from '../../domain/cluster';
import { runbookSpecSchema } from '../../contracts/runbooks';
import { createRunbook } from '../../store/runbooks';
import { clusterWatchWorkflow } from '../../workflows/cluster-watch';
import { REMEDIATION_STATE } from '../../workflows/search-attributes';
import { deploymentManifest, useKube, waitFor, type KubeCluster } from '../harness/kube';
import { approvalAwaitingDecision } from '../harness/approvals';
import { useStack } from '../harness/stack';

/**
 * The whole loop against a real kube-apiserver with KWOK's fake kubelets (issue 10 §5): the
 * cluster watcher opens the incident, a tier-1 automated runbook restarts the Deployment, the
 * new pods are healthy, verification passes and the incident is Resolved by `system`. When the
 * failure is in the pod template, the restart cannot help: verification fails, the restart is
 * rolled back, and the next strategy is tried.
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
  s = await useStack({ env: { FOGHORN_VERIFY_WINDOW: '20s' } });
  // A tier-1 automated runbook for crash loops: sorts before the built-in (which needs approval).
  const created = await createRunbook(
    runbookSpecSchema.parse({
      name: 'crashloop-restart',
      category: 'crashloop',
      description: 'Rolling restart: clears a crash that a fresh pod does not repeat',
      version: '1.0.0',
      automated: true,
      severity: ['critical', 'high', 'medium'],
      targets: { signalTypes: ['CrashLoopBackOff'], resourceKinds: ['Deployment'] },
      steps: [{ type: 'RestartDeployment', params: { deployment: '{{deployment}}', namespace: '{{namespace}}' } }],
      maxAttempts: 1,
    }),
  );
  expect(created.created).toBe(true);
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
    strategy: 'runbook crashloop-restart (tier 1: category+severity+kind)',
    state: 'Completed',
    actions: [{ type: 'RestartDeployment', params: { deployment: 'web', namespace: 'default' }, outcome: 'ok' }],
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
    details: { incident: name, runbook: 'crashloop-restart', step: 1, action: 'RestartDeployment', outcome: 'ok' },
  });
  const pm = await s.eventually(
    () => get(`/postmortems?incident=${name}`),
    (r) => r.body.items?.length === 1,
  );
  const report = (await get(`/postmortems/${pm.body.items[0].name}`)).body.report;
  expect(report.remediationApplied.runbook).toBe('crashloop-restart');
  expect(report.remediationApplied.steps[0]).toMatch(/^RestartDeployment /);
  expect(report.remediationApplied.result).toMatch(new RegExp(`^${plan.name} Completed`));
  // The plan ran in the incident's workflow, which says its state.
  const described = await s.client.workflow.getHandle(name).describe();
  expect(described.typedSearchAttributes.get(REMEDIATION_STATE)).toBe('Completed');
});

it('the failure is in the pod template: the restart does not help, it is rolled back, and the next strategy runs', async () => {
  await apps.createNamespacedDeployment({ namespace: 'default', body: deploymentManifest('broken', 2, 'crashloop') });
  const name = await incidentOf('Deployment/broken');
  // Attempt 2 is the built-in restart-then-rollback runbook, which needs an approval.
  await until(name, (d) => d.status.activePlan?.attempt === 2, 0);
  const [first, second] = await plans(name);
  expect(first.strategy).toBe('runbook crashloop-restart (tier 1: category+severity+kind)');
  expect(first.state).toBe('RolledBack');
  expect(first.result).toMatch(/^verification failed: .*rolled back 1 step\(s\)/);
  expect(first.actions[0]).toMatchObject({ type: 'RestartDeployment', outcome: 'undone' });
  expect(second.strategy).toBe('runbook crashloop-restart-then-rollback (tier 1: category+severity+kind)');
  const approvals = await s.eventually(
    () => get(`/approvals?incident=${name}&status=pending`),
    (r) => r.body.items?.length === 1,
    60_000,
  );
  const approval = approvals.body.items[0];
  expect(approval).toMatchObject({ status: 'pending', runbook: 'crashloop-restart-then-rollback' });
  // The approval shows what would change, from a server-side dry run.
  const detail = (await get(`/approvals/${approval.name}`)).body;
  expect(detail.previews.find((p: Json) => p.action === 'RestartDeployment')).toMatchObject({ dryRun: true });
  expect(detail.previews.find((p: Json) => p.action === 'RestartDeployment').diff).toContain('restartedAt');

  await approvalAwaitingDecision(s.client, approval.name);
  // A person resolves it: the pending approval ends, the plan is cancelled, nothing more runs.
  const res = await s.call('POST', `/incidents/${name}/resolve`, { token: s.tokens.operator, body: {} });
  expect(res.status).toBe(200);
  const ended = await s.eventually(
    () => get(`/approvals/${approval.name}`),
    (r) => r.body.status === 'expired',
    60_000,
  );
  expect(ended.body.expiryReason).toBe('incident resolved');
  const after = await s.eventually(
    () => plans(name),
    (p) => p[1]?.state === 'Failed',
    60_000,
  );
  expect(after[1].result).toMatch(/^approval .* expired: incident resolved|^cancelled/);
  expect(after[1].actions.every((a: Json) => a.outcome === undefined)).toBe(true);
});
