import { configChange, nodeConditionChange } from '../../domain/change-record';
import type { PodEvidence } from '../../domain/evidence';
import {
  chooseStrategy,
  giveUpReason,
  strategyKey,
  type RemediationOptions,
  type Strategy,
} from '../../domain/remediation';
import { failureSignature, guidanceFrom, ruledOutBy } from '../../domain/remediation-guidance';
import { before, crashing, evidence, health, person, rollout, shape } from '../fixtures/evidence';

/**
 * Strategy from evidence (docs/remediation.md §2): a rollout before the failure is rolled back to
 * the last revision seen healthy with no restart first; a lowered memory limit is restored; a
 * crash with no change is restarted once; a changed ConfigMap escalates at once; a node NotReady
 * rules the workload rollback out.
 */

const incident = { resource: 'Deployment/checkout', signalType: 'CrashLoopBackOff' };
const badDeploy = () =>
  evidence(
    [rollout(1, 'checkout:1', before(7200)), rollout(2, 'checkout:2', before(6), undefined, ['checkout:1'])],
    [health(2, 'checkout:2', 'Failed'), health(1, 'checkout:1', 'Healthy')],
    [crashing],
  );

const options = (over: Partial<RemediationOptions> = {}): RemediationOptions => ({
  maxAttempts: 3,
  clusterRegistered: true,
  deployment: true,
  runbooks: [
    { name: 'crashloop-restart', tier: 1, maxAttempts: 1, usesKubernetes: true },
    { name: 'crashloop-rollback', tier: 1, maxAttempts: 1, usesKubernetes: true },
  ],
  llm: false,
  ...over,
});

describe('guidanceFrom', () => {
  it('a bad deploy: roll back to the last healthy revision first, restarts ruled out', () => {
    const g = guidanceFrom(badDeploy(), incident);
    expect(g.plan).toMatchObject({ kind: 'rollback', actions: [{ type: 'RollbackDeployment', params: {} }] });
    expect(g.plan!.summary).toMatch(
      /^roll back to revision 1 \(app=checkout:1\), the last revision seen healthy: revision 2 rolled out 6s before the failure began \(evidence E1\)$/,
    );
    expect(g.ruledOut.RestartDeployment).toContain('a restart runs the same template again');
    expect(g.escalate).toBeUndefined();
    expect(ruledOutBy(g, [{ type: 'RestartDeployment' }, { type: 'Wait' }])).toMatch(/^RestartDeployment is ruled out/);
    expect(ruledOutBy(g, [{ type: 'RollbackDeployment' }])).toBeUndefined();
  });

  it('a bad deploy with no revision seen healthy: no rollback, a person at once', () => {
    const e = evidence(
      [rollout(2, 'checkout:2', before(6), undefined, ['checkout:1'])],
      [health(2, 'checkout:2', 'Failed'), health(1, 'checkout:1', 'Progressing')],
      [crashing],
    );
    const g = guidanceFrom(e, incident);
    expect(g.plan).toBeUndefined();
    expect(g.escalate).toMatch(/Foghorn saw no earlier revision of Deployment\/checkout healthy: no rollback/);
  });

  it('OOMKilled after a lowered memory limit: restore the limit', () => {
    const oom: PodEvidence = {
      ...crashing,
      waitingReason: 'CrashLoopBackOff',
      lastTermination: { reason: 'OOMKilled', exitCode: 137 },
    };
    const e = evidence(
      [rollout(2, 'checkout:1', before(30), '64Mi', ['checkout:1', '512Mi'])],
      [health(1, 'checkout:1', 'Healthy')],
      [oom],
      shape({ signalType: 'OOMKilled', reasons: ['OOMKilled'], failingImages: ['app=checkout:1'] }),
    );
    const g = guidanceFrom(e, { resource: 'Deployment/checkout', signalType: 'OOMKilled' });
    expect(g.plan).toMatchObject({
      kind: 'restore-memory',
      actions: [{ type: 'AdjustResources', params: { container: 'app', memoryLimit: '512Mi' } }],
    });
  });

  it('a ConfigMap changed before the crash: no rollback, no restart, escalate naming it', () => {
    const cfg = configChange(
      'c',
      'shop',
      'ConfigMap/checkout-config',
      '42',
      'a',
      'b',
      { added: [], removed: [], changed: ['checkout.yaml'] },
      ['Deployment/checkout'],
      before(20),
      person,
    );
    const g = guidanceFrom(evidence([cfg], [health(1, 'checkout:1', 'Healthy')], [crashing]), incident);
    expect(g.plan).toBeUndefined();
    expect(g.escalate).toMatch(/^ConfigMap\/checkout-config changed 20s before the first failure/);
    expect(g.ruledOut).toMatchObject({ RollbackDeployment: expect.any(String), RestartDeployment: expect.any(String) });
  });

  it('a node NotReady: no workload rollback or restart', () => {
    const e = evidence(
      [nodeConditionChange('c', 'node-a', 'Ready', 'True', 'False', 'KubeletNotReady', before(40))],
      [],
      [],
      shape({ signalType: 'Custom', reasons: ['NodeNotReady'], failingImages: [] }),
    );
    const g = guidanceFrom({ ...e, nodes: [{ name: 'node-a', ready: 'False', conditions: [] }] }, incident);
    expect(g.plan).toBeUndefined();
    expect(g.escalate).toBeUndefined();
    expect(g.ruledOut.RollbackDeployment).toMatch(/^node node-a is not Ready/);
    expect(g.ruledOut.RestartDeployment).toMatch(/restarted pods cannot run there$/);
  });

  it('a crash with no change: restart once, rollback ruled out', () => {
    const e = evidence([], [health(1, 'checkout:1', 'Healthy')], [crashing]);
    const g = guidanceFrom(e, incident);
    expect(g.plan).toMatchObject({ kind: 'restart', actions: [{ type: 'RestartDeployment', params: {} }] });
    expect(g.ruledOut.RollbackDeployment).toMatch(/no rollout of Deployment\/checkout preceded the failure/);
  });

  it('no evidence: no guidance', () => {
    expect(guidanceFrom(undefined, incident)).toEqual({ ruledOut: {} });
  });

  it("the failure's signature: reasons, the usual exit code, the last error line", () => {
    expect(failureSignature(badDeploy())).toEqual({
      reasons: ['CrashLoopBackOff', 'Error'],
      exitCode: 1,
      logLine: 'panic: nil map assignment',
    });
    expect(failureSignature(evidence([], [], []))).toBeUndefined();
  });
});

describe('choosing strategies with guidance', () => {
  it('runs the evidence plan first, then gives up to a person when it did not hold', () => {
    const g = guidanceFrom(badDeploy(), incident);
    const o = options({
      guidance: g,
      runbooks: [
        {
          name: 'crashloop-restart',
          tier: 1,
          maxAttempts: 1,
          usesKubernetes: true,
          skipped: ruledOutBy(g, [{ type: 'RestartDeployment' }]),
        },
        { name: 'crashloop-rollback', tier: 1, maxAttempts: 1, usesKubernetes: true },
      ],
    });
    const first = chooseStrategy(o, []) as Extract<Strategy, { kind: 'evidence' }>;
    expect(first).toMatchObject({ kind: 'evidence', plan: 'rollback' });
    expect(strategyKey(first)).toBe('evidence:rollback');
    expect(chooseStrategy(o, [first])).toBeNull();
    expect(giveUpReason(o, [first])).toMatch(
      /^The plan the evidence called for \(roll back to revision 1 .*\) did not hold: a person takes over; escalated to on-call$/,
    );
  });

  it('escalates at once when the evidence says so', () => {
    const o = options({ guidance: { ruledOut: {}, escalate: 'ConfigMap/x changed' } });
    expect(chooseStrategy(o, [])).toBeNull();
    expect(giveUpReason(o, [])).toBe('ConfigMap/x changed; escalated to on-call');
  });

  it('skips the evidence plan found ineffective, and skipped runbooks, and says why when none is left', () => {
    const g = guidanceFrom(evidence([], [health(1, 'checkout:1', 'Healthy')], [crashing]), incident);
    const o = options({
      guidance: g,
      ineffective: ['evidence:restart'],
      runbooks: [
        {
          name: 'crashloop-restart',
          tier: 1,
          maxAttempts: 1,
          usesKubernetes: true,
          skipped: 'ineffective: plan RP-1 …',
        },
      ],
    });
    expect(chooseStrategy(o, [])).toBeNull();
    expect(giveUpReason(o, [])).toBe(
      'No automatic remediation strategy is available (runbook crashloop-restart: ineffective: plan RP-1 …); escalated to on-call',
    );
  });

  it('skips the evidence plan whose step a fix that did not last ruled out', () => {
    const g = guidanceFrom(evidence([], [health(1, 'checkout:1', 'Healthy')], [crashing]), incident);
    const o = options({ guidance: { ...g, ruledOut: { ...g.ruledOut, RestartDeployment: 'ineffective: …' } } });
    expect(chooseStrategy(o, [])).toEqual({ kind: 'runbook', runbook: 'crashloop-restart', tier: 1 });
  });

  it('without guidance chooses as before', () => {
    expect(chooseStrategy(options(), [])).toEqual({ kind: 'runbook', runbook: 'crashloop-restart', tier: 1 });
  });
});
