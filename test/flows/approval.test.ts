import type { WorkflowHandle } from '@temporalio/client';
import type { ApprovalDecisionRequest, ApprovalWorkflowInput } from '../../domain/approval-requests';
import type { Actor } from '../../domain/incident-requests';
import type { approvalWorkflow } from '../../workflows/approval';
import { approvalStatusQuery, decideApprovalUpdate } from '../../workflows/approval-messages';
import { APPROVAL_STATUS } from '../../workflows/search-attributes';
import { useFlowEnv } from '../harness/flow-env';
import {
  asActivities,
  createFakes,
  gate,
  inputs,
  MINUTE,
  pagerDuty,
  person,
  slack,
  until,
  untilIdle,
  terminateWhenIdle,
  type Fakes,
} from './fakes';

/**
 * The approval workflow (workflows/approval.ts) with fake activities: announced to the policy's
 * first level, then approved, rejected, expired on its timer or cancelled; the `decide` update's
 * validator answers 403 (role too low) and 409 (already decided) without a write.
 */

let flow: Awaited<ReturnType<typeof useFlowEnv>>;
beforeAll(async () => {
  flow = await useFlowEnv();
}, 120_000);
afterAll(() => flow?.stop());

const TTL = 30 * MINUTE;
let approvals = 0;

const decide = (
  approval: WorkflowHandle,
  decision: ApprovalDecisionRequest['decision'],
  by: Actor,
  comment?: string,
): Promise<void> =>
  approval.executeUpdate(decideApprovalUpdate, { args: [{ decision, actor: by, ...(comment && { comment }) }] });
const status = async (approval: WorkflowHandle) =>
  (await approval.describe()).typedSearchAttributes.get(APPROVAL_STATUS);

/** Starts an approval (expiring TTL from now on the server's clock) and runs `test` while a worker runs. */
async function withApproval(
  fakes: Fakes,
  input: Partial<ApprovalWorkflowInput>,
  test: (approval: WorkflowHandle<typeof approvalWorkflow>, name: string) => Promise<void>,
): Promise<void> {
  const { worker, taskQueue } = await flow.worker(asActivities(fakes));
  const name = `APR-T${++approvals}`;
  await worker.runUntil(async () => {
    const expiresAt = new Date((await flow.env.currentTimeMs()) + TTL).toISOString();
    const approval = await flow.client.workflow.start<typeof approvalWorkflow>('approvalWorkflow', {
      taskQueue,
      workflowId: name,
      args: [
        {
          name,
          incident: 'INC-7',
          namespace: 'shop',
          plan: 'RP-7',
          requiredRole: 'operator',
          ttlMs: TTL,
          expiresAt,
          ...input,
        },
      ],
    });
    try {
      // Announced before anything else: on the timeline, then to the policy's first level.
      await until(() => fakes.deliverNotification.mock.calls.length === 2, 'the approval’s announcement');
      await test(approval, name);
    } finally {
      await terminateWhenIdle([approval]);
    }
  });
}

const closed = (fakes: Fakes) => inputs(fakes.deliverNotification).filter((d) => d.event === 'approval.closed');

describe('an approval', () => {
  it('is announced to the policy’s first level, approved by an operator, recorded before the update returns; PagerDuty hears it closed', async () => {
    const fakes = createFakes();
    await withApproval(fakes, {}, async (approval, name) => {
      expect(fakes.announceApproval).toHaveBeenCalledWith({ name });
      expect(fakes.approvalNotice).toHaveBeenCalledWith({ name });
      expect(inputs(fakes.levelEndpoints)).toEqual([{ incident: 'INC-7', level: 0, why: `approval ${name}` }]);
      expect(inputs(fakes.deliverNotification)).toHaveLength(2);
      expect(inputs(fakes.deliverNotification)).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            endpoint: slack,
            event: 'approval.requested',
            level: 1,
            scope: name,
            approval: name,
          }),
          expect.objectContaining({
            endpoint: pagerDuty,
            event: 'approval.requested',
            message: expect.stringContaining(name),
          }),
        ]),
      );
      expect(await approval.query(approvalStatusQuery)).toBe('pending');
      expect(await status(approval)).toBe('pending');

      await decide(approval, 'approve', person('olivia', 'operator'), 'go ahead');
      // The update's handler wrote the decision before it answered.
      expect(inputs(fakes.recordApprovalDecision)).toEqual([
        expect.objectContaining({ name, status: 'approved', actor: person('olivia', 'operator'), comment: 'go ahead' }),
      ]);
      expect(await approval.result()).toEqual({ status: 'approved', decidedBy: 'olivia', comment: 'go ahead' });
      expect(await status(approval)).toBe('approved');
      expect(closed(fakes)).toEqual([expect.objectContaining({ endpoint: pagerDuty, scope: name, approval: name })]);
      expect(fakes.expireApproval).not.toHaveBeenCalled();
    });
  });

  it('is rejected', async () => {
    const fakes = createFakes();
    await withApproval(fakes, {}, async (approval, name) => {
      await decide(approval, 'reject', person('olivia', 'admin'), 'not during the sale');
      expect(await approval.result()).toEqual({
        status: 'rejected',
        decidedBy: 'olivia',
        comment: 'not during the sale',
      });
      expect(inputs(fakes.recordApprovalDecision)).toEqual([expect.objectContaining({ name, status: 'rejected' })]);
      expect(await status(approval)).toBe('rejected');
      expect(await approval.query(approvalStatusQuery)).toBe('rejected');
    });
  });

  it('expires at its expiresAt when nobody decides, and says why', async () => {
    const fakes = createFakes();
    await withApproval(fakes, {}, async (approval, name) => {
      const started = await flow.env.currentTimeMs();
      await flow.env.sleep(TTL - 2 * MINUTE);
      expect(await approval.query(approvalStatusQuery)).toBe('pending');
      expect(fakes.expireApproval).not.toHaveBeenCalled();

      expect(await approval.result()).toEqual({ status: 'expired', reason: 'no decision within 30m0s' });
      expect(inputs(fakes.expireApproval)).toEqual([
        expect.objectContaining({ name, reason: 'no decision within 30m0s' }),
      ]);
      // On the server's clock: not before its time.
      expect(Date.parse(inputs(fakes.expireApproval)[0].at)).toBeGreaterThanOrEqual(started + TTL - 2 * MINUTE);
      expect(await status(approval)).toBe('expired');
      expect(closed(fakes)).toHaveLength(1);
      expect(fakes.recordApprovalDecision).not.toHaveBeenCalled();
    });
  });

  it('answers 403 to a role below the one required, without a write, and takes a high enough role’s decision', async () => {
    const fakes = createFakes();
    await withApproval(fakes, { requiredRole: 'admin' }, async (approval, name) => {
      for (const who of [person('vic', 'viewer'), person('otto', 'operator')])
        await expect(decide(approval, 'approve', who)).rejects.toMatchObject({
          cause: {
            type: 'Forbidden',
            message: 'Forbidden',
            details: [`approval ${name} needs the admin role; ${who.user} is ${who.role}`],
          },
        });
      expect(fakes.recordApprovalDecision).not.toHaveBeenCalled();
      expect(await approval.query(approvalStatusQuery)).toBe('pending');

      await decide(approval, 'approve', person('ada', 'admin'));
      expect(await approval.result()).toMatchObject({ status: 'approved', decidedBy: 'ada' });
    });
  });

  it('answers 409 to a second decision, naming the first', async () => {
    const fakes = createFakes();
    // PagerDuty's closing alert is held: the workflow is still running when the second decision comes.
    const closing = gate();
    fakes.deliverNotification.mockImplementation(async (d) => {
      if (d.event === 'approval.closed') await closing.wait();
      return 'delivered';
    });
    await withApproval(fakes, {}, async (approval) => {
      await decide(approval, 'approve', person('olivia', 'operator'));
      await until(() => closed(fakes).length > 0, 'the closing alert');
      await expect(decide(approval, 'reject', person('bob', 'admin'))).rejects.toMatchObject({
        cause: {
          type: 'Conflict',
          message: 'Approval already decided',
          details: [expect.stringMatching(/^approved by olivia at /)],
        },
      });
      expect(fakes.recordApprovalDecision).toHaveBeenCalledTimes(1);
      closing.open();
      expect(await approval.result()).toMatchObject({ status: 'approved', decidedBy: 'olivia' });
    });
  });

  it('ends expired with the reason "incident resolved" when cancelled (its incident was resolved)', async () => {
    const fakes = createFakes();
    await withApproval(fakes, {}, async (approval, name) => {
      await untilIdle(approval);
      await approval.cancel();
      expect(await approval.result()).toEqual({ status: 'expired', reason: 'incident resolved' });
      expect(inputs(fakes.expireApproval)).toEqual([expect.objectContaining({ name, reason: 'incident resolved' })]);
      expect(await status(approval)).toBe('expired');
    });
  });
});
