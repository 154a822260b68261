import { Context } from '@temporalio/activity';
import type { TargetHealth } from '../domain/kube-health';
import type { VerifyTargetInput } from '../contracts/kube-actions';
import { createKubeVerifyActivities } from './kube-verify';

const POLL_MS = 2_000;

/**
 * Waits, in real time, for a Deployment to be healthy again after a fix (domain/kube-health.ts):
 * polls every 2 s for up to `timeoutMs` and answers the first healthy verdict, the first final
 * one (the rollout exceeded its progress deadline: waiting will not help), or the last one seen.
 * The input's `signature` (optional) is the original failure's, checked on every poll.
 * Heartbeats each poll, so a dead worker is noticed and a cancelled wait (a new signal failed
 * the verification first) ends at once.
 */
export function createRemediationVerifyActivities() {
  const { kubeVerifyTarget } = createKubeVerifyActivities();
  return {
    async awaitTargetHealthy(input: VerifyTargetInput & { timeoutMs: number }): Promise<TargetHealth> {
      const { timeoutMs, ...target } = input;
      const ctx = Context.current();
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        ctx.heartbeat();
        const health = await kubeVerifyTarget(target);
        if (health.healthy || health.final || Date.now() + POLL_MS > deadline) return health;
        await ctx.sleep(POLL_MS); // rejects when the activity is cancelled
      }
    },
  };
}

export type RemediationVerifyActivities = ReturnType<typeof createRemediationVerifyActivities>;
