import { AppsV1Api } from '@kubernetes/client-node';
import { registerTestCluster } from '../clusters/fixtures';
import { deploymentManifest, useKube, waitFor, type KubeCluster } from '../harness/kube';
import { useStack } from '../harness/stack';

/**
 * Verification failure and rollback against a real kube-apiserver (issue 10 §1, §5): the pods
 * never get healthy (the failure is in the pod template), so every attempt's verification fails,
 * its changes are undone from the values recorded before them, the next strategy runs, and after
 * three attempts the incident is Escalated with the Deployment as it was.
 */

jest.setTimeout(600_000);

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- API JSON
type Json = any;

const CLUSTER = 'rollback-test';
let kube: KubeCluster;
let apps: AppsV1Api;
let s: Awaited<ReturnType<typeof useStack>>;

beforeAll(async () => {
  kube = await useKube();
  await kube.addNode('node-a');
  apps = kube.kc.makeApiClient(AppsV1Api);
  s = await useStack({ env: { FOGHORN_VERIFY_WINDOW: '15s' } });
  await registerTestCluster(CLUSTER, kube.kubeconfig);
}, 300_000);

afterAll(async () => {
  await s?.stop();
  await kube?.stop();
});

const get = (path: string) => s.call('GET', path, { token: s.tokens.viewer });
const plans = async (name: string): Promise<Json[]> =>
  ((await get(`/remediations?incident=${name}`)).body.items as Json[]).sort((a, b) => a.attempt - b.attempt);
const timeline = async (name: string): Promise<Json[]> => (await get(`/incidents/${name}/timeline`)).body.events;

/** Polls until `state`, skipping 30 s of workflow time between polls (Wait steps are durable timers). */
async function untilState(name: string, state: string, timeoutMs = 400_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await get(`/incidents/${name}`);
    if (r.body.status?.state === state) return r;
    if (Date.now() > deadline)
      throw new Error(`${name} is ${r.body.status?.state}, not ${state}; plans: ${JSON.stringify(await plans(name))}`);
    await s.wf.env.sleep(30_000);
  }
}

async function crashingDeployment(name: string, replicas: number, memory: string) {
  const manifest = deploymentManifest(name, replicas, 'crashloop');
  manifest.spec!.template.spec!.containers[0].resources = { limits: { memory, cpu: '500m' } };
  await apps.createNamespacedDeployment({ namespace: 'default', body: manifest });
  await waitFor(`deployment ${name} rolled out`, async () => {
    const d = await apps.readNamespacedDeployment({ name, namespace: 'default' });
    return (
      (d.status?.updatedReplicas ?? 0) === replicas &&
      d.metadata?.annotations?.['deployment.kubernetes.io/revision'] === '1'
    );
  });
}

async function open(resource: string, signalType: string, labels: Record<string, string> = {}) {
  const res = await s.call('POST', '/incidents', {
    token: s.tokens.operator,
    body: {
      resource,
      namespace: 'default',
      cluster: CLUSTER,
      signalType,
      severity: 'medium',
      description: 'test',
      labels,
    },
  });
  expect(res.status).toBe(201);
  return res.body.metadata.name as string;
}

it('raising memory does not help: each attempt is rolled back to the recorded limits, and after 3 the incident is Escalated', async () => {
  await crashingDeployment('leaky', 2, '512Mi');
  const name = await open('Deployment/leaky', 'OOMKilled', { memory_limit: '512Mi' });
  const escalated = await untilState(name, 'Escalated');
  expect(escalated.body.status.remediationAttempts).toBe(3);

  const all = await plans(name);
  expect(all).toHaveLength(3);
  expect(all.map((p) => p.state)).toEqual(['RolledBack', 'RolledBack', 'RolledBack']);
  expect(all[0].strategy).toBe('runbook oomkill-raise-memory-limit (tier 1: category+severity+kind)');
  expect(all[1].strategy).toMatch(/^generated from insight AI-\d{8}-\d{3,}$/);
  expect(all[2].strategy).toBe(all[0].strategy); // its maxAttempts is 2: leftover attempts go to it again
  for (const plan of all) {
    expect(plan.result).toMatch(/^verification failed: .*rolled back \d step\(s\)/);
    expect(plan.completedAt).toBeDefined();
  }
  // The memory limit the first plan set, as recorded on its step.
  expect(all[0].actions[0]).toMatchObject({ type: 'AdjustResources', outcome: 'undone' });

  // The Deployment is as it was: limits as recorded before the first change.
  const d = await apps.readNamespacedDeployment({ name: 'leaky', namespace: 'default' });
  expect(d.spec!.template.spec!.containers[0].resources!.limits).toEqual({ memory: '512Mi', cpu: '500m' });
  expect(d.spec!.replicas).toBe(2);

  const events = await timeline(name);
  const types = events.map((e) => e.type);
  expect(types.filter((t) => t === 'RemediationStarted')).toHaveLength(3);
  expect(types.filter((t) => t === 'Verification')).toHaveLength(3);
  expect(types.filter((t) => t === 'RemediationFailed')).toHaveLength(3);
  const undone = events.filter((e) => e.type === 'ActionExecuted' && e.details.undo);
  expect(undone.length).toBeGreaterThanOrEqual(3);
  const verification = events.find((e) => e.type === 'Verification');
  expect(verification.details.passed).toBe(false);
  expect(verification.details.checked.join(' ')).toMatch(/no new firing signal/);
  expect(types[types.length - 1]).toBe('Escalation');
  expect(events[events.length - 1].message).toBe('3 remediation attempt(s) failed; escalated to on-call');
});

it('scaling out does not help: the recorded replica count is restored', async () => {
  await crashingDeployment('busy', 2, '256Mi');
  const name = await open('Deployment/busy', 'HighCPU');
  await untilState(name, 'Escalated');
  const all = await plans(name);
  expect(all.length).toBeGreaterThanOrEqual(1);
  const scaled = all.flatMap((p) => p.actions).filter((a: Json) => a.type === 'ScaleDeployment');
  expect(scaled.length).toBeGreaterThanOrEqual(1);
  for (const a of scaled) expect(a.outcome).toBe('undone');
  const d = await apps.readNamespacedDeployment({ name: 'busy', namespace: 'default' });
  expect(d.spec!.replicas).toBe(2);
});
