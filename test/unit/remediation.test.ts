import {
  approvalNeed,
  chooseStrategy,
  planRisk,
  strategyText,
  templateVars,
  type RemediationOptions,
  type Strategy,
} from '../../domain/remediation';
import { renderSteps } from '../../contracts/remediation';
import { publicStep } from '../../domain/remediation-plan';
import { type RunbookAction } from '../../domain/runbook';
import { actionSchema } from '../../contracts/runbooks';

const options = (over: Partial<RemediationOptions> = {}): RemediationOptions => ({
  maxAttempts: 3,
  clusterRegistered: true,
  deployment: true,
  runbooks: [
    { name: 'a', tier: 1, maxAttempts: 2, usesKubernetes: true },
    { name: 'b', tier: 2, maxAttempts: 1, usesKubernetes: false },
  ],
  generated: { insight: 'AI-20261123-001', fingerprint: 'f1', usesKubernetes: true },
  llm: true,
  ...over,
});

describe('chooseStrategy', () => {
  it('walks runbooks by tier once each, then the generated runbook, then the agent, then repeats runbooks', () => {
    const tried: Strategy[] = [];
    const order: string[] = [];
    for (let s = chooseStrategy(options(), tried); s; s = chooseStrategy(options(), tried)) {
      tried.push(s);
      order.push(strategyText(s));
    }
    expect(order).toEqual([
      'runbook a (tier 1: category+severity+kind)',
      'runbook b (tier 2: category+severity)',
      'generated from insight AI-20261123-001',
      'agentic',
      'runbook a (tier 1: category+severity+kind)', // its maxAttempts is 2
    ]);
  });

  it('skips what needs Kubernetes when the cluster cannot be reached', () => {
    const o = options({ clusterRegistered: false });
    const first = chooseStrategy(o, []);
    expect(first).toEqual({ kind: 'runbook', runbook: 'b', tier: 2 });
    expect(chooseStrategy(o, [first!])).toBeNull(); // generated uses Kubernetes; the agent needs the cluster
  });

  it('never runs the same generated action list twice, and the agent only on a Deployment with an LLM', () => {
    const o = options({ runbooks: [], deployment: false });
    const g = chooseStrategy(o, []);
    expect(g).toMatchObject({ kind: 'generated', fingerprint: 'f1' });
    expect(chooseStrategy(o, [g!])).toBeNull();
  });
});

describe('plan risk and approval', () => {
  const step = (type: string, params: Record<string, unknown> = {}) => ({ type, params });

  it('adds a weight per step to the incident risk, capped at 100; scaling to zero weighs most', () => {
    expect(planRisk(50, [step('RestartDeployment'), step('Wait', { duration: '1m' })])).toBe(55);
    expect(planRisk(50, [step('ScaleDeployment', { replicas: 0 })])).toBe(80);
    expect(planRisk(95, [step('RunScript', { script: 'true' })])).toBe(100);
  });

  it('asks when the runbook says so, when it is manual, at the threshold, and after three failures; admin at 85', () => {
    const runbook = { name: 'r', automated: true, approvalRequired: false };
    expect(approvalNeed({ risk: 69, threshold: 70, runbook })).toEqual({
      required: false,
      requiredRole: 'operator',
      reasons: [],
    });
    expect(approvalNeed({ risk: 70, threshold: 70, runbook }).reasons).toEqual(['plan risk 70 ≥ threshold 70']);
    expect(approvalNeed({ risk: 10, threshold: 70, runbook: { ...runbook, automated: false } }).reasons[0]).toMatch(
      /manual/,
    );
    expect(approvalNeed({ risk: 10, threshold: 70, runbook, recentFailures: 3 }).reasons[0]).toMatch(
      /^circuit breaker/,
    );
    expect(approvalNeed({ risk: 85, threshold: 70, runbook }).requiredRole).toBe('admin');
  });
});

describe('templates', () => {
  const vars = templateVars({
    incident: 'INC-20261123-001',
    cluster: 'local',
    namespace: 'shop',
    resource: 'Deployment/api',
    severity: 'high',
    signalType: 'OOMKilled',
    labels: { team: 'payments', note: 'x; rm -rf /', memory_limit: '512Mi' },
    insightParams: [{ memoryLimit: '768Mi', replicas: 4 }],
  });
  const parse = (a: unknown) => actionSchema.parse(a) as RunbookAction;

  it('fills the incident, its labels and the insight; a whole-template number becomes a number', () => {
    const r = renderSteps(
      [
        parse({ type: 'AdjustResources', params: { deployment: '{{deployment}}', memoryLimit: '{{memoryLimit}}' } }),
        parse({ type: 'Notify', params: { channel: 'chat', message: '{{incident}} for {{labels.team}}' } }),
      ],
      vars,
    );
    expect(r).toEqual({
      ok: true,
      actions: [
        { type: 'AdjustResources', params: { deployment: 'api', memoryLimit: '768Mi' } },
        { type: 'Notify', params: { channel: 'chat', message: 'INC-20261123-001 for payments' } },
      ],
    });
  });

  it('fails before anything runs on a missing parameter', () => {
    const r = renderSteps([parse({ type: 'HttpRequest', params: { url: 'http://svc/{{labels.owner}}' } })], vars);
    expect(r).toEqual({ ok: false, problem: expect.stringContaining('{{labels.owner}}') });
  });

  it('refuses a value with shell or URL syntax in a script, and any template in a URL host', () => {
    const script = renderSteps([parse({ type: 'RunScript', params: { script: 'echo {{labels.note}}' } })], vars);
    expect(script).toEqual({ ok: false, problem: expect.stringContaining('{{labels.note}} may only hold') });
    const host = renderSteps(
      [parse({ type: 'HttpRequest', params: { url: 'https://{{labels.team}}.example.com/x' } })],
      vars,
    );
    expect(host).toEqual({ ok: false, problem: expect.stringContaining("URL's host") });
    const fine = renderSteps(
      [parse({ type: 'RunScript', params: { script: 'echo {{labels.team}} {{namespace}}' } })],
      vars,
    );
    expect(fine).toMatchObject({ ok: true, actions: [{ params: { script: 'echo payments shop' } }] });
  });

  it("a step's public form has no headers, body or script text", () => {
    const http = publicStep(
      parse({
        type: 'HttpRequest',
        params: {
          method: 'POST',
          url: 'https://u:p@hooks.example.com/x?token=t',
          headers: { Authorization: 'Bearer z' },
          body: 'b',
        },
      }),
    );
    expect(http.params).toEqual({ method: 'POST', url: 'https://hooks.example.com/x' });
    expect(publicStep(parse({ type: 'RunScript', params: { script: 'echo secret' } })).params).toEqual({
      script: 'script (11 bytes)',
    });
  });
});
