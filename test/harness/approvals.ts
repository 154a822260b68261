import type { Client } from '@temporalio/client';

/**
 * Resolves once approval `name`'s workflow waits for a decision: its expiry timer has started
 * and no activity is in flight. Before that, a decision can meet no workflow yet (503), and a
 * cancellation can meet a scheduled activity, which the time-skipping test server cannot cancel
 * (ACTIVITY_UNKNOWN, temporalio/sdk-typescript#1058: the workflow would hang). A real server
 * has neither problem; tests wait so they test the product, not the test server.
 */
export async function approvalAwaitingDecision(client: Client, name: string, timeoutMs = 60_000): Promise<void> {
  const handle = client.workflow.getHandle(name);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const [history, described] = await Promise.all([handle.fetchHistory(), handle.describe()]);
      const timer = history.events?.some((e) => e.timerStartedEventAttributes) ?? false;
      if (timer && (described.raw.pendingActivities?.length ?? 0) === 0) return;
    } catch {
      // not started yet
    }
    if (Date.now() > deadline) throw new Error(`approval ${name} is not waiting for a decision after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
