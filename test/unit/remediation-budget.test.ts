import {
  describeIssues,
  escalationFileSchema,
  escalationPolicySchema,
  type EscalationPolicyInput,
} from '../../contracts/escalation';
import {
  budgetRanOutReason,
  DEFAULT_REMEDIATION_BUDGET,
  remediationBudgetMs,
  unpagedIncidents,
  type EscalationPolicy,
} from '../../domain/escalation-policy';
import { boundedByBudget, HTTP_STEP_ACTIVITY_OPTIONS } from '../../domain/remediation-steps';
import { KUBE_ACTION_ACTIVITY_OPTIONS } from '../../domain/kube-actions';

/** The remediation budget's pure parts (docs/escalation.md, "The remediation budget"). */

const MINUTE = 60_000;
const policy = (p: EscalationPolicyInput): EscalationPolicy => escalationPolicySchema.parse(p);
const slack = { channel: 'slack' as const, url: 'https://hooks.slack.com/services/T0/B0/X' };

describe('the budget of an incident', () => {
  it('defaults to critical 10m, high 20m, medium and low 60m; a policy overrides a severity it names', () => {
    expect(DEFAULT_REMEDIATION_BUDGET).toEqual({ critical: '10m', high: '20m', medium: '60m', low: '60m' });
    const none = policy({ name: 'p', levels: [{ targets: [slack] }] });
    expect(['critical', 'high', 'medium', 'low'].map((s) => remediationBudgetMs(none, s as never))).toEqual([
      10 * MINUTE,
      20 * MINUTE,
      60 * MINUTE,
      60 * MINUTE,
    ]);
    const short = policy({ name: 'p', levels: [{ targets: [slack] }], remediationBudget: { high: '5m', low: '2h' } });
    expect(remediationBudgetMs(short, 'high')).toBe(5 * MINUTE);
    expect(remediationBudgetMs(short, 'low')).toBe(120 * MINUTE);
    expect(remediationBudgetMs(short, 'critical')).toBe(10 * MINUTE);
  });

  it("is validated by the policy's contract, in the API and in the escalation file, naming the field", () => {
    const bad = escalationPolicySchema.safeParse({
      name: 'p',
      levels: [],
      remediationBudget: { critical: '30s', high: 'soon', medium: '25h', urgent: '5m' },
    });
    expect(bad.success).toBe(false);
    expect(describeIssues(bad.error!).sort()).toEqual([
      'remediationBudget.critical: must be between 1m and 24h',
      expect.stringMatching(/^remediationBudget.high: must be a Go duration/),
      'remediationBudget.medium: must be between 1m and 24h',
      "remediationBudget: Unrecognized key(s) in object: 'urgent'",
    ]);
    const ranges = escalationPolicySchema.safeParse({
      name: 'p',
      levels: [],
      remediationBudget: { critical: '30s', medium: '25h' },
    });
    expect(describeIssues(ranges.error!).sort()).toEqual([
      'remediationBudget.critical: must be between 1m and 24h',
      'remediationBudget.medium: must be between 1m and 24h',
    ]);
    const file = escalationFileSchema.parse({
      policies: [{ name: 'p', levels: [{ targets: [slack] }], remediationBudget: { critical: '5m' } }],
    });
    expect(file.policies[0].remediationBudget).toEqual({ critical: '5m' });
  });

  it('says where automation stood when it ran out', () => {
    const at = { budgetMs: 10 * MINUTE, attempt: 1, maxAttempts: 3 };
    expect(budgetRanOutReason({ ...at, plan: { name: 'RP-20261207-001', waiting: false } })).toBe(
      'remediation budget of 10m0s ran out while plan RP-20261207-001 runs (attempt 1 of 3); automation continues',
    );
    expect(budgetRanOutReason({ ...at, plan: { name: 'RP-20261207-001', waiting: true } })).toBe(
      'remediation budget of 10m0s ran out while plan RP-20261207-001 waits for its approval (attempt 1 of 3); automation continues',
    );
    expect(budgetRanOutReason({ ...at, attempt: 2 })).toBe(
      'remediation budget of 10m0s ran out while attempt 2 of 3 is prepared; automation continues',
    );
  });
});

describe('a step within the budget', () => {
  const endsAt = (fromNowMs: number, now: number) => new Date(now + fromNowMs).toISOString();
  const now = Date.parse('2026-12-07T10:00:00Z');

  it('keeps its own options without a budget, or when they end first', () => {
    expect(boundedByBudget(HTTP_STEP_ACTIVITY_OPTIONS, undefined, now)).toBe(HTTP_STEP_ACTIVITY_OPTIONS);
    expect(boundedByBudget(HTTP_STEP_ACTIVITY_OPTIONS, endsAt(20 * MINUTE, now), now)).toBe(HTTP_STEP_ACTIVITY_OPTIONS);
  });

  it('is given at most the budget left, never less than a minute, each attempt at most as long', () => {
    expect(boundedByBudget(HTTP_STEP_ACTIVITY_OPTIONS, endsAt(10 * MINUTE, now), now)).toEqual({
      ...HTTP_STEP_ACTIVITY_OPTIONS,
      scheduleToCloseTimeout: '600000ms',
    });
    expect(boundedByBudget(HTTP_STEP_ACTIVITY_OPTIONS, endsAt(3 * MINUTE, now), now)).toEqual({
      ...HTTP_STEP_ACTIVITY_OPTIONS,
      scheduleToCloseTimeout: '180000ms',
      startToCloseTimeout: '180000ms',
    });
    for (const left of [30_000, 0, -5 * MINUTE])
      expect(boundedByBudget(KUBE_ACTION_ACTIVITY_OPTIONS, endsAt(left, now), now)).toEqual({
        ...KUBE_ACTION_ACTIVITY_OPTIONS,
        scheduleToCloseTimeout: '60000ms',
        startToCloseTimeout: '60000ms',
      });
  });
});

describe('who would be paged', () => {
  it('nobody, with no policy and no chat home channel', () => {
    expect(unpagedIncidents([], false)).toEqual([
      'no escalation policy matches any incident, and the built-in default that takes them pages at level 1 only the chat home channel, which is not set (FOGHORN_WEBHOOK_HOME_CHANNEL)',
    ]);
    expect(unpagedIncidents([], true)).toEqual([]);
  });

  it('everyone, when a policy takes every incident or a stored default pages someone', () => {
    expect(unpagedIncidents([policy({ name: 'all', levels: [{ targets: [slack] }] })], false)).toEqual([]);
    const star = policy({
      name: 'star',
      match: { namespaces: ['*'] },
      levels: [{ targets: [{ schedule: 'primary' }] }],
    });
    expect(unpagedIncidents([star], false)).toEqual([]);
    const some = policy({ name: 'some', match: { namespaces: ['shop'] }, levels: [{ targets: [slack] }] });
    expect(unpagedIncidents([some, policy({ name: 'default', levels: [{ targets: [slack] }] })], false)).toEqual([]);
  });

  it('lists the incidents no policy takes, and the policies that page nobody (none, or chat without a home channel)', () => {
    const policies = [
      policy({ name: 'pay', match: { namespaces: ['pay'], severities: ['critical'] }, levels: [{ targets: [slack] }] }),
      policy({ name: 'chatty', match: { severities: ['high'] }, levels: [{ targets: [{ channel: 'chat' }] }] }),
      policy({ name: 'quiet', match: { namespaces: ['dev'] }, levels: [] }),
      policy({ name: 'default', levels: [] }),
    ];
    expect(unpagedIncidents(policies, false)).toEqual([
      'no escalation policy matches critical incidents outside namespaces dev, pay, nor medium and low incidents outside namespaces dev, and the policy default that takes them has no levels',
      'policy chatty takes severities high and pages at level 1 only the chat home channel, which is not set (FOGHORN_WEBHOOK_HOME_CHANNEL)',
      'policy quiet takes namespaces dev and has no levels',
    ]);
    // A chat target with its own chat id, or a home channel, reaches someone.
    expect(unpagedIncidents(policies, true)).toEqual([
      'no escalation policy matches critical incidents outside namespaces dev, pay, nor medium and low incidents outside namespaces dev, and the policy default that takes them has no levels',
      'policy quiet takes namespaces dev and has no levels',
    ]);
  });
});
