import type { IncidentState, TimelineEvent } from './incident';
import { formatDuration, parseDuration } from './duration';
import { SEVERITIES, type Severity } from './vocabulary';

/**
 * Escalation policies, on-call schedules and maintenance windows (DESIGN §8, docs/escalation.md):
 * their shapes (the YAML file FOGHORN_ESCALATION_FILE and the admin API validate them with
 * contracts/escalation.ts), how a policy is chosen for an incident, and the ladder a workflow
 * may carry — which never holds a secret.
 */

export const NOTIFICATION_CHANNELS = ['slack', 'pagerduty', 'webhook', 'chat'] as const;
export type NotificationChannel = (typeof NOTIFICATION_CHANNELS)[number];

/** Where a notification goes. Secrets (URLs with tokens, routing keys, signing secrets) live only here. */
export type ChannelTarget =
  | { channel: 'slack'; url: string }
  | { channel: 'pagerduty'; routingKey: string }
  | { channel: 'webhook'; url: string; secret: string }
  | {
      channel: 'chat';
      /** Defaults to FOGHORN_WEBHOOK_HOME_CHANNEL. */
      chatId?: string;
    };

/** A level notifies channels directly or whoever a schedule has on call. */
export type LevelTarget = ChannelTarget | { schedule: string };

export interface EscalationLevel {
  targets: LevelTarget[];
  /** How long this level has to acknowledge before the next one is notified (ignored on the last); a Go duration. */
  escalateAfter: string;
}

export interface EscalationPolicy {
  name: string;
  description: string;
  /** Lower first; ties in creation order. The first policy that matches an incident is its policy. */
  priority: number;
  match: { namespaces?: string[]; severities?: Severity[] };
  /** Empty: the policy `none` — nobody is paged and an incident automation gave up on ends `Failed`. */
  levels: EscalationLevel[];
  /** The last level again every `every` while unacknowledged; `times` caps it (absent: until acknowledged). */
  repeat?: { every: string; times?: number };
  /**
   * How long automation may try, per severity, before the ladder starts beside it (Go durations);
   * a severity left out takes DEFAULT_REMEDIATION_BUDGET's.
   */
  remediationBudget?: RemediationBudget;
}

/** Per severity, a Go duration. */
export type RemediationBudget = Partial<Record<Severity, string>>;

/** A weekly (or `every`) rotation of people, each with their own channels; overrides win. */
export interface OnCallSchedule {
  name: string;
  description: string;
  /** When the first person's shift starts (ISO 8601); shifts follow back to back. */
  start: string;
  /** A Go duration. */
  shift: string;
  people: { name: string; targets: ChannelTarget[] }[];
  overrides: { person: string; from: string; to: string }[];
}

/** While one is active for an incident's namespace (`*`: every namespace) the ladder holds. */
export interface MaintenanceWindow {
  name: string;
  namespace: string;
  from: string;
  to: string;
  reason: string;
}

const ms = (text: string) => parseDuration(text);

// ---------------------------------------------------------------------------------------------
// Built-in policies and choosing one
// ---------------------------------------------------------------------------------------------

export const DEFAULT_POLICY = 'default';
export const NO_POLICY = 'none';

/**
 * DESIGN §8's default: L1 → 5m → L2 → 10m → L3, L3 again every 30m while unacknowledged. With no
 * configuration every level is the chat home channel (the only channel Foghorn knows by itself);
 * a policy named `default` replaces it.
 */
export const BUILTIN_DEFAULT_POLICY: EscalationPolicy = {
  name: DEFAULT_POLICY,
  description: 'built in: L1 → 5m → L2 → 10m → L3, L3 repeated every 30m; the chat home channel',
  priority: 10_000,
  match: {},
  levels: [
    { targets: [{ channel: 'chat' }], escalateAfter: '5m' },
    { targets: [{ channel: 'chat' }], escalateAfter: '10m' },
    { targets: [{ channel: 'chat' }], escalateAfter: '30m' },
  ],
  repeat: { every: '30m' },
};

/** Built in, may not be redefined: nobody is paged; automation giving up ends the incident `Failed`. */
export const BUILTIN_NONE_POLICY: EscalationPolicy = {
  name: NO_POLICY,
  description: 'built in: nobody is paged; an incident automation gave up on ends Failed',
  priority: 10_000,
  match: {},
  levels: [],
};

export function policyMatches(policy: EscalationPolicy, incident: { namespace: string; severity: Severity }): boolean {
  const { namespaces, severities } = policy.match;
  return (
    (!namespaces || namespaces.includes('*') || namespaces.includes(incident.namespace)) &&
    (!severities || severities.includes(incident.severity))
  );
}

/**
 * The incident's policy: the first stored policy (by priority, then creation) whose match fits,
 * else the stored `default`, else the built-in default. `default` itself is never matched by
 * its `match`: it is the fallback.
 */
export function choosePolicy(
  policies: readonly EscalationPolicy[],
  incident: { namespace: string; severity: Severity },
): EscalationPolicy {
  const chosen = policies.find((p) => p.name !== DEFAULT_POLICY && policyMatches(p, incident));
  return chosen ?? policies.find((p) => p.name === DEFAULT_POLICY) ?? BUILTIN_DEFAULT_POLICY;
}

// ---------------------------------------------------------------------------------------------
// The remediation budget: a bounded time to a human
// ---------------------------------------------------------------------------------------------

/**
 * How long automation may try before a person is paged, from the incident's move to Remediating:
 * when it runs out while a plan still runs, the ladder starts at once and automation goes on.
 */
export const DEFAULT_REMEDIATION_BUDGET: Readonly<Record<Severity, string>> = {
  critical: '10m',
  high: '20m',
  medium: '60m',
  low: '60m',
};

/** The shortest budget a policy may set, and the shortest a step is ever given (retries included). */
export const MIN_REMEDIATION_BUDGET_MS = 60_000;

/** The incident's budget in milliseconds: its policy's for the severity, else the default. */
export function remediationBudgetMs(policy: Pick<EscalationPolicy, 'remediationBudget'>, severity: Severity): number {
  return ms(policy.remediationBudget?.[severity] ?? DEFAULT_REMEDIATION_BUDGET[severity]);
}

/** Where automation stood when the budget ran out. */
export interface BudgetMoment {
  budgetMs: number;
  attempt: number;
  maxAttempts: number;
  /** The plan running, if one is; `waiting`: it waits for its approval. */
  plan?: { name: string; waiting: boolean };
}

/**
 * Why the ladder starts while automation still runs, as the ladder's notifications say it:
 * `remediation budget of 10m ran out while plan RP-… runs (attempt 1 of 3); automation continues`.
 */
export function budgetRanOutReason(at: BudgetMoment): string {
  const of = `attempt ${at.attempt} of ${at.maxAttempts}`;
  const where = at.plan
    ? `plan ${at.plan.name} ${at.plan.waiting ? 'waits for its approval' : 'runs'} (${of})`
    : `${of} is prepared`;
  return `remediation budget of ${formatDuration(at.budgetMs)} ran out while ${where}; automation continues`;
}

// ---------------------------------------------------------------------------------------------
// Who would be paged at all
// ---------------------------------------------------------------------------------------------

/** Why a policy's first level reaches nobody, or undefined when it reaches someone. */
function whyLevelOneIsEmpty(policy: EscalationPolicy, homeChannel: boolean): string | undefined {
  const first = policy.levels[0];
  if (!first) return 'has no levels';
  const reaches = first.targets.some((t) => 'schedule' in t || t.channel !== 'chat' || !!t.chatId || homeChannel);
  return reaches
    ? undefined
    : 'pages at level 1 only the chat home channel, which is not set (FOGHORN_WEBHOOK_HOME_CHANNEL)';
}

const takesAllNamespaces = (p: EscalationPolicy) => !p.match.namespaces || p.match.namespaces.includes('*');
const and = (items: readonly string[]) =>
  items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;

/**
 * What would page nobody under these policies (as stored, in the order policies are chosen), one
 * sentence each; empty when every incident's approvals and escalations reach someone. Two
 * causes: no policy matches and the fallback (the stored `default`, else the built-in one on the
 * chat home channel) reaches nobody; or the policy that matches has no level 1 anyone receives
 * (a policy without levels, like `none`, or a chat level without FOGHORN_WEBHOOK_HOME_CHANNEL).
 */
export function unpagedIncidents(policies: readonly EscalationPolicy[], homeChannel: boolean): string[] {
  const gaps: string[] = [];
  const matching = policies.filter((p) => p.name !== DEFAULT_POLICY);
  const fallback = policies.find((p) => p.name === DEFAULT_POLICY);
  const fallbackEmpty = whyLevelOneIsEmpty(fallback ?? BUILTIN_DEFAULT_POLICY, homeChannel);
  if (fallbackEmpty) {
    // Per severity, the namespaces some policy takes (none left over: skipped), grouped alike.
    const groups = new Map<string, { severities: Severity[]; namespaces: string[] }>();
    for (const severity of SEVERITIES) {
      const taking = matching.filter((p) => !p.match.severities || p.match.severities.includes(severity));
      if (taking.some(takesAllNamespaces)) continue;
      const namespaces = [...new Set(taking.flatMap((p) => p.match.namespaces ?? []))].sort();
      const key = namespaces.join(',');
      const group = groups.get(key) ?? { severities: [], namespaces };
      group.severities.push(severity);
      groups.set(key, group);
    }
    const who = [...groups.values()].map(({ severities, namespaces }) => {
      const all = severities.length === SEVERITIES.length;
      if (all && !namespaces.length) return 'any incident';
      const which = all ? 'incidents' : `${and(severities)} incidents`;
      return namespaces.length ? `${which} outside namespaces ${namespaces.join(', ')}` : which;
    });
    if (who.length)
      gaps.push(
        `no escalation policy matches ${who.join(', nor ')}, and ` +
          (fallback
            ? `the policy ${DEFAULT_POLICY} that takes them ${fallbackEmpty}`
            : `the built-in default that takes them ${fallbackEmpty}`),
      );
  }
  for (const p of matching) {
    const why = whyLevelOneIsEmpty(p, homeChannel);
    if (!why) continue;
    const takes = [
      p.match.namespaces && `namespaces ${p.match.namespaces.join(', ')}`,
      p.match.severities && `severities ${p.match.severities.join(', ')}`,
    ].filter(Boolean);
    gaps.push(`policy ${p.name} takes ${takes.length ? takes.join(' with ') : 'every incident'} and ${why}`);
  }
  return gaps;
}

// ---------------------------------------------------------------------------------------------
// The ladder a workflow carries: timings and redacted target descriptions only
// ---------------------------------------------------------------------------------------------

export interface Ladder {
  policy: string;
  /** Per level: milliseconds before the next level (the last level's is unused). */
  escalateAfterMs: number[];
  repeat?: { everyMs: number; times?: number };
}

export function ladderOf(policy: EscalationPolicy): Ladder {
  return {
    policy: policy.name,
    escalateAfterMs: policy.levels.map((l) => ms(l.escalateAfter)),
    ...(policy.repeat && {
      repeat: { everyMs: ms(policy.repeat.every), ...(policy.repeat.times && { times: policy.repeat.times }) },
    }),
  };
}

/** Automation's escalation message without its "; escalated to on-call" ending: what the ladder's notifications say. */
export const escalationReason = (message: string): string => message.replace(/; escalated to on-call$/, '');

/**
 * What escalating does to the incident (DESIGN §8): `Escalated` with automation's message, or
 * `Failed` under a policy with no levels (`none`), nobody paged. One text for the workflow's own
 * move and the triage's.
 */
export function escalationMove(
  message: string,
  none: boolean,
  why = escalationReason(message),
): { state: Extract<IncidentState, 'Escalated' | 'Failed'>; event: Omit<TimelineEvent, 'timestamp'> } {
  return {
    state: none ? 'Failed' : 'Escalated',
    event: {
      type: 'Escalation',
      source: 'escalation-engine',
      message: none ? `${why}; the escalation policy is none: nobody is paged and the incident ends Failed` : message,
    },
  };
}

/** The rung after `at`: the next level, or the last level again (a repeat); undefined when the ladder is done. */
export function nextRung(
  ladder: Ladder,
  at: { level: number; attempt: number },
): { level: number; attempt: number; waitMs: number } | undefined {
  const last = ladder.escalateAfterMs.length - 1;
  if (at.level < last) return { level: at.level + 1, attempt: 1, waitMs: ladder.escalateAfterMs[at.level] };
  const repeat = ladder.repeat;
  // `times` counts the repeats after the first notification of the last level.
  if (!repeat || (repeat.times !== undefined && at.attempt > repeat.times)) return undefined;
  return { level: last, attempt: at.attempt + 1, waitMs: repeat.everyMs };
}

/**
 * How a target appears on the timeline, in API views and in logs: the channel and the host it
 * reaches, never a URL path, routing key or secret (Slack and webhook URLs carry their tokens).
 */
export function describeTarget(target: LevelTarget, pagerDutyUrl: string): { channel: string; target: string } {
  if ('schedule' in target) return { channel: 'schedule', target: target.schedule };
  switch (target.channel) {
    case 'slack':
    case 'webhook':
      return { channel: target.channel, target: new URL(target.url).host };
    case 'pagerduty':
      return { channel: 'pagerduty', target: new URL(pagerDutyUrl).host };
    case 'chat':
      return { channel: 'chat', target: target.chatId ?? 'home channel' };
  }
}
