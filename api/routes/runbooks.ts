import { z } from 'zod';
import { redact } from '../../domain/redact';
import { formatDuration } from '../../domain/duration';
import { actionSchema, runbookSpecSchema, runbookUpdateSchema } from '../../contracts/runbooks';
import {
  resourceKindSchema,
  runbookCategorySchema,
  severitySchema,
  signalTypeSchema,
} from '../../contracts/vocabulary';
import { API_VERSION, listEnvelope, PAGE_SIZE } from '../../domain/envelope';
import { booleanQuery, listSchema, paginationQuery } from '../../contracts/envelope';
import { appendAudit } from '../../store/audit';
import {
  createRunbook,
  deleteRunbook,
  getRunbook,
  listRunbooks,
  updateRunbook,
  type RunbookRecord,
} from '../../store/runbooks';
import { auditSource } from '../auth';
import { conflict, notFound } from '../errors';
import { route } from '../route';

// ---------------------------------------------------------------------------------------------
// Response shapes (they also document the API in the OpenAPI document)
// ---------------------------------------------------------------------------------------------

const targetsSchema = z.object({ signalTypes: z.array(signalTypeSchema), resourceKinds: z.array(resourceKindSchema) });

/** The spec's Runbook list item, plus what the runbook does (steps, targets, maxAttempts). */
const runbookListItemSchema = z.object({
  name: z.string(),
  category: runbookCategorySchema,
  description: z.string(),
  version: z.string(),
  automated: z.boolean(),
  approvalRequired: z.boolean(),
  severity: z.array(severitySchema),
  stepsCount: z.number().int(),
  avgExecutionTime: z.string().nullable().describe('Go duration of the average run; null until the runbook has run'),
  successRate: z
    .number()
    .min(0)
    .max(100)
    .nullable()
    .describe('percentage of successful runs (one decimal); null until the runbook has run'),
  lastUsed: z.string().datetime().optional().describe('absent until the runbook has run'),
  createdAt: z.string().datetime(),
  steps: z.array(actionSchema),
  targets: targetsSchema,
  maxAttempts: z.number().int(),
  reviewPending: z
    .boolean()
    .describe('proposed by Foghorn from an agentic plan: not matched until an admin updates it'),
  proposedBy: z.string().optional().describe('the remediation plan it was proposed from'),
});

const runbookDetailSchema = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal('Runbook'),
  metadata: z.object({ name: z.string(), createdAt: z.string().datetime(), updatedAt: z.string().datetime() }),
  spec: runbookSpecSchema.omit({ name: true }),
  status: z.object({
    stepsCount: z.number().int(),
    avgExecutionTime: z.string().nullable().describe('Go duration of the average run; null until the runbook has run'),
    successRate: z
      .number()
      .min(0)
      .max(100)
      .nullable()
      .describe('percentage of successful runs (one decimal); null until the runbook has run'),
    lastUsed: z.string().datetime().optional(),
    executions: z.number().int(),
    reviewPending: z.boolean(),
    proposedBy: z.string().optional(),
  }),
});

// ---------------------------------------------------------------------------------------------
// Views
// ---------------------------------------------------------------------------------------------

/**
 * Usage figures as the spec shows them: a Go duration and a 0–100 percentage (one decimal);
 * both null before the first run (no run is not a 0% success rate).
 */
function stats(r: RunbookRecord) {
  const executions = r.executions ?? 0;
  return {
    stepsCount: r.steps.length,
    avgExecutionTime: executions > 0 ? formatDuration(Math.round((r.totalExecutionMs ?? 0) / executions)) : null,
    successRate: executions > 0 ? Math.round(((r.successes ?? 0) / executions) * 1000) / 10 : null,
    ...(r.lastUsed && { lastUsed: r.lastUsed.toISOString() }),
  };
}

const targetsView = (r: RunbookRecord) => ({
  signalTypes: r.targets?.signalTypes ?? [],
  resourceKinds: r.targets?.resourceKinds ?? [],
});

// `params` is never absent in the API, even for an action without parameters. Redacted: viewers
// read runbooks, and an HttpRequest step may carry an Authorization header.
const stepsView = (r: RunbookRecord) => r.steps.map((s) => redact({ ...s, params: s.params ?? {} }));

/** A runbook Foghorn proposed (from a successful agentic plan) waits for an admin's update before it can match. */
const reviewView = (r: RunbookRecord) => ({
  reviewPending: r.reviewPending === true,
  ...(r.proposedBy && { proposedBy: r.proposedBy }),
});

function listItemView(r: RunbookRecord) {
  const { stepsCount, avgExecutionTime, successRate, lastUsed } = stats(r);
  return {
    name: r.name,
    category: r.category,
    description: r.description,
    version: r.version,
    automated: r.automated,
    approvalRequired: r.approvalRequired,
    severity: r.severity,
    stepsCount,
    avgExecutionTime,
    successRate,
    ...(lastUsed && { lastUsed }),
    createdAt: r.createdAt.toISOString(),
    steps: stepsView(r),
    targets: targetsView(r),
    maxAttempts: r.maxAttempts,
    ...reviewView(r),
  };
}

function detailView(r: RunbookRecord) {
  return {
    apiVersion: API_VERSION,
    kind: 'Runbook',
    metadata: { name: r.name, createdAt: r.createdAt.toISOString(), updatedAt: r.updatedAt.toISOString() },
    spec: {
      category: r.category,
      description: r.description,
      version: r.version,
      automated: r.automated,
      approvalRequired: r.approvalRequired,
      severity: r.severity,
      targets: targetsView(r),
      steps: stepsView(r),
      maxAttempts: r.maxAttempts,
      ...(r.verificationWindow && { verificationWindow: r.verificationWindow }),
    },
    status: { ...stats(r), executions: r.executions ?? 0, ...reviewView(r) },
  };
}

// ---------------------------------------------------------------------------------------------
// Routes
// ---------------------------------------------------------------------------------------------

const listQuery = paginationQuery(PAGE_SIZE.max, PAGE_SIZE.default).extend({
  category: runbookCategorySchema.optional(),
  severity: severitySchema.optional(),
  automated: booleanQuery.optional(),
});

const KIND = 'Runbook';

/** Runbooks: everyone may read them; only admins create, change or delete them (DESIGN §5). */
export function runbookRoutes(basePath: string) {
  return [
    route({
      method: 'get',
      path: '/runbooks',
      summary: 'List runbooks, sorted by name',
      tag: 'Runbooks',
      role: 'viewer',
      query: listQuery,
      responses: { 200: { description: 'runbooks', schema: listSchema('RunbookList', runbookListItemSchema) } },
      handler: async ({ query }) => {
        const { page, pageSize, ...filter } = query;
        const { items, totalCount } = await listRunbooks(filter, page, pageSize);
        return { body: listEnvelope('RunbookList', items.map(listItemView), totalCount, page, pageSize) };
      },
    }),
    route({
      method: 'get',
      path: '/runbooks/{name}',
      summary: 'Get a runbook',
      tag: 'Runbooks',
      role: 'viewer',
      kind: KIND,
      responses: { 200: { description: 'the runbook', schema: runbookDetailSchema } },
      handler: async ({ params }) => {
        const runbook = await getRunbook(params.name);
        if (!runbook) throw notFound(KIND, params.name);
        return { body: detailView(runbook) };
      },
    }),
    route({
      method: 'post',
      path: '/runbooks',
      summary: 'Create a runbook',
      tag: 'Runbooks',
      role: 'admin',
      body: runbookSpecSchema,
      responses: {
        201: { description: 'created', schema: runbookDetailSchema },
        409: { description: 'a runbook of that name already exists' },
      },
      handler: async ({ body, req }) => {
        const result = await createRunbook(body);
        if (!result.created) {
          const since = result.existing
            ? ` (${result.existing.builtin ? 'built-in, ' : ''}created ${result.existing.createdAt.toISOString()})`
            : '';
          throw conflict('Runbook already exists', `runbook ${body.name} already exists${since}`);
        }
        const { runbook } = result;
        await appendAudit({
          action: 'runbook.create',
          ...auditSource(req),
          resource: runbook.name,
          resourceType: KIND,
          namespace: '',
          details: { version: runbook.version, category: runbook.category },
        });
        return {
          status: 201,
          headers: { Location: `${basePath}/runbooks/${encodeURIComponent(runbook.name)}` },
          body: detailView(runbook),
        };
      },
    }),
    route({
      method: 'put',
      path: '/runbooks/{name}',
      summary: 'Replace the spec of a runbook (the name comes from the path)',
      tag: 'Runbooks',
      role: 'admin',
      kind: KIND,
      body: runbookUpdateSchema,
      responses: { 200: { description: 'updated', schema: runbookDetailSchema } },
      handler: async ({ params, body, req }) => {
        const result = await updateRunbook(params.name, body);
        if (!result) throw notFound(KIND, params.name);
        const { before, after, changed } = result;
        await appendAudit({
          action: 'runbook.update',
          ...auditSource(req),
          resource: after.name,
          resourceType: KIND,
          namespace: '',
          details: {
            version: after.version,
            ...(before.version !== after.version && { previousVersion: before.version }),
            category: after.category,
            changed,
          },
        });
        return { body: detailView(after) };
      },
    }),
    route({
      method: 'delete',
      path: '/runbooks/{name}',
      summary: 'Delete a runbook',
      tag: 'Runbooks',
      role: 'admin',
      kind: KIND,
      responses: { 204: { description: 'deleted' } },
      handler: async ({ params, req }) => {
        const deleted = await deleteRunbook(params.name);
        if (!deleted) throw notFound(KIND, params.name);
        await appendAudit({
          action: 'runbook.delete',
          ...auditSource(req),
          resource: deleted.name,
          resourceType: KIND,
          namespace: '',
          details: { version: deleted.version, category: deleted.category, builtin: deleted.builtin },
        });
        return { status: 204 };
      },
    }),
  ];
}
