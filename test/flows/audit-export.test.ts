import { ApplicationFailure } from '@temporalio/common';
import type { auditExportWorkflow } from '../../workflows/audit-export';
import { useFlowEnv } from '../harness/flow-env';
import { asActivities, createFakes, inputs, MINUTE, until } from './fakes';

/**
 * An audit export (workflows/audit-export.ts) with fake activities: the file written (or the job
 * failed with the reason), then kept for its ttl from the workflow's start on a durable timer,
 * then expired.
 */

let flow: Awaited<ReturnType<typeof useFlowEnv>>;
beforeAll(async () => {
  flow = await useFlowEnv();
}, 120_000);
afterAll(() => flow?.stop());

const TTL = 24 * 60 * MINUTE;
let jobs = 0;

describe('an audit export', () => {
  it('writes the file, keeps it for its ttl, then expires it', async () => {
    const fakes = createFakes();
    const jobId = `AEX-${++jobs}`;
    await flow.run(asActivities(fakes), async (taskQueue) => {
      const job = await flow.client.workflow.start<typeof auditExportWorkflow>('auditExportWorkflow', {
        taskQueue,
        workflowId: jobId,
        args: [{ jobId, ttlMs: TTL }],
      });
      await until(() => fakes.writeAuditExport.mock.calls.length > 0, 'the write');
      const started = await flow.env.currentTimeMs();
      await flow.env.sleep(TTL - 60 * MINUTE);
      expect(fakes.expireAuditExport).not.toHaveBeenCalled();
      await job.result();
      expect(inputs(fakes.writeAuditExport)).toEqual([{ jobId }]);
      expect(inputs(fakes.expireAuditExport)).toEqual([{ jobId }]);
      expect(fakes.failAuditExport).not.toHaveBeenCalled();
      expect(await flow.env.currentTimeMs()).toBeGreaterThanOrEqual(started + TTL - 60 * MINUTE);
    });
  });

  it('records why the write failed, and still expires the job after its ttl', async () => {
    const fakes = createFakes();
    fakes.writeAuditExport.mockRejectedValue(
      ApplicationFailure.nonRetryable('the filter matches 3000000 records, above the 1000000 limit', 'TooLarge'),
    );
    const jobId = `AEX-${++jobs}`;
    await flow.run(asActivities(fakes), (taskQueue) =>
      flow.client.workflow.execute<typeof auditExportWorkflow>('auditExportWorkflow', {
        taskQueue,
        workflowId: jobId,
        args: [{ jobId, ttlMs: TTL }],
      }),
    );
    expect(fakes.writeAuditExport).toHaveBeenCalledTimes(1);
    expect(inputs(fakes.failAuditExport)).toEqual([
      { jobId, reason: 'the filter matches 3000000 records, above the 1000000 limit' },
    ]);
    expect(inputs(fakes.expireAuditExport)).toEqual([{ jobId }]);
  });
});
