import { MockActivityEnvironment } from '@temporalio/testing';
import { categoryRunbooks } from '../../activities/incidents';
import { createRemediationSteps } from '../../activities/remediation';
import { parseConfig } from '../../config/env';
import { completeKubeAction, recordKubeActionIntent } from '../../store/kube-actions';
import {
  clearDedupEntry,
  getIncident,
  getTimeline,
  openOrJoin,
  updateIncident,
  type IncidentRecord,
} from '../../store/incidents';
import type { PreparedPlan } from '../../domain/remediation-plan';
import { RunbookModel } from '../../store/models';
import { createPlanOnce } from '../../store/remediations';
import { seedBuiltinRunbooks } from '../../store/runbooks';
import { useMongo } from '../harness/mongo';

/**
 * What remediation remembers across incidents, against the real store: a fix that held but whose
 * failure came back within the hour is skipped as ineffective and the timeline says why; a
 * second template change to one Deployment within the cool-down asks a person; a retired
 * built-in runbook no admin edited is removed at start.
 */

let mongo: Awaited<ReturnType<typeof useMongo>>;
const steps = createRemediationSteps(parseConfig({}), false);

beforeAll(async () => {
  mongo = await useMongo();
  await seedBuiltinRunbooks();
});
afterAll(() => mongo?.stop());

async function open(resource: string): Promise<IncidentRecord> {
  const { incident } = await openOrJoin({
    resource,
    namespace: 'shop',
    signalType: 'CrashLoopBackOff',
    severity: 'high',
    description: 'test',
    cluster: 'local',
    labels: {},
    detectionSource: 'api',
  });
  return (await getIncident(incident.name))!;
}

/** A plan that resolved `incident` with `strategyKey` a moment ago. */
async function heldFix(incident: IncidentRecord, strategyKey: string, strategy: string) {
  const now = new Date();
  await createPlanOnce({
    name: `RP-20261207-${Math.floor(Math.random() * 900 + 100)}`,
    key: `${incident.name}/attempt/1`,
    namespace: incident.namespace,
    issueRef: incident.name,
    cluster: incident.cluster,
    attempt: 1,
    strategy,
    strategyKind: 'runbook',
    strategyKey,
    subject: `${incident.cluster}/${incident.namespace}/${incident.resource}/${incident.signalType}`,
    runbook: 'crashloop-restart',
    state: 'Completed',
    result: 'verified',
    agenticMode: false,
    agenticStepCount: 0,
    actions: [{ type: 'RestartDeployment', params: {} }],
    riskScore: 50,
    approvalRequired: false,
    approvalReasons: [],
    approval: '',
    verifyWindowMs: 60_000,
    startedAt: now,
    completedAt: now,
    creationTimestamp: now,
  });
}

it('skips a fix whose failure came back within the hour, and says why on the timeline', async () => {
  const first = await open('Deployment/checkout');
  await heldFix(first, 'runbook:crashloop-restart', 'runbook crashloop-restart (tier 1: category+severity+kind)');
  await updateIncident(first.name, { state: 'Resolved', resolvedAt: new Date(), resolvedBy: 'system' });
  await clearDedupEntry(first);
  const again = await open('Deployment/checkout');
  expect(again.name).not.toBe(first.name);

  const options = await steps.options(again, await categoryRunbooks(again), undefined);
  const restart = options.runbooks.find((r) => r.name === 'crashloop-restart');
  expect(restart?.skipped).toMatch(
    new RegExp(
      `^ineffective: plan RP-\\d{8}-\\d{3} \\(runbook crashloop-restart .*\\) resolved ${first.name} at .* and the same CrashLoopBackOff on Deployment/checkout came back within the hour$`,
    ),
  );
  expect(options.runbooks.find((r) => r.name === 'crashloop-rollback')?.skipped).toBeUndefined();
  expect(options.ineffective).toEqual(['runbook:crashloop-restart']);
  // What it did is ruled out for any strategy: a restart that did not last is not tried again.
  expect(options.guidance?.ruledOut).toEqual({ RestartDeployment: restart!.skipped });
  const skipped = (await getTimeline(again.name)).filter((e) => e.type === 'RunbookMatch');
  expect(skipped.map((e) => e.message)).toEqual([`Runbook crashloop-restart skipped: ${restart!.skipped}`]);

  // Another workload's failure is its own.
  const other = await open('Deployment/cart');
  const elsewhere = await steps.options(other, await categoryRunbooks(other), undefined);
  expect(elsewhere.runbooks.every((r) => !r.skipped)).toBe(true);
});

it('asks a person for a second template change to one Deployment within the cool-down', async () => {
  const incident = await open('Deployment/payments');
  const prepare = (attempt: number): Promise<PreparedPlan> =>
    new MockActivityEnvironment().run(() =>
      steps.prepare(incident, {
        attempt,
        strategy: { kind: 'runbook', runbook: 'crashloop-restart', tier: 1 },
      }),
    );
  const calm = await prepare(1);
  expect(calm.approval.reasons.filter((r) => r.startsWith('cool-down'))).toEqual([]);

  await recordKubeActionIntent({
    key: `${calm.name}/0`,
    action: 'RestartDeployment',
    cluster: 'local',
    target: 'deployment shop/payments',
    params: '{}',
    intent: {},
  });
  await completeKubeAction(`${calm.name}/0`, { restartedAt: new Date().toISOString() });
  const second = await prepare(2);
  expect(second.approval.required).toBe(true);
  expect(second.approval.reasons[0]).toMatch(
    new RegExp(
      `^cool-down: RestartDeployment \\(${calm.name}/0\\) changed deployment shop/payments at .*; another rollout change within 10m0s needs a person$`,
    ),
  );
});

it('removes a retired built-in runbook nobody edited, and keeps an edited one', async () => {
  const at = new Date('2026-11-01T00:00:00Z');
  const retired = {
    category: 'crashloop',
    description: 'restart, wait, roll back',
    version: '1.0.0',
    automated: true,
    approvalRequired: true,
    severity: ['high'],
    targets: { signalTypes: ['CrashLoopBackOff'], resourceKinds: ['Deployment'] },
    steps: [{ type: 'RestartDeployment', params: {} }],
    maxAttempts: 1,
    builtin: true,
  };
  await RunbookModel.create({
    ...retired,
    name: 'crashloop-restart-then-rollback',
    createdAt: at,
    updatedAt: at,
  } as never);
  await seedBuiltinRunbooks();
  expect(await RunbookModel.countDocuments({ name: 'crashloop-restart-then-rollback' })).toBe(0);

  await RunbookModel.create({
    ...retired,
    name: 'crashloop-restart-then-rollback',
    createdAt: at,
    updatedAt: new Date('2026-11-02T00:00:00Z'),
  } as never);
  await seedBuiltinRunbooks();
  expect(await RunbookModel.countDocuments({ name: 'crashloop-restart-then-rollback' })).toBe(1);
});

it('a rollback the evidence calls for asks a person, whatever its risk', async () => {
  const incident = await open('Deployment/orders');
  const plan: PreparedPlan = await new MockActivityEnvironment().run(() =>
    steps.prepare(incident, {
      attempt: 1,
      strategy: {
        kind: 'evidence',
        plan: 'rollback',
        summary: 'roll back to revision 1 (app=orders:1), the last revision seen healthy',
        actions: [{ type: 'RollbackDeployment', params: {} }],
      },
    }),
  );
  expect(plan.strategy).toBe(
    'from the evidence: roll back to revision 1 (app=orders:1), the last revision seen healthy',
  );
  expect(plan.approval).toMatchObject({
    required: true,
    reasons: expect.arrayContaining(['a rollback discards a release someone shipped: a person confirms it']),
  });
});
