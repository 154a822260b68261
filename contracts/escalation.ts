import { z } from 'zod';
import { parseDuration } from '../domain/duration';
import {
  MIN_REMEDIATION_BUDGET_MS,
  type ChannelTarget,
  type EscalationPolicy,
  type LevelTarget,
  type MaintenanceWindow,
  type OnCallSchedule,
} from '../domain/escalation-policy';
import { goDuration } from './runbooks';
import { sameType } from './type-check';
import { severitySchema } from './vocabulary';

/**
 * Escalation policies, on-call schedules and maintenance windows as the YAML file
 * (FOGHORN_ESCALATION_FILE) and the admin API accept them (docs/escalation.md); they parse to
 * domain/escalation-policy.ts's types.
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
sameType<z.output<typeof channelTargetSchema>, ChannelTarget>(true);

export const levelTargetSchema = z.union([channelTargetSchema, z.object({ schedule: configName }).strict()], {
  errorMap: () => ({ message: 'must be a channel target ({channel: slack|pagerduty|webhook|chat, …}) or {schedule}' }),
});
sameType<z.output<typeof levelTargetSchema>, LevelTarget>(true);

/** For refinements: a duration goDuration refused already has its issue; NaN fails no other check. */
const checkedMs = (text: string) => {
  try {
    return parseDuration(text);
  } catch {
    return NaN;
  }
};

/** A budget longer than a day bounds nothing an operator would wait for. */
const MAX_REMEDIATION_BUDGET_MS = 24 * 3_600_000;

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
    /**
     * How long automation may try, per severity, before the ladder starts beside it (from the move
     * to Remediating); a severity left out: critical 10m, high 20m, medium and low 60m.
     */
    remediationBudget: z
      .object({
        critical: goDuration.optional(),
        high: goDuration.optional(),
        medium: goDuration.optional(),
        low: goDuration.optional(),
      })
      .strict()
      .optional(),
  })
  .strict()
  .superRefine((p, ctx) => {
    for (const [severity, budget] of Object.entries(p.remediationBudget ?? {})) {
      const budgetMs = checkedMs(budget);
      if (budgetMs < MIN_REMEDIATION_BUDGET_MS || budgetMs > MAX_REMEDIATION_BUDGET_MS)
        ctx.addIssue({
          code: 'custom',
          path: ['remediationBudget', severity],
          message: 'must be between 1m and 24h',
        });
    }
    for (const [i, level] of p.levels.entries())
      if (checkedMs(level.escalateAfter) < 1_000)
        ctx.addIssue({ code: 'custom', path: ['levels', i, 'escalateAfter'], message: 'must be at least 1s' });
    if (p.repeat && checkedMs(p.repeat.every) < 60_000)
      ctx.addIssue({ code: 'custom', path: ['repeat', 'every'], message: 'must be at least 1m' });
    if (p.repeat && p.levels.length === 0)
      ctx.addIssue({ code: 'custom', path: ['repeat'], message: 'needs at least one level to repeat' });
  });
sameType<z.output<typeof escalationPolicySchema>, EscalationPolicy>(true);
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
sameType<z.output<typeof onCallScheduleSchema>, OnCallSchedule>(true);

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
sameType<z.output<typeof maintenanceWindowSchema>, MaintenanceWindow>(true);

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
