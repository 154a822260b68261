import { Context } from '@temporalio/activity';
import type { WorkflowHandle } from '@temporalio/client';
import type { EscalationWorkflowInput, escalationWorkflow } from '../../workflows/escalation';
import {
  ladderAcknowledgedSignal,
  ladderResolvedSignal,
  ladderSnoozedSignal,
  ladderStateQuery,
} from '../../workflows/escalation-messages';
import { ESCALATION_STATE } from '../../workflows/search-attributes';
import { useFlowEnv } from '../harness/flow-env';
import {
  asActivities,
  createFakes,
  inputs,
  LADDER,
  MINUTE,
  pagerDuty,
  slack,
  terminateWhenIdle,
  until,
  type Fakes,
} from './fakes';

/**
 * The escalation ladder (workflows/escalation.ts) with fake notification activities on the
 * time-skipping server: L1 at once, each next level after the previous one's escalateAfter, the
 * last level repeated, acknowledge, snooze, maintenance windows, resolve, continue-as-new. Time
 * moves only when a test calls `env.sleep`.
 */

let flow: Awaited<ReturnType<typeof useFlowEnv>>;
beforeAll(async () => {
  flow = await useFlowEnv();
}, 120_000);
afterAll(() => flow?.stop());

let ladders = 0;

/** Starts a ladder with `fakes` and runs `test` against it while a worker runs. */
async function withLadder(
  fakes: Fakes,
  input: Partial<EscalationWorkflowInput>,
  test: (ladder: WorkflowHandle<typeof escalationWorkflow>) => Promise<void>,
): Promise<void> {
  const { worker, taskQueue } = await flow.worker(asActivities(fakes));
  const incident = `INC-L${++ladders}`;
  await worker.runUntil(async () => {
    const ladder = await flow.client.workflow.start<typeof escalationWorkflow>('escalationWorkflow', {
      taskQueue,
      workflowId: `${incident}-escalation`,
      args: [
        {
          incident,
          namespace: 'shop',
          ladder: LADDER,
          reason: 'No automatic remediation strategy is available',
          acknowledged: false,
          ...input,
        },
      ],
    });
    try {
      await test(ladder);
    } finally {
      await terminateWhenIdle([ladder]);
    }
  });
}

/** Deliveries of `event` (by level and attempt when given), as the ladder asked for them. */
const sent = (fakes: Fakes, event: string, level?: number, attempt?: number) =>
  inputs(fakes.deliverNotification).filter(
    (d) =>
      d.event === event &&
      (level === undefined || d.level === level) &&
      (attempt === undefined || d.attempt === attempt),
  );
const untilSent = (fakes: Fakes, event: string, level?: number, attempt?: number) =>
  until(() => sent(fakes, event, level, attempt).length > 0, `${event} L${level}.${attempt}`);
const escalationState = async (ladder: WorkflowHandle) =>
  (await ladder.describe()).typedSearchAttributes.get(ESCALATION_STATE);
const untilLevel = (ladder: WorkflowHandle, level: number, attempt: number, state = `L${level}`) =>
  until(async () => {
    const s = await ladder.query(ladderStateQuery);
    return s.level === level && s.attempt === attempt && s.state === state;
  }, `L${level}.${attempt} (${state})`);

describe('the escalation ladder', () => {
  it('notifies L1 at once with the endpoints the triage read, L2 after its escalateAfter, L3 after L2’s, repeats L3 and is then exhausted', async () => {
    const fakes = createFakes();
    await withLadder(fakes, { level1: [slack, pagerDuty] }, async (ladder) => {
      await untilSent(fakes, 'incident.escalated', 1, 1);
      await until(() => sent(fakes, 'incident.escalated', 1, 1).length === 2, 'L1 to both endpoints');
      // One lane per endpoint: side by side, in no set order.
      expect(sent(fakes, 'incident.escalated', 1, 1)).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            endpoint: slack,
            scope: 'L1.1',
            message: 'No automatic remediation strategy is available',
          }),
          expect.objectContaining({ endpoint: pagerDuty, scope: 'L1.1' }),
        ]),
      );
      // L1's endpoints came with the input: not read again; no maintenance window was asked for L1.
      expect(fakes.levelEndpoints).not.toHaveBeenCalled();
      expect(fakes.maintenanceWindow).not.toHaveBeenCalled();
      await untilLevel(ladder, 1, 1);
      expect(await escalationState(ladder)).toBe('L1');

      await flow.env.sleep(4 * MINUTE);
      await untilLevel(ladder, 1, 1);
      expect(sent(fakes, 'incident.escalated', 2)).toEqual([]);

      await flow.env.sleep(1 * MINUTE + 1_000);
      await untilSent(fakes, 'incident.escalated', 2, 1);
      expect(inputs(fakes.levelEndpoints)).toEqual([
        expect.objectContaining({
          incident: ladder.workflowId.replace('-escalation', ''),
          policy: 'critical',
          level: 1,
          why: 'L2',
        }),
      ]);
      expect(fakes.maintenanceWindow).toHaveBeenCalledWith({ namespace: 'shop' });
      await untilLevel(ladder, 2, 1);
      expect(await escalationState(ladder)).toBe('L2');

      await flow.env.sleep(10 * MINUTE + 1_000);
      await untilSent(fakes, 'incident.escalated', 3, 1);
      expect(sent(fakes, 'incident.escalated', 3, 1)[0]).toMatchObject({ scope: 'L3.1' });

      // The last level again every 30m, `times` (2) more times.
      await flow.env.sleep(30 * MINUTE + 1_000);
      await untilSent(fakes, 'incident.escalated', 3, 2);
      await flow.env.sleep(30 * MINUTE + 1_000);
      await untilSent(fakes, 'incident.escalated', 3, 3);
      await untilLevel(ladder, 3, 3, 'exhausted');
      expect(await escalationState(ladder)).toBe('exhausted');
      await flow.env.sleep(2 * 60 * MINUTE);
      expect(sent(fakes, 'incident.escalated', 3, 4)).toEqual([]);
      expect(sent(fakes, 'incident.escalated')).toHaveLength(2 * 5);
    });
  });

  it('reads L1’s endpoints itself when the triage did not; resolve tells the stateful channels and ends the ladder', async () => {
    const fakes = createFakes();
    await withLadder(fakes, {}, async (ladder) => {
      await untilSent(fakes, 'incident.escalated', 1, 1);
      expect(fakes.maintenanceWindow).toHaveBeenCalledWith({ namespace: 'shop' });
      expect(inputs(fakes.levelEndpoints)).toEqual([
        expect.objectContaining({ policy: 'critical', level: 0, why: 'L1' }),
      ]);

      await ladder.signal(ladderResolvedSignal);
      await ladder.result();
      // PagerDuty tracks the incident's state: it hears the resolve; Slack does not.
      expect(sent(fakes, 'incident.resolved')).toEqual([
        expect.objectContaining({ endpoint: pagerDuty, level: 0, scope: 'incident.resolved' }),
      ]);
      expect(await escalationState(ladder)).toBe('resolved');
      expect(sent(fakes, 'incident.escalated', 2)).toEqual([]);
    });
  });

  it('stops climbing when acknowledged (the stateful channels hear it once), and ends at the resolve', async () => {
    const fakes = createFakes();
    await withLadder(fakes, { level1: [slack, pagerDuty] }, async (ladder) => {
      await untilSent(fakes, 'incident.escalated', 1, 1);
      await flow.env.sleep(2 * MINUTE);
      await ladder.signal(ladderAcknowledgedSignal, { by: 'alice', at: new Date().toISOString() });
      await untilSent(fakes, 'incident.acknowledged');
      expect(sent(fakes, 'incident.acknowledged')).toEqual([expect.objectContaining({ endpoint: pagerDuty })]);
      await untilLevel(ladder, 1, 1, 'acknowledged');
      expect(await escalationState(ladder)).toBe('acknowledged');

      await flow.env.sleep(60 * MINUTE);
      await untilLevel(ladder, 1, 1, 'acknowledged');
      expect(sent(fakes, 'incident.escalated', 2)).toEqual([]);

      await ladder.signal(ladderResolvedSignal);
      await ladder.result();
      expect(sent(fakes, 'incident.resolved')).toEqual([expect.objectContaining({ endpoint: pagerDuty })]);
      expect(sent(fakes, 'incident.acknowledged')).toHaveLength(1);
    });
  });

  it('notifies L1 of an incident acknowledged before it escalated (automation gave up: news), then climbs no further', async () => {
    const fakes = createFakes();
    await withLadder(fakes, { acknowledged: true, level1: [pagerDuty] }, async (ladder) => {
      await untilSent(fakes, 'incident.escalated', 1, 1);
      await untilSent(fakes, 'incident.acknowledged');
      await untilLevel(ladder, 1, 1, 'acknowledged');
      await flow.env.sleep(30 * MINUTE);
      expect(sent(fakes, 'incident.escalated', 2)).toEqual([]);
    });
  });

  it('freezes its clock while snoozed and goes on where it was when the snooze ends', async () => {
    const fakes = createFakes();
    await withLadder(fakes, { level1: [slack] }, async (ladder) => {
      await untilSent(fakes, 'incident.escalated', 1, 1);
      await untilLevel(ladder, 1, 1);
      await flow.env.sleep(2 * MINUTE); // 3 of L1's 5 minutes left
      const until20 = new Date((await flow.env.currentTimeMs()) + 20 * MINUTE).toISOString();
      await ladder.signal(ladderSnoozedSignal, { until: until20 });
      await untilLevel(ladder, 1, 1, 'snoozed');
      expect(await escalationState(ladder)).toBe('snoozed');

      // Past L1's 5 minutes, still snoozed: nothing goes out.
      await flow.env.sleep(19 * MINUTE);
      await untilLevel(ladder, 1, 1, 'snoozed');
      expect(sent(fakes, 'incident.escalated', 2)).toEqual([]);

      // The snooze ended a minute ago: 2 of the 3 minutes left remain.
      await flow.env.sleep(2 * MINUTE);
      await untilLevel(ladder, 1, 1);
      expect(sent(fakes, 'incident.escalated', 2)).toEqual([]);
      await flow.env.sleep(2 * MINUTE + 1_000);
      await untilSent(fakes, 'incident.escalated', 2, 1);
    });
  });

  it('holds the next level during a maintenance window of the namespace (said once on the timeline) and notifies it when the window ends', async () => {
    const fakes = createFakes();
    let windowEnds = Number.POSITIVE_INFINITY;
    fakes.maintenanceWindow.mockImplementation(async () => {
      return Context.current().info.currentAttemptScheduledTimestampMs < windowEnds
        ? { name: 'db-upgrade', until: new Date(windowEnds).toISOString(), reason: 'planned' }
        : undefined;
    });
    await withLadder(fakes, { level1: [slack] }, async (ladder) => {
      await untilSent(fakes, 'incident.escalated', 1, 1);
      windowEnds = (await flow.env.currentTimeMs()) + 17 * MINUTE;

      await flow.env.sleep(5 * MINUTE + 1_000);
      await untilLevel(ladder, 2, 1, 'held');
      expect(await escalationState(ladder)).toBe('held');
      expect(inputs(fakes.noteLadder)).toEqual([
        expect.objectContaining({
          message: expect.stringMatching(
            /^Escalation held: maintenance window db-upgrade covers namespace shop until .* \(planned\); L2 is notified when it ends$/,
          ),
        }),
      ]);
      expect(sent(fakes, 'incident.escalated', 2)).toEqual([]);

      // Rechecked every 5 minutes: still held, not said again.
      await flow.env.sleep(10 * MINUTE);
      await untilLevel(ladder, 2, 1, 'held');
      expect(fakes.noteLadder).toHaveBeenCalledTimes(1);
      expect(sent(fakes, 'incident.escalated', 2)).toEqual([]);

      await flow.env.sleep(3 * MINUTE);
      await untilSent(fakes, 'incident.escalated', 2, 1);
      expect(inputs(fakes.noteLadder)[1]).toEqual(
        expect.objectContaining({ message: 'Maintenance over: the escalation goes on with L2' }),
      );
    });
  });

  it('goes on from what a continued run carried: its level, the clock left and the stateful channels notified', async () => {
    const fakes = createFakes();
    const carried = { level: 1, attempt: 1, remainingMs: 2 * MINUTE, notified: [pagerDuty], acknowledgeSent: false };
    await withLadder(fakes, { carried }, async (ladder) => {
      await untilLevel(ladder, 2, 1);
      // No L1 again: the earlier run notified it.
      expect(sent(fakes, 'incident.escalated')).toEqual([]);
      await flow.env.sleep(2 * MINUTE + 1_000);
      await untilSent(fakes, 'incident.escalated', 3, 1);
      expect(inputs(fakes.levelEndpoints)).toEqual([expect.objectContaining({ level: 2, why: 'L3' })]);

      await ladder.signal(ladderResolvedSignal);
      await ladder.result();
      expect(sent(fakes, 'incident.resolved')).toEqual([expect.objectContaining({ endpoint: pagerDuty })]);
    });
  });

  it('mirrors an acknowledge only once across continue-as-new', async () => {
    const fakes = createFakes();
    const carried = { level: 0, attempt: 1, notified: [pagerDuty], acknowledgeSent: true };
    await withLadder(fakes, { carried, acknowledged: true }, async (ladder) => {
      await untilLevel(ladder, 1, 1, 'acknowledged');
      await ladder.signal(ladderResolvedSignal);
      await ladder.result();
      expect(sent(fakes, 'incident.acknowledged')).toEqual([]);
      expect(sent(fakes, 'incident.resolved')).toHaveLength(1);
    });
  });
});
