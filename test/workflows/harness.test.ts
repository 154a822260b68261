import { AuditRecordModel } from '../../store/models';
import { useWorkflowEnv } from '../harness/temporal';

describe('workflow harness', () => {
  let h: Awaited<ReturnType<typeof useWorkflowEnv>>;
  beforeAll(async () => {
    h = await useWorkflowEnv({ workflowsPath: require.resolve('../fixtures/harness-workflows') });
  });
  afterAll(() => h?.stop());

  it('skips a one-day timer and the activity write lands in MongoDB', async () => {
    const started = Date.now();
    const id = await h.worker.runUntil(
      h.client.workflow.execute('sleepThenAudit', {
        args: ['harness-check'],
        taskQueue: h.taskQueue,
        workflowId: 'harness-1',
      }),
    );
    expect(Date.now() - started).toBeLessThan(60_000); // a real day would never fit in the test timeout
    expect(id).toMatch(/^audit-\d{8}-\d{3,}$/);
    const stored = await AuditRecordModel.findOne({ id }).lean();
    expect(stored).toMatchObject({
      action: 'config.update',
      user: 'system',
      role: 'system',
      resource: 'harness-check',
      sourceIP: 'internal',
    });
    expect(stored!.checksum).toMatch(/^hmac-sha256:[0-9a-f]{64}$/); // keyed chain (docs/audit.md)
  });
});
