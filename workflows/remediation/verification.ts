import { CancellationScope, condition, patched, sleep } from '@temporalio/workflow';
import { formatDuration } from '../../domain/duration';
import type { TargetHealth } from '../../domain/kube-health';
import type { Verdict } from '../../domain/remediation-plan';
import { VERIFY_BY_HEALTH } from '../patches';
import { health } from './proxies';
import type { PlanExecution } from './state';

/**
 * Passes when the target is healthy again and stays so for the runbook's window. A Deployment
 * the plan changed is judged by `kubectl rollout status` rules on the pods of its current
 * template and by the failure's signature being gone (domain/kube-health.ts): signals that join
 * meanwhile come from pods being replaced and do not decide. The health wait runs in real time
 * (an activity); the rest of the window is a durable timer, then the health is checked once
 * more (a relapse fails). A target in no registered cluster, or one the plan did not change, is
 * judged by the signals alone.
 */
export async function verifyFix(execution: PlanExecution): Promise<Verdict> {
  const { plan, inbox, executed } = execution;
  const windowMs = plan.verifyWindowMs;
  const window = formatDuration(windowMs);
  const before = inbox.joined;
  const newSignal = () => inbox.joined > before;
  const signalText = `no new firing signal joined ${plan.incident} during the ${window} window`;
  if (!(plan.resource.kind === 'Deployment' && executed.length > 0)) {
    const failed = await condition(newSignal, windowMs);
    return {
      passed: !failed,
      checked: [signalText],
      seen: [failed ? 'a new firing signal joined the incident' : 'no new signal'],
      summary: failed
        ? `a new firing signal joined the incident within ${window}`
        : `no new firing signal within ${window} (the resource is in no registered cluster or was not changed: only signals were checked)`,
    };
  }
  if (patched(VERIFY_BY_HEALTH)) return verifyByHealth(execution);
  return verifyByHealthAndSignals(execution);
}

/** The Deployment's health decides: healthy within the window, still healthy at its end. */
async function verifyByHealth(execution: PlanExecution): Promise<Verdict> {
  const { plan } = execution;
  const windowMs = plan.verifyWindowMs;
  const window = formatDuration(windowMs);
  const target = {
    cluster: plan.cluster,
    namespace: plan.namespace,
    deployment: plan.resource.name,
    since: execution.fixedAt,
    ...(plan.signature && { signature: plan.signature }),
  };
  const started = Date.now();
  const first = await health.awaitTargetHealthy({ ...target, timeoutMs: windowMs });
  if (!first.healthy) return verdict(first, first.summary);
  const rest = windowMs - (Date.now() - started);
  if (rest > 0) await sleep(rest);
  const last = await health.awaitTargetHealthy({ ...target, timeoutMs: 0 });
  return verdict(
    last,
    last.healthy ? `${last.summary}; stayed healthy for the ${window} window` : `relapsed: ${last.summary}`,
  );
}

const verdict = (h: TargetHealth, summary: string): Verdict => ({
  passed: h.healthy,
  checked: h.checked,
  seen: h.seen,
  summary,
});

/** Runs started before VERIFY_BY_HEALTH: a new firing signal failed the verification at once. */
async function verifyByHealthAndSignals(execution: PlanExecution): Promise<Verdict> {
  const { plan, inbox } = execution;
  const windowMs = plan.verifyWindowMs;
  const window = formatDuration(windowMs);
  const before = inbox.joined;
  const newSignal = () => inbox.joined > before;
  const started = Date.now();
  const signalText = `no new firing signal joined ${plan.incident} during the ${window} window`;
  const target = {
    cluster: plan.cluster,
    namespace: plan.namespace,
    deployment: plan.resource.name,
    since: execution.fixedAt,
  };
  const scope = new CancellationScope();
  const healthy = scope.run(() => health.awaitTargetHealthy({ ...target, timeoutMs: windowMs }));
  const first = await Promise.race([healthy, condition(newSignal).then(() => null)]);
  if (first === null) {
    scope.cancel();
    await healthy.catch(() => undefined);
    return {
      passed: false,
      checked: [signalText],
      seen: ['a new firing signal joined the incident'],
      summary: `a new firing signal joined the incident before deployment ${plan.namespace}/${plan.resource.name} was healthy`,
    };
  }
  if (!first.healthy)
    return { passed: false, checked: [...first.checked, signalText], seen: first.seen, summary: first.summary };
  const rest = windowMs - (Date.now() - started);
  if (rest > 0 && (await condition(newSignal, rest)))
    return {
      passed: false,
      checked: [...first.checked, signalText],
      seen: [...first.seen, 'a new firing signal joined the incident'],
      summary: `healthy at first, but a new firing signal joined the incident within ${window}`,
    };
  const last = await health.awaitTargetHealthy({ ...target, timeoutMs: 0 });
  return {
    passed: last.healthy,
    checked: [...last.checked, signalText],
    seen: [...last.seen, 'no new signal'],
    summary: last.healthy ? `${last.summary}; no new firing signal within ${window}` : `relapsed: ${last.summary}`,
  };
}
