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

  // The test server refuses keepalive pings more often than one in 5 minutes and closes the
  // connection on the third; the SDK then retries the sleep from its start (see withoutKeepalive).
  it('holds a sleep that waits past the server ping limit in real time to exactly its duration', async () => {
    const SLEEP = 100_000; // three of the SDK's 30-s pings fit in it
    const testService = h.env.connection.testService!;
    await testService.lockTimeSkipping({}); // time runs at wall speed: nothing to skip to
    const before = await h.env.currentTimeMs();
    try {
      await h.env.sleep(SLEEP);
    } finally {
      await testService.unlockTimeSkipping({});
    }
    const slept = (await h.env.currentTimeMs()) - before;
    expect(slept).toBeGreaterThanOrEqual(SLEEP);
    expect(slept).toBeLessThan(SLEEP + 30_000); // a retried sleep would have started over
    // The locks are balanced again: an idle hour is skipped at once.
    const idle = Date.now();
    await h.env.sleep(3_600_000);
    expect(Date.now() - idle).toBeLessThan(30_000);
  }, 240_000);
});
