import type { Request } from 'express';
import { z, type ZodTypeAny } from 'zod';
import { configSchema } from '../../config/env';
import {
  BUILTIN_DEFAULT_POLICY,
  BUILTIN_NONE_POLICY,
  DEFAULT_POLICY,
  describeTarget,
  NO_POLICY,
  type EscalationPolicy,
  type LevelTarget,
  type MaintenanceWindow,
  type OnCallSchedule,
} from '../../domain/escalation-policy';
import { escalationPolicySchema, maintenanceWindowSchema, onCallScheduleSchema } from '../../contracts/escalation';
import { onCallAt } from '../../domain/oncall';
import { API_VERSION, listEnvelope, PAGE_SIZE } from '../../domain/envelope';
import { listSchema, paginationQuery, timestampQuery } from '../../contracts/envelope';
import { severitySchema } from '../../contracts/vocabulary';
import { appendAudit } from '../../store/audit';
import {
  createConfig,
  deleteConfig,
  getConfig,
  listConfig,
  listSchedules,
  missingSchedules,
  policiesUsingSchedule,
  replaceConfig,
  type ChangeConfigResult,
  type ConfigKind,
  type ConfigRecord,
  type ConfigSpecs,
} from '../../store/escalation-config';
import { auditSource } from '../auth';
import { ApiError, badRequest, conflict, describeZodError, notFound } from '../errors';
import { route, type AnyRoute } from '../route';

/**
 * Escalation configuration (DESIGN §8): policies, on-call schedules and maintenance windows, admin
 * only, audited `config.update`; and `GET /oncall`. No answer ever shows a secret: a target is its
 * channel and the host it reaches (describeTarget), never a URL path, routing key or secret.
 */

// ---------------------------------------------------------------------------------------------
// Response shapes
// ---------------------------------------------------------------------------------------------

const targetViewSchema = z
  .object({
    channel: z.enum(['slack', 'pagerduty', 'webhook', 'chat', 'schedule']),
    target: z.string().describe('the host it reaches, the chat id, or the schedule; never a URL path or secret'),
  })
  .describe('where a notification goes, redacted');

const sourceSchema = z
  .enum(['file', 'api', 'builtin'])
  .describe(
    'file: provisioned from FOGHORN_ESCALATION_FILE (read-only here); api: created here; builtin: Foghorn’s own',
  );

const recordFields = {
  name: z.string(),
  source: sourceSchema,
  createdAt: z.string().datetime().optional().describe('absent for built-ins'),
  updatedAt: z.string().datetime().optional().describe('absent for built-ins'),
};

const policySpecView = z.object({
  description: z.string(),
  priority: z.number().int(),
  match: z.object({ namespaces: z.array(z.string()).optional(), severities: z.array(severitySchema).optional() }),
  levels: z.array(z.object({ targets: z.array(targetViewSchema), escalateAfter: z.string() })),
  repeat: z.object({ every: z.string(), times: z.number().int().optional() }).optional(),
  remediationBudget: z
    .object({
      critical: z.string().optional(),
      high: z.string().optional(),
      medium: z.string().optional(),
      low: z.string().optional(),
    })
    .optional()
    .describe(
      'how long automation may try, per severity, before the ladder starts beside it; a severity left out: critical 10m, high 20m, medium and low 60m',
    ),
});

const scheduleSpecView = z.object({
  description: z.string(),
  start: z.string(),
  shift: z.string(),
  people: z.array(z.object({ name: z.string(), targets: z.array(targetViewSchema) })),
  overrides: z.array(z.object({ person: z.string(), from: z.string(), to: z.string() })),
});

const maintenanceSpecView = z.object({ namespace: z.string(), from: z.string(), to: z.string(), reason: z.string() });

const detailSchema = (kind: string, spec: ZodTypeAny) =>
  z.object({ apiVersion: z.literal(API_VERSION), kind: z.literal(kind), metadata: z.object(recordFields), spec });

const listItemSchema = (spec: z.AnyZodObject) => z.object(recordFields).merge(spec);

const onCallListSchema = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal('OnCallList'),
  items: z.array(
    z.object({
      schedule: z.string(),
      person: z.string(),
      since: z.string().datetime(),
      until: z.string().datetime(),
      override: z.boolean().describe('an override, not the rotation, puts this person on call'),
      channels: z.array(targetViewSchema),
    }),
  ),
});

// ---------------------------------------------------------------------------------------------
// Views
// ---------------------------------------------------------------------------------------------

/** Where PagerDuty events go when FOGHORN_PAGERDUTY_URL is not given to the routes. */
const DEFAULT_PAGERDUTY_URL = configSchema.shape.FOGHORN_PAGERDUTY_URL.parse(undefined);

type Shown = ConfigRecord<ConfigKind> | { spec: EscalationPolicy; source: 'builtin' };

const metadataView = (r: Shown) => ({
  name: r.spec.name,
  source: r.source,
  ...('createdAt' in r && { createdAt: r.createdAt.toISOString(), updatedAt: r.updatedAt.toISOString() }),
});

function specViews(pagerDutyUrl: string) {
  const targets = (ts: readonly LevelTarget[]) => ts.map((t) => describeTarget(t, pagerDutyUrl));
  return {
    policy: (p: EscalationPolicy) => ({
      description: p.description,
      priority: p.priority,
      match: p.match,
      levels: p.levels.map((l) => ({ targets: targets(l.targets), escalateAfter: l.escalateAfter })),
      ...(p.repeat && { repeat: p.repeat }),
      ...(p.remediationBudget && { remediationBudget: p.remediationBudget }),
    }),
    schedule: (s: OnCallSchedule) => ({
      description: s.description,
      start: s.start,
      shift: s.shift,
      people: s.people.map((p) => ({ name: p.name, targets: targets(p.targets) })),
      overrides: s.overrides,
    }),
    maintenance: ({ namespace, from, to, reason }: MaintenanceWindow) => ({ namespace, from, to, reason }),
    targets,
  };
}

// ---------------------------------------------------------------------------------------------
// Routes, the same five per kind
// ---------------------------------------------------------------------------------------------

interface KindRoutes<K extends ConfigKind> {
  kind: K;
  path: string;
  /** The `kind` of a detail answer. */
  resource: string;
  /** Errors: `<noun> not found`, `<noun> already exists`. */
  noun: string;
  tag: string;
  /** The create body; the replace body is its object part without `name` (the path names it). */
  schema: z.ZodEffects<z.AnyZodObject>;
  detailView: (r: Shown) => unknown;
  listItemView: (r: ConfigRecord<K>) => unknown;
  detail: ZodTypeAny;
  listItem: ZodTypeAny;
  /** What only the store can tell about a valid spec (400 naming the field). */
  check?: (spec: ConfigSpecs[K]) => Promise<void>;
  /** A name that is never stored (400), for PUT and DELETE. */
  reserved?: (name: string) => void;
  /** Why it may not be deleted (409), if so. */
  deleteConflict?: (name: string) => Promise<string | undefined>;
  /** Built-ins answering GET when nothing of that name is stored. */
  builtin?: (name: string) => Shown | undefined;
}

const PROVISIONED = 'Provisioned from FOGHORN_ESCALATION_FILE';

function provisioned(noun: string, name: string): ApiError {
  return conflict(
    PROVISIONED,
    `${noun.toLowerCase()} ${name} was provisioned from the escalation file: edit the file FOGHORN_ESCALATION_FILE names and restart Foghorn`,
  );
}

const audit = (req: Request, resource: string, kind: ConfigKind, name: string, operation: string) =>
  appendAudit({
    action: 'config.update',
    ...auditSource(req),
    resource: name,
    resourceType: resource,
    namespace: '',
    details: { kind, name, operation },
  });

function kindRoutes<K extends ConfigKind>(basePath: string, k: KindRoutes<K>): AnyRoute[] {
  const listQuery = paginationQuery(PAGE_SIZE.max, PAGE_SIZE.default);
  const replaceBody = k.schema.innerType().omit({ name: true });
  const location = (name: string) => `${basePath}${k.path}/${encodeURIComponent(name)}`;
  /** 404 when absent, 409 when provisioned from the file: only `api` entries change here. */
  const refuseChange = (record: ConfigRecord<K> | undefined, name: string) => {
    if (!record) throw notFound(k.noun, name);
    if (record.source === 'file') throw provisioned(k.noun, name);
  };
  /** The same for what the store answered (the entry may have changed since it was read). */
  const refuse = (result: ChangeConfigResult<K>, name: string): ConfigRecord<K> => {
    if (result.outcome === 'not-found') throw notFound(k.noun, name);
    if (result.outcome === 'provisioned') throw provisioned(k.noun, name);
    return result.record;
  };
  return [
    route({
      method: 'get',
      path: k.path,
      summary: `List ${k.noun.toLowerCase()}s`,
      tag: k.tag,
      role: 'viewer',
      query: listQuery,
      responses: {
        200: { description: `${k.noun.toLowerCase()}s`, schema: listSchema(`${k.resource}List`, k.listItem) },
      },
      handler: async ({ query: { page, pageSize } }) => {
        const { items, totalCount } = await listConfig(k.kind, page, pageSize);
        return { body: listEnvelope(`${k.resource}List`, items.map(k.listItemView), totalCount, page, pageSize) };
      },
    }),
    route({
      method: 'get',
      path: `${k.path}/{name}`,
      summary: `Get a ${k.noun.toLowerCase()}`,
      tag: k.tag,
      role: 'viewer',
      kind: k.noun,
      responses: { 200: { description: `the ${k.noun.toLowerCase()}`, schema: k.detail } },
      handler: async ({ params }) => {
        const shown = (await getConfig(k.kind, params.name)) ?? k.builtin?.(params.name);
        if (!shown) throw notFound(k.noun, params.name);
        return { body: k.detailView(shown) };
      },
    }),
    route({
      method: 'post',
      path: k.path,
      summary: `Create a ${k.noun.toLowerCase()}`,
      tag: k.tag,
      role: 'admin',
      body: k.schema,
      responses: {
        201: { description: 'created', schema: k.detail },
        409: { description: `a ${k.noun.toLowerCase()} of that name already exists` },
      },
      handler: async ({ body, req }) => {
        const spec = body as ConfigSpecs[K];
        await k.check?.(spec);
        const result = await createConfig(k.kind, spec);
        if (!result.created) {
          const existing = result.existing
            ? ` (source ${result.existing.source}, created ${result.existing.createdAt.toISOString()})`
            : '';
          throw conflict(`${k.noun} already exists`, `${k.noun.toLowerCase()} ${spec.name} already exists${existing}`);
        }
        await audit(req, k.resource, k.kind, spec.name, 'create');
        return { status: 201, headers: { Location: location(spec.name) }, body: k.detailView(result.record) };
      },
    }),
    route({
      method: 'put',
      path: `${k.path}/{name}`,
      summary: `Replace a ${k.noun.toLowerCase()} (the name comes from the path)`,
      tag: k.tag,
      role: 'admin',
      kind: k.noun,
      body: replaceBody,
      responses: {
        200: { description: 'replaced', schema: k.detail },
        409: { description: PROVISIONED },
      },
      handler: async ({ params, body, req }) => {
        k.reserved?.(params.name);
        // What cannot be replaced answers so before the body is judged (a name no entry can have: 404).
        refuseChange(await getConfig(k.kind, params.name), params.name);
        // The rules across fields live on the whole spec: check them with the path's name.
        const parsed = k.schema.safeParse({ ...(body as object), name: params.name });
        if (!parsed.success) throw badRequest(describeZodError(parsed.error, 'body'));
        const spec = parsed.data as ConfigSpecs[K];
        await k.check?.(spec);
        const record = refuse(await replaceConfig(k.kind, spec), params.name);
        await audit(req, k.resource, k.kind, params.name, 'replace');
        return { body: k.detailView(record) };
      },
    }),
    route({
      method: 'delete',
      path: `${k.path}/{name}`,
      summary: `Delete a ${k.noun.toLowerCase()}`,
      tag: k.tag,
      role: 'admin',
      kind: k.noun,
      responses: {
        204: { description: 'deleted' },
        409: { description: `${PROVISIONED}, or still in use` },
      },
      handler: async ({ params, req }) => {
        k.reserved?.(params.name);
        refuseChange(await getConfig(k.kind, params.name), params.name);
        const inUse = await k.deleteConflict?.(params.name);
        if (inUse) throw conflict(`${k.noun} in use`, inUse);
        refuse(await deleteConfig(k.kind, params.name), params.name);
        await audit(req, k.resource, k.kind, params.name, 'delete');
        return { status: 204 };
      },
    }),
  ];
}

/** 400 naming the field: `none` is built in and never stored. */
function refuseNone(name: string, field: string): void {
  if (name === NO_POLICY)
    throw badRequest(`${field}: ${NO_POLICY} is built in (nobody is paged) and cannot be redefined`);
}

/**
 * Escalation configuration and who is on call. `pagerDutyUrl` (FOGHORN_PAGERDUTY_URL) is only
 * shown as its host, where a PagerDuty target's events go.
 */
export function escalationRoutes(basePath: string, pagerDutyUrl: string = DEFAULT_PAGERDUTY_URL): AnyRoute[] {
  const views = specViews(pagerDutyUrl);
  const detail =
    <S>(resource: string, view: (spec: S) => unknown) =>
    (r: Shown) => ({ apiVersion: API_VERSION, kind: resource, metadata: metadataView(r), spec: view(r.spec as S) });
  const listItem =
    <S>(view: (spec: S) => object) =>
    (r: Shown) => ({ ...metadataView(r), ...view(r.spec as S) });

  const policies = kindRoutes(basePath, {
    kind: 'policy',
    path: '/escalation-policies',
    resource: 'EscalationPolicy',
    noun: 'Escalation policy',
    tag: 'Escalation',
    schema: escalationPolicySchema,
    detailView: detail('EscalationPolicy', views.policy),
    listItemView: listItem(views.policy),
    detail: detailSchema('EscalationPolicy', policySpecView),
    listItem: listItemSchema(policySpecView),
    check: async (policy) => {
      refuseNone(policy.name, 'body.name');
      const refs = policy.levels.flatMap((level, l) =>
        level.targets.flatMap((t, i) =>
          'schedule' in t ? [{ schedule: t.schedule, field: `body.levels.${l}.targets.${i}.schedule` }] : [],
        ),
      );
      const missing = new Set(await missingSchedules(refs.map((r) => r.schedule)));
      const problems = refs
        .filter((r) => missing.has(r.schedule))
        .map((r) => `${r.field}: no schedule named ${r.schedule}`);
      if (problems.length) throw badRequest(problems.join('; '));
    },
    reserved: (name) => refuseNone(name, 'name'),
    builtin: (name) =>
      name === DEFAULT_POLICY
        ? { spec: BUILTIN_DEFAULT_POLICY, source: 'builtin' }
        : name === NO_POLICY
          ? { spec: BUILTIN_NONE_POLICY, source: 'builtin' }
          : undefined,
  });

  const schedules = kindRoutes(basePath, {
    kind: 'schedule',
    path: '/oncall-schedules',
    resource: 'OnCallSchedule',
    noun: 'Schedule',
    tag: 'Escalation',
    schema: onCallScheduleSchema,
    detailView: detail('OnCallSchedule', views.schedule),
    listItemView: listItem(views.schedule),
    detail: detailSchema('OnCallSchedule', scheduleSpecView),
    listItem: listItemSchema(scheduleSpecView),
    deleteConflict: async (name) => {
      const users = await policiesUsingSchedule(name);
      return users.length
        ? `schedule ${name} is paged by the escalation policies ${users.join(', ')}: change them first`
        : undefined;
    },
  });

  const windows = kindRoutes(basePath, {
    kind: 'maintenance',
    path: '/maintenance-windows',
    resource: 'MaintenanceWindow',
    noun: 'Maintenance window',
    tag: 'Escalation',
    schema: maintenanceWindowSchema,
    detailView: detail('MaintenanceWindow', views.maintenance),
    listItemView: listItem(views.maintenance),
    detail: detailSchema('MaintenanceWindow', maintenanceSpecView),
    listItem: listItemSchema(maintenanceSpecView),
  });

  const onCall = route({
    method: 'get',
    path: '/oncall',
    summary: 'Who is on call, for every schedule or one',
    tag: 'Escalation',
    role: 'viewer',
    query: z.object({
      schedule: z.string().min(1).max(63).optional(),
      at: timestampQuery.optional().describe('when (RFC 3339); default now'),
    }),
    responses: {
      200: { description: 'who is on call', schema: onCallListSchema },
      404: { description: 'Schedule not found: no schedule of the `schedule` name' },
    },
    handler: async ({ query }) => {
      const at = query.at ?? new Date();
      let chosen: OnCallSchedule[];
      if (query.schedule) {
        const one = await getConfig('schedule', query.schedule);
        if (!one) throw notFound('Schedule', query.schedule);
        chosen = [one.spec];
      } else chosen = await listSchedules();
      const items = chosen.map((schedule) => {
        const shift = onCallAt(schedule, at);
        const person = schedule.people.find((p) => p.name === shift.person);
        return { ...shift, channels: views.targets(person?.targets ?? []) };
      });
      return { body: { apiVersion: API_VERSION, kind: 'OnCallList', items } };
    },
  });

  return [...policies, ...schedules, ...windows, onCall];
}
