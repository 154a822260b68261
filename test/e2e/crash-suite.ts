import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import path from 'path';
import { NOTHING_LOST, runChaos, type ChaosTarget } from '../harness/chaos';
import { killAll, survivors } from '../harness/processes';

/**
 * Nothing accepted is lost (issue 8): alerts from 4 senders and chat messages in 2 chats stream
 * in while a part of the stack is killed with -9 three times at random moments, and the incidents
 * run remediation plans. Afterwards every acknowledged alert is on its incident's timeline exactly
 * once, no incident name stands for two resources, every incident settled with the API,
 * Temporal's search attribute and the workflow agreeing and a complete timeline, every plan
 * ended (an operator approves those the runbook's circuit breaker holds), no step ran under two
 * idempotency keys, the workflow's remediation state is that of its newest plan that ran, and
 * every accepted chat message got exactly one final reply.
 * bench/chaos.ts runs the same with more kills and prints the counts. The targets are split over
 * two test files so Jest's two workers share the load. Every target runs plans, since kills among
 * plans are what can leave a history that no longer replays; a workflow whose task keeps failing
 * is counted here (Temporal reports it: docs/reliability.md §4).
 */
export function crashSuite(title: string, targets: [ChaosTarget, string][]): void {
  describe(title, () => {
    afterAll(async () => {
      await killAll();
      expect(await survivors()).toEqual([]);
    });

    it.each(targets)(
      '%s: loses nothing when %s is killed',
      async (target) => {
        const dataDir = mkdtempSync(path.join(tmpdir(), `foghorn-crash-${target}-`));
        try {
          const report = await runChaos({
            target,
            dataDir,
            kills: 3,
            settleMs: 150_000,
            log: (l) => console.log(`${target}: ${l}`),
          });
          expect(report.problems).toEqual([]);
          expect(report).toMatchObject({ kills: 3, ...NOTHING_LOST });
          // The run did something worth checking.
          expect(report.alertsAcknowledged).toBeGreaterThan(10);
          expect(report.incidents).toBeGreaterThan(1);
          expect(report.plans).toBeGreaterThan(1);
          expect(report.chatMessagesAccepted).toBeGreaterThan(2);
        } finally {
          rmSync(dataDir, { recursive: true, force: true });
        }
      },
      480_000,
    );
  });
}
