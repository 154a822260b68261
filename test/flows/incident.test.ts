import type { WorkflowHandle } from '@temporalio/client';
import type { ApprovalDecisionRequest } from '../../domain/approval-requests';
import {
  SYSTEM_ACTOR,
  type Actor,
  type CorrelatedSignal,
  type LiveState,
  type ResolveRequest,
} from '../../domain/incident-requests';
import { PLAN_ABANDONED_RESULT } from '../../domain/remediation';
import { decideApprovalUpdate } from '../../workflows/approval-messages';
import { ladderStateQuery } from '../../workflows/escalation-messages';
import {
  acknowledgeUpdate,
  correlateSignal,
  liveStateQuery,
  resolveUpdate,
  signalsQueuedSignal,
  snoozeUpdate,
} from '../../workflows/incident-messages';
import { INCIDENT, INCIDENT_STATE, REMEDIATION_STATE } from '../../workflows/search-attributes';
import { useFlowEnv } from '../harness/flow-env';
import {
  asActivities,
  createFakes,
  gate,
  heldWithHeartbeats,
  inputs,
  LADDER,
  MINUTE,
  options,
  person,
  plan,
  planNeedingApproval,
  slack,
  TARGET,
  until,
  untilIdle,
  terminateWhenIdle,
  type Fakes,
} from './fakes';

/**
 * The incident workflow (workflows/index.ts `incidentWorkflow`) with fake activities on the
 * time-skipping server: its triage, the plans it runs in its own run (approval, steps,
 * verification, rollback, the next strategy), its escalation to the ladder, its close, and the
 * acknowledge / snooze / resolve updates in each phase. The approval and ladder children run on
 * the same worker with the same fakes. Time moves only when a test awaits a result or sleeps.
 */

let flow: Awaited<ReturnType<typeof useFlowEnv>>;
beforeAll(async () => {
  flow = await useFlowEnv();
}, 120_000);
afterAll(() => flow?.stop());

let incidents = 0;

const ALERTMANAGER: Actor = { user: 'alertmanager', role: 'system', sourceIP: '10.0.0.2', userAgent: 'Alertmanager' };

const acknowledge = (incident: WorkflowHandle, by = 'alice') =>
  incident.executeUpdate(acknowledgeUpdate, {
    args: [{ acknowledgedBy: by, message: 'looking', actor: person(by) }],
  });
const snooze = (incident: WorkflowHandle, duration = '30m', durationMs = 30 * MINUTE) =>
  incident.executeUpdate(snoozeUpdate, {
    args: [{ duration, durationMs, reason: 'deploy in progress', snoozedBy: 'alice', actor: person('alice') }],
  });
const resolve = (incident: WorkflowHandle, request: Partial<ResolveRequest> = {}) =>
  incident.executeUpdate(resolveUpdate, {
    args: [{ resolution: 'fixed by hand', actor: person('bob'), atSource: false, ...request }],
  });
const resolveAtSource = (incident: WorkflowHandle) =>
  resolve(incident, { resolution: 'the alert resolved', actor: ALERTMANAGER, atSource: true });
const decide = (approval: string, decision: ApprovalDecisionRequest['decision'], by = 'olivia', comment?: string) =>
  flow.client.workflow
    .getHandle(approval)
    .executeUpdate(decideApprovalUpdate, { args: [{ decision, actor: person(by), ...(comment && { comment }) }] });

const live = (incident: WorkflowHandle): Promise<LiveState> => incident.query(liveStateQuery);
const attributes = async (incident: WorkflowHandle) => {
  const sa = (await incident.describe()).typedSearchAttributes;
  return { state: sa.get(INCIDENT_STATE), plan: sa.get(REMEDIATION_STATE), incident: sa.get(INCIDENT) };
};
const untilState = (incident: WorkflowHandle, state: string) =>
  until(async () => (await live(incident)).state === state, `state ${state}`);

/** The approval the running plan asked for (its name, once its record says Pending on it). */
async function approvalAsked(fakes: Fakes, n = 1): Promise<string> {
  const asked = () => inputs(fakes.setPlanState).filter((s) => s.approval);
  await until(() => asked().length >= n, `approval ${n} asked`);
  const name: string = asked()[n - 1].approval;
  // Its workflow runs (started by the plan as its child): decisions go to it.
  await until(async () => {
    try {
      await flow.client.workflow.getHandle(name).describe();
      return true;
    } catch {
      return false;
    }
  }, `approval workflow ${name}`);
  return name;
}

const signal = (at = new Date().toISOString()): CorrelatedSignal => ({
  signalType: 'CrashLoopBackOff',
  severity: 'critical',
  description: 'api keeps crashing',
  source: 'alertmanager',
  labels: { pod: 'api-7d9-x' },
  at,
});

/** 409 Conflict, as the validators answer: the type and message the API maps to its status. */
const conflict = (message: string, details: RegExp) => ({
  cause: { type: 'Conflict', message, details: [expect.stringMatching(details)] },
});

/**
 * Starts an incident with `fakes` (its triage's answer set by the test) and runs `test` while a
 * worker runs; the incident and its ladder are terminated after.
 */
async function withIncident(
  fakes: Fakes,
  test: (incident: WorkflowHandle, name: string, taskQueue: string) => Promise<void>,
  carried?: unknown,
): Promise<void> {
  const { worker, taskQueue } = await flow.worker(asActivities(fakes));
  const name = `INC-F${++incidents}`;
  await worker.runUntil(async () => {
    const incident = await flow.client.workflow.start('incidentWorkflow', {
      taskQueue,
      workflowId: name,
      args: [
        {
          name,
          namespace: TARGET.namespace,
          resource: 'Deployment/api',
          severity: 'critical',
          ...(carried ? { carried } : {}),
        },
      ],
      // As the API starts it: the triage's first write, Analyzing, said from the start.
      typedSearchAttributes: [
        { key: INCIDENT, value: name },
        { key: INCIDENT_STATE, value: 'Analyzing' },
      ],
    });
    try {
      await test(incident, name, taskQueue);
    } finally {
      const approvals = inputs(fakes.setPlanState).flatMap((s) => (s.approval ? [s.approval as string] : []));
      await terminateWhenIdle(
        [name, `${name}-escalation`, ...approvals].map((id) => flow.client.workflow.getHandle(id)),
      );
    }
  });
}

/** The triage's answer: a first plan to run (the options allow `more` strategies after it). */
const triageWith = (fakes: Fakes, first: ReturnType<typeof plan>, opts = options(), drained = 0) =>
  fakes.drainAndTriage.mockImplementation(async (input) => ({
    drained,
    triage: { ...opts, firstPlan: { ...first, incident: input.name } },
  }));
/** The triage escalated: nothing to try. */
const triageEscalated = (fakes: Fakes, none = false) =>
  fakes.drainAndTriage.mockImplementation(async () => ({
    drained: 0,
    triage: {
      ...options({ runbooks: [] }),
      escalated: {
        message: 'No automatic remediation strategy is available; escalated to on-call',
        none,
        ladder: LADDER,
        ...(!none && { level1: [slack] }),
      },
    },
  }));

/** Two runbooks for the incident: after the first one's plan fails, the second is tried. */
const twoRunbooks = () =>
  options({
    runbooks: [
      { name: 'scale-api', tier: 1, maxAttempts: 1, usesKubernetes: true },
      { name: 'restart-api', tier: 2, maxAttempts: 1, usesKubernetes: true },
    ],
  });

const finished = (fakes: Fakes) => inputs(fakes.finishPlan);
const undone = (fakes: Fakes) => inputs(fakes.recordStep).filter((s) => s.outcome === 'undone');
const closeOf = (fakes: Fakes) => inputs(fakes.closeIncident)[0];

describe('the incident workflow: triage that escalates', () => {
  it('escalates to the ladder when the triage found nothing to try; acknowledge, snooze and resolve reach the ladder; 409s and invalid durations are refused', async () => {
    const fakes = createFakes();
    triageEscalated(fakes);
    await withIncident(fakes, async (incident, name) => {
      await untilState(incident, 'Escalated');
      expect(inputs(fakes.drainAndTriage)).toEqual([
        expect.objectContaining({ name, prepareFirstPlan: true, escalate: true, firstIndex: 0 }),
      ]);
      expect(await attributes(incident)).toMatchObject({ state: 'Escalated', incident: name });
      // The ladder child: L1 with the endpoints the triage read, and the reason without its ending.
      const ladder = flow.client.workflow.getHandle(`${name}-escalation`);
      await until(() => fakes.deliverNotification.mock.calls.length > 0, 'L1');
      expect(inputs(fakes.deliverNotification)).toEqual([
        expect.objectContaining({
          incident: name,
          endpoint: slack,
          event: 'incident.escalated',
          level: 1,
          message: 'No automatic remediation strategy is available',
        }),
      ]);
      expect(fakes.preparePlan).not.toHaveBeenCalled();
      expect(fakes.setPlanState).not.toHaveBeenCalled();
      expect(fakes.chooseEscalation).not.toHaveBeenCalled(); // the triage chose it

      // Snooze: validated, written, told to the ladder.
      await expect(snooze(incident, '48h', 48 * 60 * MINUTE)).rejects.toMatchObject({
        cause: { type: 'InvalidRequest', message: 'Invalid duration', details: ['48h is not between 0s and 24h'] },
      });
      await expect(snooze(incident, '0s', 0)).rejects.toMatchObject({ cause: { message: 'Invalid duration' } });
      expect(fakes.snoozeIncident).not.toHaveBeenCalled();
      await snooze(incident);
      expect(inputs(fakes.snoozeIncident)).toEqual([
        expect.objectContaining({ name, request: expect.objectContaining({ durationMs: 30 * MINUTE }) }),
      ]);
      expect((await live(incident)).snoozeUntil).toBeDefined();
      await until(async () => (await ladder.query(ladderStateQuery)).state === 'snoozed', 'the ladder snoozed');

      // Acknowledge: once; the second is a 409 naming the first.
      await acknowledge(incident, 'alice');
      expect(inputs(fakes.acknowledgeIncident)).toEqual([
        expect.objectContaining({ name, request: expect.objectContaining({ acknowledgedBy: 'alice' }) }),
      ]);
      await expect(acknowledge(incident, 'carol')).rejects.toMatchObject(
        conflict('Incident already acknowledged', /^acknowledged by alice at /),
      );
      expect(fakes.acknowledgeIncident).toHaveBeenCalledTimes(1);
      await until(
        async () => (await ladder.query(ladderStateQuery)).state === 'acknowledged',
        'the ladder acknowledged',
      );
      expect(await live(incident)).toMatchObject({ state: 'Escalated', acknowledged: true, acknowledgedBy: 'alice' });

      // The source clearing does not close an escalated incident: people have it.
      expect(await resolveAtSource(incident)).toBe(false);
      expect(inputs(fakes.noteSourceResolution)).toEqual([{ name, at: expect.any(String) }]);
      expect(fakes.resolveIncident).not.toHaveBeenCalled();
      expect((await live(incident)).state).toBe('Escalated');

      // A person resolves: written before the update answers; the ladder ends; the close writes the postmortem.
      const closing = gate();
      fakes.closeIncident.mockImplementation(async () => {
        await heldWithHeartbeats(closing);
        return { recorded: 0, postmortem: 'PM-1' };
      });
      expect(await resolve(incident)).toBe(true);
      expect(inputs(fakes.resolveIncident)).toEqual([
        expect.objectContaining({ name, request: expect.objectContaining({ actor: person('bob'), atSource: false }) }),
      ]);
      await ladder.result();
      await until(() => fakes.closeIncident.mock.calls.length === 1, 'the close');
      // While it closes, every update is a 409.
      const resolvedBy = /^resolved by bob at /;
      await expect(resolve(incident)).rejects.toMatchObject(conflict('Incident already resolved', resolvedBy));
      await expect(acknowledge(incident, 'dave')).rejects.toMatchObject(
        conflict('Incident already resolved', resolvedBy),
      );
      await expect(snooze(incident)).rejects.toMatchObject(conflict('Incident already resolved', resolvedBy));
      closing.open();
      await incident.result();
      expect(closeOf(fakes)).toEqual({ name, firstIndex: 0, resolve: undefined });
      expect(await attributes(incident)).toMatchObject({ state: 'Resolved' });
      expect(fakes.resolveIncident).toHaveBeenCalledTimes(1);
    });
  });

  it('ends Failed under the escalation policy none: nobody is paged', async () => {
    const fakes = createFakes();
    triageEscalated(fakes, true);
    await withIncident(fakes, async (incident) => {
      await untilState(incident, 'Failed');
      expect(await attributes(incident)).toMatchObject({ state: 'Failed' });
      expect(await resolve(incident)).toBe(true);
      await incident.result();
      expect(fakes.deliverNotification).not.toHaveBeenCalled();
      expect(fakes.levelEndpoints).not.toHaveBeenCalled();
    });
  });
});

describe('the incident workflow: a plan that needs approval', () => {
  it('approved → its step runs → verified → resolved by system; the close writes that resolve with the postmortem', async () => {
    const fakes = createFakes();
    triageWith(fakes, planNeedingApproval(), options(), 2);
    await withIncident(fakes, async (incident, name) => {
      const approval = await approvalAsked(fakes);
      expect(await attributes(incident)).toEqual({ state: 'Remediating', plan: 'Pending', incident: name });
      expect(inputs(fakes.requestApproval)).toEqual([
        expect.objectContaining({
          key: 'RP-1',
          incident: name,
          plan: 'RP-1',
          action: 'ScaleDeployment {"replicas":4}',
          requiredRole: 'operator',
          reasons: ['runbook scale-api requires approval'],
          previews: [expect.objectContaining({ step: 1, action: 'ScaleDeployment', summary: 'replicas 2 → 4' })],
          ttlMs: 30 * MINUTE,
        }),
      ]);
      expect(fakes.kubeScaleDeployment).not.toHaveBeenCalled();
      // The triage's drain counted.
      expect((await live(incident)).correlatedSignals).toBe(2);

      await decide(approval, 'approve', 'olivia', 'go');
      await incident.result();

      expect(inputs(fakes.setPlanState)).toEqual([
        { plan: 'RP-1', state: 'Pending', approval },
        { plan: 'RP-1', state: 'Executing' },
      ]);
      expect(inputs(fakes.kubeScaleDeployment)).toEqual([{ key: 'RP-1/0/0', ...TARGET, replicas: 4 }]);
      expect(inputs(fakes.recordStep)).toEqual([
        {
          plan: 'RP-1',
          index: 0,
          outcome: 'ok',
          result: 'deployment shop/api: replicas 2 → 4',
          params: { replicas: 4 },
          type: 'ScaleDeployment',
          then: 'Verifying',
        },
      ]);
      // Healthy at once, then again at the end of the 5-minute window.
      expect(inputs(fakes.awaitTargetHealthy)).toEqual([
        expect.objectContaining({ ...TARGET, timeoutMs: 5 * MINUTE }),
        expect.objectContaining({ ...TARGET, timeoutMs: 0 }),
      ]);
      const result = 'verified: deployment shop/api is healthy; stayed healthy for the 5m0s window';
      expect(finished(fakes)).toEqual([
        { plan: 'RP-1', state: 'Completed', result, verification: expect.objectContaining({ passed: true }) },
      ]);
      expect(fakes.recordVerification).not.toHaveBeenCalled(); // written with the end
      expect(closeOf(fakes)).toEqual({
        name,
        firstIndex: 2,
        resolve: {
          name,
          at: expect.any(String),
          request: {
            resolution: `Remediated automatically by plan RP-1 (runbook scale-api (tier 1: category+severity+kind)): ${result}`,
            actor: SYSTEM_ACTOR,
            atSource: false,
            automatic: true,
          },
        },
      });
      expect(fakes.resolveIncident).not.toHaveBeenCalled(); // the close writes it
      expect(fakes.chooseEscalation).not.toHaveBeenCalled();
      expect(await attributes(incident)).toEqual({ state: 'Resolved', plan: 'Completed', incident: name });
      expect(await live(incident)).toMatchObject({ state: 'Resolved', resolvedBy: 'system' });
    });
  });

  it('rejected → the plan fails and the incident escalates to the ladder with the reason', async () => {
    const fakes = createFakes();
    triageWith(fakes, planNeedingApproval());
    await withIncident(fakes, async (incident, name) => {
      const approval = await approvalAsked(fakes);
      await decide(approval, 'reject', 'bob', 'not now');
      await untilState(incident, 'Escalated');
      const result = `approval ${approval} rejected by bob: not now`;
      expect(finished(fakes)).toEqual([{ plan: 'RP-1', state: 'Failed', result }]);
      const message = `Remediation plan RP-1 was not approved (${result}); escalated to on-call`;
      expect(inputs(fakes.chooseEscalation)).toEqual([{ incident: name }]);
      expect(inputs(fakes.setIncidentState)).toEqual([
        {
          name,
          state: 'Escalated',
          at: expect.any(String),
          event: { type: 'Escalation', source: 'escalation-engine', message },
        },
      ]);
      expect(fakes.kubeScaleDeployment).not.toHaveBeenCalled();
      // The ladder reads L1's endpoints itself and pages with automation's reason.
      await until(() => inputs(fakes.deliverNotification).some((d) => d.event === 'incident.escalated'), 'L1');
      expect(inputs(fakes.levelEndpoints).filter((e) => e.why === 'L1')).toEqual([
        { incident: name, policy: 'critical', level: 0, why: 'L1' },
      ]);
      expect(inputs(fakes.deliverNotification).find((d) => d.event === 'incident.escalated')).toMatchObject({
        event: 'incident.escalated',
        level: 1,
        message: `Remediation plan RP-1 was not approved (${result})`,
      });
      expect(await attributes(incident)).toEqual({ state: 'Escalated', plan: 'Failed', incident: name });
    });
  });

  it('expired (nobody decided within its ttl) → the plan fails and the incident escalates', async () => {
    const fakes = createFakes();
    triageWith(fakes, planNeedingApproval());
    await withIncident(fakes, async (incident) => {
      const approval = await approvalAsked(fakes);
      await flow.env.sleep(29 * MINUTE);
      expect((await live(incident)).state).toBe('Remediating');
      expect(fakes.expireApproval).not.toHaveBeenCalled();

      await flow.env.sleep(2 * MINUTE);
      await untilState(incident, 'Escalated');
      expect(inputs(fakes.expireApproval)).toEqual([
        expect.objectContaining({ name: approval, reason: 'no decision within 30m0s' }),
      ]);
      expect(finished(fakes)).toEqual([
        { plan: 'RP-1', state: 'Failed', result: `approval ${approval} expired: no decision within 30m0s` },
      ]);
      expect(inputs(fakes.setIncidentState)[0].event.message).toBe(
        `Remediation plan RP-1 was not approved (approval ${approval} expired: no decision within 30m0s); escalated to on-call`,
      );
      expect(fakes.kubeScaleDeployment).not.toHaveBeenCalled();
    });
  });

  it('acknowledge and snooze are taken while it waits; a person’s resolve cancels the plan and expires the approval', async () => {
    const fakes = createFakes();
    triageWith(fakes, planNeedingApproval());
    await withIncident(fakes, async (incident, name) => {
      const approval = await approvalAsked(fakes);
      await acknowledge(incident);
      await snooze(incident);
      expect(fakes.acknowledgeIncident).toHaveBeenCalledTimes(1);
      expect(fakes.snoozeIncident).toHaveBeenCalledTimes(1);
      await expect(acknowledge(incident, 'carol')).rejects.toMatchObject(
        conflict('Incident already acknowledged', /^acknowledged by alice/),
      );
      await untilIdle(incident);
      await untilIdle(flow.client.workflow.getHandle(approval));
      expect(await resolve(incident)).toBe(true);
      await incident.result();

      // The plan's cancel reaches its approval: the approval's record expires ("incident resolved"),
      // written by the approval as it ends or by the plan, whichever the cancel reached first.
      expect(inputs(fakes.expireApproval)).toEqual(
        expect.arrayContaining([expect.objectContaining({ name: approval, reason: 'incident resolved' })]),
      );
      const cancelled =
        'cancelled in state Pending: the incident was resolved while the plan ran (no further step ran; 0 step(s) stayed applied)';
      expect(finished(fakes)).toEqual([{ plan: 'RP-1', state: 'Failed', result: expect.any(String) }]);
      expect([`approval ${approval} expired: incident resolved`, cancelled]).toContain(finished(fakes)[0].result);
      expect(fakes.kubeScaleDeployment).not.toHaveBeenCalled();
      expect(fakes.chooseEscalation).not.toHaveBeenCalled();
      expect(closeOf(fakes)).toEqual({ name, firstIndex: 0, resolve: undefined });
      expect(await attributes(incident)).toEqual({ state: 'Resolved', plan: 'Failed', incident: name });
    });
  });

  it('the alert resolving at source while the plan waits ends the plan (nothing ran) and resolves the incident as the source said', async () => {
    const fakes = createFakes();
    triageWith(fakes, planNeedingApproval());
    await withIncident(fakes, async (incident, name) => {
      const approval = await approvalAsked(fakes);
      await untilIdle(incident);
      await untilIdle(flow.client.workflow.getHandle(approval));
      expect(await resolveAtSource(incident)).toBe(false);
      expect(inputs(fakes.noteSourceResolution)).toEqual([{ name, at: expect.any(String), plan: 'RP-1' }]);
      await incident.result();

      expect(finished(fakes)).toEqual([
        { plan: 'RP-1', state: 'Failed', result: `approval ${approval} expired: the alert resolved at source` },
      ]);
      expect(fakes.kubeScaleDeployment).not.toHaveBeenCalled();
      expect(fakes.chooseEscalation).not.toHaveBeenCalled();
      expect(closeOf(fakes).resolve).toEqual({
        name,
        at: expect.any(String),
        request: expect.objectContaining({ actor: ALERTMANAGER, atSource: true }),
      });
      expect(await live(incident)).toMatchObject({ state: 'Resolved', resolvedBy: 'alertmanager' });
    });
  });
});

const HEALTHY = {
  healthy: true,
  checked: ['deployment shop/api rolled out and available'],
  seen: ['4/4 updated, 4/4 available'],
  summary: 'deployment shop/api is healthy',
};
const UNHEALTHY = {
  healthy: false,
  checked: ['deployment shop/api rolled out and available'],
  seen: ['pod api-7d9-x container app CrashLoopBackOff'],
  summary: 'deployment shop/api is not healthy: CrashLoopBackOff',
};

describe('the incident workflow: verification and rollback', () => {
  it('verification failed → the step is undone (RolledBack) → the next strategy’s plan is verified → resolved by system', async () => {
    const fakes = createFakes();
    triageWith(fakes, plan(), twoRunbooks());
    fakes.awaitTargetHealthy.mockResolvedValueOnce(UNHEALTHY);
    await withIncident(fakes, async (incident, name) => {
      await incident.result();
      expect(inputs(fakes.recordVerification)).toEqual([
        expect.objectContaining({
          plan: 'RP-1',
          passed: false,
          summary: 'deployment shop/api is not healthy: CrashLoopBackOff',
        }),
      ]);
      // Undone to the replicas recorded before the step.
      expect(inputs(fakes.kubeScaleDeployment)).toEqual([
        { key: 'RP-1/0/0', ...TARGET, replicas: 4 },
        { key: 'RP-1/undo/0/0', ...TARGET, replicas: 2 },
        { key: 'RP-2/0/0', ...TARGET, replicas: 4 },
      ]);
      expect(undone(fakes)).toEqual([
        expect.objectContaining({
          plan: 'RP-1',
          index: 0,
          type: 'ScaleDeployment',
          result: 'deployment shop/api: replicas 4 → 2',
        }),
      ]);
      expect(inputs(fakes.preparePlan)).toEqual([
        { name, attempt: 2, strategy: { kind: 'runbook', runbook: 'restart-api', tier: 2 } },
      ]);
      expect(finished(fakes)).toEqual([
        {
          plan: 'RP-1',
          state: 'RolledBack',
          result: 'verification failed: deployment shop/api is not healthy: CrashLoopBackOff; rolled back 1 step(s)',
        },
        expect.objectContaining({ plan: 'RP-2', state: 'Completed' }),
      ]);
      expect(closeOf(fakes).resolve.request.resolution).toMatch(/^Remediated automatically by plan RP-2 /);
      expect(await attributes(incident)).toEqual({ state: 'Resolved', plan: 'Completed', incident: name });
    });
  });

  it('a step that fails → what ran is undone → no strategy left → escalated', async () => {
    const fakes = createFakes();
    const twoSteps = plan({
      actions: [
        { type: 'ScaleDeployment', params: { replicas: 4 } },
        {
          type: 'HttpRequest',
          params: { method: 'POST', url: 'https://deploy.example.com/hooks/warm', expectStatus: 200 },
        },
      ],
    } as Partial<ReturnType<typeof plan>>);
    triageWith(fakes, twoSteps);
    fakes.runHttpPlanStep.mockResolvedValue({ status: 503, ok: false, durationMs: 40, repeated: false });
    await withIncident(fakes, async (incident, name) => {
      await untilState(incident, 'Escalated');
      expect(inputs(fakes.runHttpPlanStep)).toEqual([{ plan: 'RP-1', index: 1 }]);
      expect(inputs(fakes.recordStep)).toEqual([
        expect.objectContaining({ index: 0, outcome: 'ok' }),
        expect.objectContaining({
          index: 1,
          outcome: 'failed',
          result: 'POST answered 503 (expected 200)',
          type: 'HttpRequest',
        }),
        expect.objectContaining({ index: 0, outcome: 'undone' }),
      ]);
      expect(fakes.awaitTargetHealthy).not.toHaveBeenCalled();
      expect(finished(fakes)).toEqual([
        {
          plan: 'RP-1',
          state: 'RolledBack',
          result: 'step 2 HttpRequest failed: POST answered 503 (expected 200); rolled back 1 step(s)',
        },
      ]);
      expect(fakes.preparePlan).not.toHaveBeenCalled();
      expect(inputs(fakes.setIncidentState)).toEqual([
        expect.objectContaining({
          name,
          state: 'Escalated',
          event: expect.objectContaining({
            message: 'No remediation strategy left after 1 failed attempt(s); escalated to on-call',
          }),
        }),
      ]);
      expect(await attributes(incident)).toEqual({ state: 'Escalated', plan: 'RolledBack', incident: name });
    });
  });

  it('a correlated signal during verification is recorded, but the Deployment’s health decides: verified, resolved', async () => {
    const fakes = createFakes();
    triageWith(fakes, plan(), options({ maxAttempts: 1 }));
    const answer = gate();
    fakes.awaitTargetHealthy.mockImplementationOnce(async () => {
      await heldWithHeartbeats(answer);
      return HEALTHY;
    });
    await withIncident(fakes, async (incident, name) => {
      await until(() => fakes.awaitTargetHealthy.mock.calls.length === 1, 'verification');
      await untilState(incident, 'Remediating');
      // A pod of the ReplicaSet being replaced still crashes: its signal joins the incident.
      const joined = signal();
      await incident.signal(correlateSignal, joined);
      await until(async () => (await live(incident)).correlatedSignals === 1, 'the signal counted');
      answer.open();
      await incident.result();
      expect(inputs(fakes.recordCorrelatedSignals)).toEqual([
        { name, signals: [joined], firstIndex: 0, afterResolution: false },
      ]);
      expect(finished(fakes)).toEqual([expect.objectContaining({ plan: 'RP-1', state: 'Completed' })]);
      expect(undone(fakes)).toEqual([]);
      expect(closeOf(fakes).resolve.request).toMatchObject({ actor: SYSTEM_ACTOR, automatic: true });
    });
  });

  it('signals queued in the inbox during verification are drained and counted; the health decides', async () => {
    const fakes = createFakes();
    triageWith(fakes, plan(), options({ maxAttempts: 1 }));
    fakes.drainSignalInbox.mockResolvedValueOnce({ recorded: 3 });
    fakes.awaitTargetHealthy.mockResolvedValueOnce(UNHEALTHY);
    await withIncident(fakes, async (incident, name) => {
      await until(() => fakes.awaitTargetHealthy.mock.calls.length === 1, 'verification');
      await incident.signal(signalsQueuedSignal, {
        count: 3,
        signalType: 'CrashLoopBackOff',
        at: new Date().toISOString(),
      });
      await untilState(incident, 'Escalated');
      expect(inputs(fakes.drainSignalInbox)[0]).toEqual({ name, firstIndex: 0, afterResolution: false, limit: 500 });
      await until(async () => (await live(incident)).correlatedSignals === 3, 'three signals counted');
      expect(finished(fakes)[0]).toMatchObject({
        state: 'RolledBack',
        result: expect.stringContaining(UNHEALTHY.summary),
      });
    });
  });

  it('acknowledge and snooze are taken while it verifies; the source clearing leaves the verdict to the plan, which resolves it', async () => {
    const fakes = createFakes();
    triageWith(fakes, plan());
    await withIncident(fakes, async (incident, name) => {
      await until(() => fakes.awaitTargetHealthy.mock.calls.length === 1, 'verification');
      await acknowledge(incident);
      await snooze(incident, '1h', 60 * MINUTE);
      expect(await resolveAtSource(incident)).toBe(false);
      expect(inputs(fakes.noteSourceResolution)).toEqual([{ name, at: expect.any(String), plan: 'RP-1' }]);
      expect((await live(incident)).state).toBe('Remediating');
      await incident.result();
      expect(finished(fakes)).toEqual([expect.objectContaining({ plan: 'RP-1', state: 'Completed' })]);
      expect(closeOf(fakes).resolve.request).toMatchObject({ actor: SYSTEM_ACTOR, automatic: true });
      expect(await live(incident)).toMatchObject({ acknowledged: true, resolvedBy: 'system' });
    });
  });

  it('a person’s resolve while it verifies cancels the plan (its step stays applied, nothing undone)', async () => {
    const fakes = createFakes();
    triageWith(fakes, plan());
    await withIncident(fakes, async (incident, name) => {
      await until(() => fakes.awaitTargetHealthy.mock.calls.length === 1, 'verification');
      expect(await attributes(incident)).toEqual({ state: 'Remediating', plan: 'Verifying', incident: name });
      await untilIdle(incident);
      expect(await resolve(incident)).toBe(true);
      await incident.result();
      expect(finished(fakes)).toEqual([
        {
          plan: 'RP-1',
          state: 'Failed',
          result:
            'cancelled in state Verifying: the incident was resolved while the plan ran (no further step ran; 1 step(s) stayed applied)',
        },
      ]);
      expect(undone(fakes)).toEqual([]);
      expect(inputs(fakes.resolveIncident)).toHaveLength(1);
      expect(closeOf(fakes)).toEqual({ name, firstIndex: 0, resolve: undefined });
      expect(await attributes(incident)).toEqual({ state: 'Resolved', plan: 'Failed', incident: name });
    });
  });
});

describe('the incident workflow: while analysing', () => {
  it('takes acknowledge, snooze and resolve during the triage; the plan the triage made is abandoned, never run', async () => {
    const fakes = createFakes();
    const triaging = gate();
    fakes.drainAndTriage.mockImplementation(async (input) => {
      await heldWithHeartbeats(triaging);
      return { drained: 1, triage: { ...options(), firstPlan: plan({ incident: input.name }) } };
    });
    await withIncident(fakes, async (incident, name) => {
      await until(() => fakes.drainAndTriage.mock.calls.length > 0, 'the triage');
      expect((await live(incident)).state).toBe('Analyzing');
      expect(await attributes(incident)).toMatchObject({ state: 'Analyzing' });
      await acknowledge(incident);
      await snooze(incident);
      expect(await resolve(incident)).toBe(true);
      await expect(acknowledge(incident)).rejects.toMatchObject(
        conflict('Incident already resolved', /^resolved by bob/),
      );
      triaging.open();
      await incident.result();
      expect(finished(fakes)).toEqual([{ plan: 'RP-1', state: 'Failed', result: PLAN_ABANDONED_RESULT }]);
      expect(fakes.setPlanState).not.toHaveBeenCalled();
      expect(fakes.kubeScaleDeployment).not.toHaveBeenCalled();
      expect(closeOf(fakes)).toEqual({ name, firstIndex: 1, resolve: undefined });
      expect(await live(incident)).toMatchObject({ state: 'Resolved', acknowledged: true, correlatedSignals: 1 });
    });
  });
});

describe('the incident workflow: continue-as-new', () => {
  it('goes on from what the run before carried: its state, the acknowledge, the signals not recorded yet, the ladder', async () => {
    const fakes = createFakes();
    fakes.drainSignalInbox.mockResolvedValueOnce({ recorded: 2 });
    const waiting = signal();
    const carried = {
      live: {
        state: 'Escalated',
        acknowledged: true,
        acknowledgedBy: 'alice',
        acknowledgedAt: '2026-01-01T10:00:00.000Z',
        correlatedSignals: 5,
      },
      pending: [waiting],
      signalsRecorded: 5,
      ladder: true,
    };
    await withIncident(
      fakes,
      async (incident, name, taskQueue) => {
        // The ladder the earlier run started, still running.
        const ladder = await flow.client.workflow.start('escalationWorkflow', {
          taskQueue,
          workflowId: `${name}-escalation`,
          args: [
            {
              incident: name,
              namespace: 'shop',
              ladder: LADDER,
              reason: 'r',
              acknowledged: true,
              carried: { level: 0, attempt: 1, notified: [], acknowledgeSent: true },
            },
          ],
        });
        await until(
          async () => (await live(incident)).correlatedSignals === 8,
          'the carried and queued signals recorded',
        );
        expect(fakes.drainAndTriage).not.toHaveBeenCalled();
        expect(inputs(fakes.recordCorrelatedSignals)).toEqual([
          { name, signals: [waiting], firstIndex: 5, afterResolution: false },
        ]);
        expect(inputs(fakes.drainSignalInbox)[0]).toMatchObject({ name, firstIndex: 6 });
        expect(await attributes(incident)).toMatchObject({ state: 'Escalated' });
        await expect(acknowledge(incident, 'carol')).rejects.toMatchObject(
          conflict('Incident already acknowledged', /^acknowledged by alice at 2026-01-01T10:00:00.000Z$/),
        );

        expect(await resolve(incident)).toBe(true);
        await incident.result();
        // The carried ladder hears the resolve and ends.
        await ladder.result();
        expect(closeOf(fakes)).toEqual({ name, firstIndex: 8, resolve: undefined });
      },
      carried,
    );
  });
});
