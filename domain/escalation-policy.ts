import { z } from 'zod';
import type { IncidentState, TimelineEvent } from './incident';
import { parseDuration } from './duration';
import { goDuration } from './runbook';
import { severitySchema, type Severity } from './vocabulary';

/**
 * Escalation policies, on-call schedules and maintenance windows (DESIGN §8, docs/escalation.md):
 * the shapes the YAML file (FOGHORN_ESCALATION_FILE) and the admin API accept, how a policy is
 * chosen for an incident, and the ladder a workflow may carry — which never holds a secret.
 */

const configName = z
  .string()
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be lowercase letters, digits and dashes, such as payments-critical')
  .max(63);

/** Incoming-webhook style URLs: http(s) only, no credentials in the authority. */
const endpointUrl = z
  .string()
  .url('must be a URL such as https://hooks.slack.com/services/…')
  // Refinements run even when .url() failed: a string that is no URL has its issue already.
  .refine((u) => !URL.canParse(u) || /^https?:$/.test(new URL(u).protocol), 'must be an http or https URL')
  .refine(
    (u) => !URL.canParse(u) || (!new URL(u).username && !new URL(u).password),
    'must not carry a user or password',
  );

export const NOTIFICATION_CHANNELS = ['slack', 'pagerduty', 'webhook', 'chat'] as const;
export type NotificationChannel = (typeof NOTIFICATION_CHANNELS)[number];

/** Where a notification goes. Secrets (URLs with tokens, routing keys, signing secrets) live only here. */
export const channelTargetSchema = z.discriminatedUnion('channel', [
  z.object({ channel: z.literal('slack'), url: endpointUrl }).strict(),
  z
    .object({
      channel: z.literal('pagerduty'),
      routingKey: z.string().regex(/^[A-Za-z0-9]{20,64}$/, 'must be a PagerDuty integration (routing) key'),
    })
    .strict(),
  z
    .object({
      channel: z.literal('webhook'),
      url: endpointUrl,
      secret: z.string().min(16, 'must be at least 16 characters (a whsec_… Standard Webhooks secret)'),
    })
    .strict(),
  z
    .object({
      channel: z.literal('chat'),
      /** Defaults to FOGHORN_WEBHOOK_HOME_CHANNEL. */
      chatId: z.string().min(1).max(200).optional(),
    })
    .strict(),
]);
export type ChannelTarget = z.infer<typeof channelTargetSchema>;

export const levelTargetSchema = z.union([channelTargetSchema, z.object({ schedule: configName }).strict()], {
  errorMap: () => ({ message: 'must be a channel target ({channel: slack|pagerduty|webhook|chat, …}) or {schedule}' }),
});
export type LevelTarget = z.infer<typeof levelTargetSchema>;

const ms = (text: string) => parseDuration(text);
/** For refinements: a duration goDuration refused already has its issue; NaN fails no other check. */
const checkedMs = (text: string) => {
  try {
    return parseDuration(text);
  } catch {
    return NaN;
  }
};

export const escalationPolicySchema = z
  .object({
    name: configName.refine((n) => n !== 'none', 'none is built in (nobody is paged) and cannot be redefined'),
    description: z.string().max(500).default(''),
    /** Lower first; ties in creation order. The first policy that matches an incident is its policy. */
    priority: z.number().int().min(0).max(10_000).default(100),
    match: z
      .object({
        namespaces: z.array(z.string().min(1).max(63)).min(1).optional(),
        severities: z.array(severitySchema).min(1).optional(),
      })
      .strict()
      .default({}),
    /** Empty: the policy `none` — nobody is paged and an incident automation gave up on ends `Failed`. */
    levels: z
      .array(
        z
          .object({
            targets: z.array(levelTargetSchema).min(1).max(20),
            /** How long this level has to acknowledge before the next one is notified (ignored on the last). */
            escalateAfter: goDuration.default('5m'),
          })
          .strict(),
      )
      .max(10),
    /** The last level again every `every` while unacknowledged; `times` caps it (absent: until acknowledged). */
    repeat: z
      .object({ every: goDuration, times: z.number().int().min(1).max(1000).optional() })
      .strict()
      .optional(),
  })
  .strict()
  .superRefine((p, ctx) => {
    for (const [i, level] of p.levels.entries())
      if (checkedMs(level.escalateAfter) < 1_000)
        ctx.addIssue({ code: 'custom', path: ['levels', i, 'escalateAfter'], message: 'must be at least 1s' });
    if (p.repeat && checkedMs(p.repeat.every) < 60_000)
      ctx.addIssue({ code: 'custom', path: ['repeat', 'every'], message: 'must be at least 1m' });
    if (p.repeat && p.levels.length === 0)
      ctx.addIssue({ code: 'custom', path: ['repeat'], message: 'needs at least one level to repeat' });
  });
export type EscalationPolicy = z.output<typeof escalationPolicySchema>;
export type EscalationPolicyInput = z.input<typeof escalationPolicySchema>;

/** A weekly (or `every`) rotation of people, each with their own channels; overrides win. */
export const onCallScheduleSchema = z
  .object({
    name: configName,
    description: z.string().max(500).default(''),
    /** When the first person's shift starts; shifts follow back to back. */
    start: z.string().datetime({ offset: true, message: 'must be an ISO 8601 timestamp' }),
    shift: goDuration.default('168h'),
    people: z
      .array(
        z.object({ name: z.string().min(1).max(100), targets: z.array(channelTargetSchema).min(1).max(10) }).strict(),
      )
      .min(1)
      .max(100),
    overrides: z
      .array(
        z
          .object({
            person: z.string().min(1).max(100),
            from: z.string().datetime({ offset: true, message: 'must be an ISO 8601 timestamp' }),
            to: z.string().datetime({ offset: true, message: 'must be an ISO 8601 timestamp' }),
          })
          .strict(),
      )
      .max(200)
      .default([]),
  })
  .strict()
  .superRefine((s, ctx) => {
    const names = new Set(s.people.map((p) => p.name));
    if (names.size !== s.people.length)
      ctx.addIssue({ code: 'custom', path: ['people'], message: 'names must be unique' });
    if (checkedMs(s.shift) < 60_000) ctx.addIssue({ code: 'custom', path: ['shift'], message: 'must be at least 1m' });
    for (const [i, o] of s.overrides.entries()) {
      if (!names.has(o.person))
        ctx.addIssue({
          code: 'custom',
          path: ['overrides', i, 'person'],
          message: `must be one of the schedule's people`,
        });
      if (Date.parse(o.to) <= Date.parse(o.from))
        ctx.addIssue({ code: 'custom', path: ['overrides', i, 'to'], message: 'must be after from' });
    }
  });
export type OnCallSchedule = z.output<typeof onCallScheduleSchema>;

/** While one is active for an incident's namespace (`*`: every namespace) the ladder holds. */
export const maintenanceWindowSchema = z
  .object({
    name: configName,
    namespace: z.string().min(1).max(63),
    from: z.string().datetime({ offset: true, message: 'must be an ISO 8601 timestamp' }),
    to: z.string().datetime({ offset: true, message: 'must be an ISO 8601 timestamp' }),
    reason: z.string().max(500).default(''),
  })
  .strict()
  .refine((w) => Date.parse(w.to) > Date.parse(w.from), { path: ['to'], message: 'must be after from' });
export type MaintenanceWindow = z.output<typeof maintenanceWindowSchema>;

/** The file FOGHORN_ESCALATION_FILE names. */
export const escalationFileSchema = z
  .object({
    policies: z.array(escalationPolicySchema).default([]),
    schedules: z.array(onCallScheduleSchema).default([]),
    maintenanceWindows: z.array(maintenanceWindowSchema).default([]),
  })
  .strict()
  .superRefine((file, ctx) => {
    const unique = (key: 'policies' | 'schedules' | 'maintenanceWindows') => {
      const seen = new Set<string>();
      for (const [i, item] of file[key].entries()) {
        if (seen.has(item.name))
          ctx.addIssue({ code: 'custom', path: [key, i, 'name'], message: `duplicate name ${item.name}` });
        seen.add(item.name);
      }
    };
    unique('policies');
    unique('schedules');
    unique('maintenanceWindows');
    const schedules = new Set(file.schedules.map((s) => s.name));
    for (const [i, p] of file.policies.entries())
      for (const [l, level] of p.levels.entries())
        for (const [t, target] of level.targets.entries())
          if ('schedule' in target && !schedules.has(target.schedule))
            ctx.addIssue({
              code: 'custom',
              path: ['policies', i, 'levels', l, 'targets', t, 'schedule'],
              message: `no schedule named ${target.schedule} in this file`,
            });
  });
export type EscalationFile = z.output<typeof escalationFileSchema>;

/** One line per problem, each naming its field: `policies.0.levels.1.escalateAfter: must be …`. */
export function describeIssues(error: z.ZodError): string[] {
  return error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(top level)'}: ${i.message}`);
}

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
