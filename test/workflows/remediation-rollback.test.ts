import { AppsV1Api } from '@kubernetes/client-node';
import { registerTestCluster } from '../clusters/fixtures';
import { deploymentManifest, useKube, waitFor, type KubeCluster } from '../harness/kube';
import { useStack } from '../harness/stack';

/**
 * Verification failure against a real kube-apiserver: the pods never get healthy (the failure
 * is in the pod template), so every attempt's verification fails. A scale change is undone from
 * the value recorded before it; a template change is left in place (undoing it would apply the
 * crashing template again), and the next template change within the cool-down waits for a person.
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
  s = await useStack({ env: { FOGHORN_VERIFY_WINDOW: '15s', FOGHORN_APPROVAL_TTL: '2m' } });
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

it('raising memory does not help: the raise stays (never back into the crashing template), the next change waits for a person', async () => {
  await crashingDeployment('leaky', 2, '512Mi');
  const name = await open('Deployment/leaky', 'OOMKilled', { memory_limit: '512Mi' });
  const escalated = await untilState(name, 'Escalated');
  expect(escalated.body.status.remediationAttempts).toBe(2);

  const [first, second] = await plans(name);
  expect(first.strategy).toBe('runbook oomkill-raise-memory-limit (tier 1: category+severity+kind)');
  expect(first.state).toBe('Failed');
  expect(first.result).toMatch(
    /^verification failed: .*; left in place: step 1 AdjustResources \(undoing it would bring back the template the incident is about\)$/,
  );
  expect(first.actions[0]).toMatchObject({ type: 'AdjustResources', outcome: 'ok' });
  // One rollout change per workload per cool-down: the second plan asks a person, who does not answer.
  expect(second.approvalRequired).toBe(true);
  expect(second.approvalReasons[0]).toMatch(
    /^cool-down: AdjustResources \(RP-\d{8}-\d{3,}\/0\) changed deployment default\/leaky at .*; another rollout change within 10m0s needs a person$/,
  );
  expect(second.state).toBe('Failed');
  expect(second.result).toMatch(/^approval APR-\d{8}-\d{3,} expired/);

  // The Deployment keeps the raised limit: the crashing 512Mi template is not applied again.
  const d = await apps.readNamespacedDeployment({ name: 'leaky', namespace: 'default' });
  expect(d.spec!.template.spec!.containers[0].resources!.limits).toEqual({ memory: '768Mi', cpu: '500m' });
  expect(d.spec!.replicas).toBe(2);

  const events = await timeline(name);
  expect(events.filter((e) => e.type === 'ActionExecuted' && e.details.undo)).toEqual([]);
  const verification = events.find((e) => e.type === 'Verification');
  expect(verification.details.passed).toBe(false);
  expect(verification.details.checked.join(' ')).toMatch(/updated, available and current replicas|rollout/);
  expect(events[events.length - 1].type).toBe('Escalation');
  expect(events[events.length - 1].message).toMatch(
    /^Remediation plan RP-\S+ was not approved \(approval APR-\S+ expired/,
  );
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
