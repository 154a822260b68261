import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { getIncident } from '../../store/incidents';
import { registerTestCluster } from '../clusters/fixtures';
import { deploymentManifest, useKube, waitFor, type KubeCluster } from '../harness/kube';
import { useLlmServer, type LlmRequestBody } from '../harness/llm-server';
import { useStack } from '../harness/stack';

/**
 * The agentic remediation strategy end to end (issue 10 §3, §5): a real kube-apiserver with
 * KWOK pods registered as cluster `local`, and a real HTTP listener scripted as the model. The
 * incidents are `Custom` (category `custom`: no builtin runbook) and the insight suggests no
 * action, so agentic is the one strategy. Plan risk = incident risk (Custom: 10, +10 at medium
 * severity) + 10 for a scale, against a threshold of 30: a scale asks a person only at medium.
 */

jest.setTimeout(300_000);

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- API JSON
type Json = any;
type Reply = ReturnType<Parameters<typeof useLlmServer>[0]>;

const NAMESPACE = 'default';

/** The insight request (no tools): valid structured JSON that suggests nothing to run. */
const INSIGHT = {
  analysis: 'The workload is short of capacity.',
  rootCause: 'Too few replicas for the load',
  confidence: 0.7,
  recommendations: ['Add replicas'],
  suggestedActions: [],
  cascadeAnalysis: '',
  blastRadiusPrediction: '',
};

const call = (name: string, args: Record<string, unknown>, content = ''): Reply => ({
  content,
  toolCalls: [{ name, args }],
});

/** What the model does, by scenario (the incident's description) and step number. */
const SCRIPTS: Record<string, (step: number) => Reply> = {
  fix: (step) =>
    [
      call('list_pods', {}, 'Look at the pods first.'),
      call('recent_events', { kind: 'Deployment', name: 'agent-fix', reasoning: 'Any warnings on the rollout?' }),
      call('scale_deployment', { replicas: 3 }, 'Scale out to 3 replicas to take the load.'),
      call('finish', { verdict: 'fixed', summary: 'three replicas are ready' }),
    ][step - 1],
  loop: () => call('list_pods', {}, 'Look at the pods again.'),
  overloaded: () => ({ status: 500, content: 'model overloaded' }),
  chatty: (step) =>
    step === 1 ? call('list_pods', {}, 'Look at the pods first.') : { content: 'I think you should restart it.' },
  gated: (step) =>
    step === 1
      ? call('scale_deployment', { replicas: 2 }, 'Scale out to 2 replicas.')
      : call('finish', { verdict: 'fixed', summary: 'two replicas are ready' }),
};
SCRIPTS['gated-late'] = SCRIPTS.gated;

const scenarioOf = (body: LlmRequestBody) => /Description: (\S+)/.exec(String(body.messages[1]?.content))?.[1] ?? '';

function model(body: LlmRequestBody): Reply {
  if (!body.tools) return { content: JSON.stringify(INSIGHT) };
  const step = Number(/Step (\d+) of/.exec(String(body.messages.at(-1)?.content))?.[1]);
  const script = SCRIPTS[scenarioOf(body)];
  return script?.(step) ?? { content: `no script for ${scenarioOf(body)} step ${step}` };
}

let kube: KubeCluster;
let apps: AppsV1Api;
let core: CoreV1Api;
let llm: Awaited<ReturnType<typeof useLlmServer>>;
let s: Awaited<ReturnType<typeof useStack>>;

beforeAll(async () => {
  kube = await useKube();
  await kube.addNode('node-a');
  apps = kube.kc.makeApiClient(AppsV1Api);
  core = kube.kc.makeApiClient(CoreV1Api);
  llm = await useLlmServer(model);
  s = await useStack({
    env: {
      FOGHORN_LLM_BASE_URL: llm.baseUrl,
      FOGHORN_LLM_MODEL: 'test-model',
      FOGHORN_LLM_API_KEY: 'sk-agentic-remediation-test',
      FOGHORN_VERIFY_WINDOW: '45s',
      FOGHORN_APPROVAL_RISK_THRESHOLD: '30',
    },
  });
  // Incidents opened through the API are about cluster `local`: register it (no watcher runs).
  await registerTestCluster('local', kube.kubeconfig);
}, 240_000);

afterAll(async () => {
  await s?.stop();
  await llm?.stop();
  await kube?.stop();
});

const get = (path: string) => s.call('GET', path, { token: s.tokens.viewer });
const timeline = async (name: string): Promise<Json[]> => (await get(`/incidents/${name}/timeline`)).body.events;
const plans = async (name: string): Promise<Json[]> => (await get(`/remediations?incident=${name}`)).body.items;
const agenticSteps = async (name: string) => (await timeline(name)).filter((e) => e.type === 'AgenticStep');
const replicasOf = async (deployment: string) =>
  (await apps.readNamespacedDeployment({ name: deployment, namespace: NAMESPACE })).spec?.replicas;
const podNames = async (deployment: string) =>
  (await core.listNamespacedPod({ namespace: NAMESPACE, labelSelector: `app=${deployment}` })).items.map(
    (p) => p.metadata!.name!,
  );
/** The model's tool-call requests of one scenario. */
/** The one approval of an incident, once it is requested (no time skipping meanwhile). */
const approvalOf = async (incident: string): Promise<Json> =>
  (
    await s.eventually(
      () => get(`/approvals?incident=${incident}`),
      (r) => r.body.items?.length === 1,
      120_000,
    )
  ).body.items[0];
const agentRequests = (scenario: string) => llm.requests.filter((r) => r.body.tools && scenarioOf(r.body) === scenario);

/** A Deployment of `replicas` healthy (KWOK) pods, once they are all available. */
async function deployment(name: string, replicas = 1) {
  await apps.createNamespacedDeployment({ namespace: NAMESPACE, body: deploymentManifest(name, replicas) });
  await waitFor(`deployment ${name} available`, async () => {
    const d = await apps.readNamespacedDeployment({ name, namespace: NAMESPACE });
    return d.status?.availableReplicas === replicas;
  });
}

/** A Custom incident on Deployment/<name>; the description names the model's script. */
async function open(name: string, scenario: string, severity = 'low') {
  const res = await s.call('POST', '/incidents', {
    token: s.tokens.operator,
    body: {
      resource: `Deployment/${name}`,
      namespace: NAMESPACE,
      signalType: 'Custom',
      severity,
      description: scenario,
    },
  });
  expect(res.status).toBe(201);
  return res.body.metadata.name as string;
}

/**
 * Polls the incident until it is in `state`, skipping a little workflow time between polls so
 * the verification window's durable timer fires (only call it when no approval must stay pending).
 */
async function untilState(name: string, ...states: string[]) {
  const deadline = Date.now() + 240_000;
  for (;;) {
    const r = await get(`/incidents/${name}`);
    if (states.includes(r.body.status?.state)) return r;
    if (Date.now() > deadline)
      throw new Error(
        `${name} is ${r.body.status?.state}, not ${states.join(' or ')}; plans: ${JSON.stringify(await plans(name), null, 1)}`,
      );
    await s.wf.env.sleep(5_000);
  }
}

describe('agentic remediation', () => {
  it('observes, scales, declares fixed: verified, Completed, Resolved by system, offered as a runbook for review', async () => {
    await deployment('agent-fix');
    const [pod] = await podNames('agent-fix');
    const name = await open('agent-fix', 'fix');
    const resolved = await untilState(name, 'Resolved');

    const [plan, ...others] = await plans(name);
    expect(others).toHaveLength(0);
    expect(plan).toMatchObject({
      attempt: 1,
      strategy: 'agentic',
      state: 'Completed',
      agenticMode: true,
      agenticStepCount: 4,
    });
    expect(plan.actions).toHaveLength(1);
    expect(plan.actions[0]).toMatchObject({ type: 'ScaleDeployment', params: { replicas: 3 } });
    expect(resolved.body.status.resolution).toContain(plan.name);
    expect((await getIncident(name))?.resolvedBy).toBe('system');

    // Each step on the timeline: the model's reasoning, the tool and params, what it observed.
    const steps = (await agenticSteps(name)).map((e) => e.details);
    expect(steps.map((d) => [d.step, d.tool])).toEqual([
      [1, 'list_pods'],
      [2, 'recent_events'],
      [3, 'ScaleDeployment'],
      [4, 'finish'],
    ]);
    expect(steps[0]).toMatchObject({ plan: plan.name, reasoning: 'Look at the pods first.', params: {} });
    expect(steps[0].observation).toContain(pod);
    expect(steps[1]).toMatchObject({
      reasoning: 'Any warnings on the rollout?',
      params: { kind: 'Deployment', name: 'agent-fix' },
    });
    expect(steps[1].observation).not.toMatch(/^read failed/);
    expect(steps[2]).toMatchObject({ reasoning: 'Scale out to 3 replicas to take the load.', params: { replicas: 3 } });
    expect(steps[2].observation).toContain('replicas 1 → 3');
    expect(steps[3]).toMatchObject({ params: { verdict: 'fixed' }, observation: 'three replicas are ready' });

    // The model saw the first observation when it chose its next move.
    const second = agentRequests('fix').find((r) => /Step 2 of 10/.test(String(r.body.messages.at(-1)?.content)));
    expect(second?.body.messages.find((m) => m.role === 'tool')?.content).toContain(pod);

    // The cluster really changed, and verification saw it healthy.
    expect(await replicasOf('agent-fix')).toBe(3);
    const events = await timeline(name);
    expect(events.find((e) => e.type === 'Verification')?.details).toMatchObject({ plan: plan.name, passed: true });
    expect(events.filter((e) => e.type === 'ActionExecuted').map((e) => e.details.action)).toEqual(['ScaleDeployment']);
    expect(events.some((e) => e.type === 'ApprovalRequired')).toBe(false); // risk 20 < 30
    expect(events.find((e) => e.type === 'Resolved')).toMatchObject({ source: 'remediation-engine' });

    // Offered as a runbook that waits for an admin's review and never runs by itself.
    const offered = await get(`/runbooks/agentic-${plan.name.toLowerCase()}`);
    expect(offered.status).toBe(200);
    expect(offered.body.spec).toMatchObject({
      category: 'custom',
      automated: false,
      approvalRequired: true,
      steps: [expect.objectContaining({ type: 'ScaleDeployment', params: { replicas: 3 } })],
    });
  });

  it('a model that never finishes is stopped at 10 steps; with no strategy left the incident is Escalated', async () => {
    await deployment('agent-loop');
    const name = await open('agent-loop', 'loop');
    const escalated = await untilState(name, 'Escalated');
    expect(escalated.body.status.remediationAttempts).toBe(1);

    // The runbook offered by the previous test (category custom) is pending review: not matched.
    const [plan, ...others] = await plans(name);
    expect(others).toHaveLength(0);
    expect(plan).toMatchObject({ attempt: 1, strategy: 'agentic', state: 'Failed', agenticStepCount: 10 });
    expect(plan.result).toContain('the agent used its 10 steps without a verdict');
    expect(plan.actions).toHaveLength(0);
    const events = await timeline(name);
    expect(events.some((e) => e.type === 'RunbookMatch')).toBe(false);
    expect(events.filter((e) => e.type === 'AgenticStep').map((e) => e.details.step)).toEqual([
      1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
    ]);
    expect(agentRequests('loop')).toHaveLength(10); // no 11th call
    expect(events.find((e) => e.type === 'RemediationFailed')?.message).toContain('10 steps');
    expect(events.find((e) => e.type === 'Escalation')?.message).toContain(
      'No remediation strategy left after 1 failed attempt(s)',
    );
  });

  it.each([
    ['fails with HTTP 500 every time', 'overloaded', 'agent-500', 1, /the model failed at step 1: .*\(500\)/],
    [
      'answers without a tool call',
      'chatty',
      'agent-chatty',
      2,
      /the model failed at step 2: the model answered without a tool call/,
    ],
  ])('a model that %s: plan Failed with the reason, incident Escalated', async (_what, scenario, app, at, reason) => {
    await deployment(app);
    const name = await open(app, scenario);
    await untilState(name, 'Escalated');
    const [plan, ...others] = await plans(name);
    expect(others).toHaveLength(0);
    expect(plan).toMatchObject({ strategy: 'agentic', state: 'Failed', agenticStepCount: at - 1 });
    expect(plan.result).toMatch(reason);
    const events = await timeline(name);
    expect(events.find((e) => e.type === 'RemediationFailed')?.message).toMatch(reason);
    expect(events.find((e) => e.type === 'Escalation')?.message).toContain('No remediation strategy left');
    expect(await replicasOf(app)).toBe(1);
  });

  it('an action whose risk crosses the threshold waits for an approval; approved, it runs', async () => {
    await deployment('agent-gated');
    const name = await open('agent-gated', 'gated', 'medium');

    const approval = await approvalOf(name);
    const [plan] = await plans(name);
    expect(approval).toMatchObject({
      status: 'pending',
      incident: name,
      plan: plan.name,
      riskScore: 30,
      requiredRole: 'operator',
    });
    expect(approval.action).toContain('ScaleDeployment');
    expect(approval.reasons).toEqual(expect.arrayContaining([expect.stringContaining('threshold 30')]));
    const detail = await get(`/approvals/${approval.name}`);
    expect(detail.body.previews).toEqual([expect.objectContaining({ step: 1, action: 'ScaleDeployment' })]);
    expect(plan).toMatchObject({ agenticMode: true, state: 'Pending' });
    expect(await replicasOf('agent-gated')).toBe(1); // nothing ran before the yes

    const approve = () =>
      s.call('POST', `/approvals/${approval.name}/approve`, {
        token: s.tokens.operator,
        body: { comment: 'go ahead' },
      });
    // On a loaded machine the decision's update may miss its deadline: 503, retry, as a client
    // would. A retry after a decision that did land is a 409; either way it is decided once.
    let approved = await approve();
    for (let retry = 0; approved.status === 503 && retry < 5; retry++) {
      await new Promise((r) => setTimeout(r, 1000));
      approved = await approve();
    }
    expect([200, 409]).toContain(approved.status);
    expect((await get(`/approvals/${approval.name}`)).body).toMatchObject({
      status: 'approved',
      decidedBy: 'operator-user',
    });

    await untilState(name, 'Resolved');
    expect(await replicasOf('agent-gated')).toBe(2);
    const [done] = await plans(name);
    expect(done).toMatchObject({
      name: plan.name,
      state: 'Completed',
      agenticStepCount: 2,
      actions: [expect.objectContaining({ type: 'ScaleDeployment', params: { replicas: 2 } })],
    });
    const events = await timeline(name);
    // (No order between sources: a decision is stamped with workflow time, which time skipping moved on.)
    expect(events.find((e) => e.type === 'ApprovalDecided')?.message).toContain('approved by operator-user');
    expect(events.find((e) => e.type === 'ActionExecuted')?.details).toMatchObject({
      action: 'ScaleDeployment',
      outcome: 'ok',
      params: { replicas: 2 },
    });
    expect(events.find((e) => e.type === 'ApprovalRequired')?.details).toMatchObject({
      approvalName: approval.name,
      requiredRole: 'operator',
    });
    expect((await agenticSteps(name)).map((e) => e.details.tool)).toEqual(['ScaleDeployment', 'finish']);
  });

  it("the time a person takes to approve is not the agent's: an action approved after 11 minutes runs and is kept", async () => {
    await deployment('agent-late');
    const name = await open('agent-late', 'gated-late', 'medium');
    const approval = await approvalOf(name);
    await s.wf.env.sleep(11 * 60_000); // well within the approval's 30m TTL, past the agent's 10m budget
    expect((await get(`/approvals/${approval.name}`)).body.status).toBe('pending');
    const approved = await s.call('POST', `/approvals/${approval.name}/approve`, { token: s.tokens.operator });
    expect(approved.status).toBe(200);

    const end = await untilState(name, 'Resolved', 'Escalated');
    const [plan] = await plans(name);
    expect({ state: end.body.status.state, plan: plan.state, result: plan.result }).toMatchObject({
      state: 'Resolved',
      plan: 'Completed',
    });
    expect(plan.agenticStepCount).toBe(2);
    expect(await replicasOf('agent-late')).toBe(2);
  });
});
