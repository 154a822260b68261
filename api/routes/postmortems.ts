import { z } from 'zod';
import {
  postmortemFeedbackSchema,
  postmortemPatchSchema,
  postmortemReportSchema,
  postmortemReviewSchema,
  postmortemStateSchema,
} from '../../contracts/postmortems';
import { API_VERSION, listEnvelope, PAGE_SIZE } from '../../domain/envelope';
import { listSchema, paginationQuery } from '../../contracts/envelope';
import { appendAudit } from '../../store/audit';
import {
  closePostmortem,
  editPostmortem,
  getPostmortem,
  listPostmortems,
  recordFeedback,
  reviewPostmortem,
  type PostmortemChange,
  type PostmortemRecord,
  type PostmortemSummary,
} from '../../store/postmortems';
import { auditSource } from '../auth';
import { conflict, notFound } from '../errors';
import { nonBlank, route } from '../route';
import { iso } from '../views';

const KIND = 'PostMortem';

// ---------------------------------------------------------------------------------------------
// Response shapes
// ---------------------------------------------------------------------------------------------

const timestamp = z.string().datetime();

const listItemSchema = z.object({
  name: z.string(),
  namespace: z.string(),
  incident: z.string(),
  state: postmortemStateSchema,
  title: z.string(),
  severity: z.string(),
  author: z.string(),
  createdAt: timestamp,
  reviewedBy: z.string().optional().describe('absent until reviewed'),
});

const feedbackSchema = z.object({
  overrideRootCause: z.string().optional(),
  remediationAccuracy: z.number().int().min(1).max(5).optional(),
  comments: z.string().optional(),
  providedBy: z.string().describe("the token's user"),
  providedAt: timestamp,
});

const detailSchema = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal(KIND),
  metadata: z.object({
    name: z.string(),
    namespace: z.string(),
    incident: z.string(),
    createdAt: timestamp,
    author: z.string(),
    reviewedBy: z.string().describe("'' until reviewed"),
    lastEditedBy: z
      .string()
      .optional()
      .describe('the token user of the last edit that changed the report; absent until then'),
    lastEditedAt: timestamp.optional().describe('when the report was last edited; absent until then'),
  }),
  status: z.object({
    state: postmortemStateSchema,
    reviewer: z.string().optional(),
    reviewStartedAt: timestamp.optional(),
    closedAt: timestamp.optional(),
    notes: z.string().optional(),
  }),
  report: postmortemReportSchema,
  feedback: feedbackSchema.optional(),
});

const afterReviewSchema = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal(KIND),
  metadata: z.object({ name: z.string(), namespace: z.string() }),
  status: z.object({
    state: postmortemStateSchema,
    reviewer: z.string(),
    reviewStartedAt: timestamp,
    notes: z.string(),
  }),
});

const afterCloseSchema = afterReviewSchema.extend({
  status: z.object({ state: postmortemStateSchema, reviewer: z.string(), closedAt: timestamp, notes: z.string() }),
});

const feedbackResponseSchema = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal(KIND),
  metadata: z.object({ name: z.string(), namespace: z.string() }),
  feedback: feedbackSchema,
});

// ---------------------------------------------------------------------------------------------
// Views
// ---------------------------------------------------------------------------------------------

function listItemView(p: PostmortemSummary) {
  return {
    name: p.name,
    namespace: p.namespace,
    incident: p.incident,
    state: p.state,
    title: p.report?.title ?? '',
    severity: p.report?.severity ?? '',
    author: p.author,
    createdAt: p.createdAt.toISOString(),
    ...(p.reviewer !== undefined && { reviewedBy: p.reviewer }),
  };
}

function feedbackView(f: NonNullable<PostmortemRecord['feedback']>) {
  return { ...f, providedAt: f.providedAt.toISOString() };
}

function detailView(p: PostmortemRecord) {
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: {
      name: p.name,
      namespace: p.namespace,
      incident: p.incident,
      createdAt: p.createdAt.toISOString(),
      author: p.author,
      reviewedBy: p.reviewer ?? '',
      ...(p.lastEditedBy !== undefined && { lastEditedBy: p.lastEditedBy }),
      ...(p.lastEditedAt && { lastEditedAt: iso(p.lastEditedAt) }),
    },
    status: {
      state: p.state,
      ...(p.reviewer !== undefined && { reviewer: p.reviewer }),
      ...(p.reviewStartedAt && { reviewStartedAt: iso(p.reviewStartedAt) }),
      ...(p.closedAt && { closedAt: iso(p.closedAt) }),
      ...(p.notes !== undefined && { notes: p.notes }),
    },
    report: p.report,
    ...(p.feedback && { feedback: feedbackView(p.feedback) }),
  };
}

// ---------------------------------------------------------------------------------------------
// Routes
// ---------------------------------------------------------------------------------------------

const listQuery = paginationQuery(PAGE_SIZE.max, PAGE_SIZE.default).extend({
  state: postmortemStateSchema.optional(),
  incident: z.string().min(1).optional(),
});

/** When given, the postmortem must live in this namespace (otherwise 404). */
const namespaceQuery = z.object({ namespace: z.string().min(1).optional() });

const alreadyClosed = (p: PostmortemRecord) =>
  conflict('PostMortem already closed', `closed by ${p.reviewer ?? 'unknown'} at ${iso(p.closedAt) ?? 'unknown time'}`);

/** The change's postmortem, or the API error that the refusal maps to. */
function applied(change: PostmortemChange, name: string): PostmortemRecord {
  switch (change.outcome) {
    case 'done':
      return change.postmortem;
    case 'not-found':
      throw notFound(KIND, name);
    case 'closed':
      throw alreadyClosed(change.postmortem);
    case 'not-reviewed':
      throw conflict(
        'PostMortem not reviewed',
        `postmortem ${name} is ${change.postmortem.state}; review it (POST /postmortems/${name}/review) before closing`,
      );
  }
}

/** The domain's bodies, with what JSON Schema can say of their refinements in the document. */
const reviewBody = postmortemReviewSchema.extend({ reviewer: nonBlank(200) });
const feedbackBody = postmortemFeedbackSchema.openapi({ minProperties: 1 });

const conflictDoc = { description: 'the postmortem is not in a state that allows this' };

/**
 * Postmortems (DESIGN §9): anyone may read them; operators edit, review, close and give
 * feedback. The reviewer in a body is recorded as given; the audit record's user (and the
 * editor) is the token's user.
 */
export function postmortemRoutes() {
  return [
    route({
      method: 'get',
      path: '/postmortems',
      summary: 'List postmortems, newest first',
      tag: 'Postmortems',
      role: 'viewer',
      query: listQuery,
      responses: { 200: { description: 'postmortems', schema: listSchema('PostMortemList', listItemSchema) } },
      handler: async ({ query }) => {
        const { page, pageSize, ...filter } = query;
        const { items, totalCount } = await listPostmortems(filter, page, pageSize);
        return { body: listEnvelope('PostMortemList', items.map(listItemView), totalCount, page, pageSize) };
      },
    }),
    route({
      method: 'get',
      path: '/postmortems/{name}',
      summary: 'Get a postmortem with its full report',
      tag: 'Postmortems',
      role: 'viewer',
      kind: KIND,
      query: namespaceQuery,
      responses: {
        200: { description: 'the postmortem', schema: detailSchema },
      },
      handler: async ({ params, query }) => {
        const pm = await getPostmortem(params.name, query.namespace);
        if (!pm) throw notFound(KIND, params.name);
        return { body: detailView(pm) };
      },
    }),
    route({
      method: 'patch',
      path: '/postmortems/{name}',
      summary:
        'Correct and complete the report of an Open or InReview postmortem: each field given replaces its value (lists as a whole)',
      tag: 'Postmortems',
      role: 'operator',
      kind: KIND,
      query: namespaceQuery,
      body: postmortemPatchSchema,
      responses: {
        200: {
          description:
            'the postmortem after the edit (as GET); one audit record `postmortem.edit` lists each changed field with its previous and new value, none when nothing changed',
          schema: detailSchema,
        },
        409: { description: 'PostMortem already closed: a closed postmortem is not edited' },
      },
      handler: async ({ params, query, body, req }) => {
        const source = auditSource(req);
        const edit = await editPostmortem(params.name, body, { user: source.user, at: new Date() }, query.namespace);
        if (edit.outcome === 'not-found') throw notFound(KIND, params.name);
        if (edit.outcome === 'closed') throw alreadyClosed(edit.postmortem);
        const pm = edit.postmortem;
        if (edit.changes.length > 0) {
          await appendAudit({
            action: 'postmortem.edit',
            ...source,
            resource: pm.name,
            resourceType: KIND,
            namespace: pm.namespace,
            details: { incident: pm.incident, changes: edit.changes },
          });
        }
        return { body: detailView(pm) };
      },
    }),
    route({
      method: 'post',
      path: '/postmortems/{name}/review',
      summary: 'Start (or update) the review of a postmortem: Open or InReview → InReview',
      tag: 'Postmortems',
      role: 'operator',
      kind: KIND,
      query: namespaceQuery,
      body: reviewBody,
      responses: {
        200: { description: 'the postmortem after review', schema: afterReviewSchema },
        409: conflictDoc,
      },
      handler: async ({ params, query, body, req }) => {
        const change = await reviewPostmortem(params.name, body, new Date(), query.namespace);
        const pm = applied(change, params.name);
        await appendAudit({
          action: 'postmortem.review',
          ...auditSource(req),
          resource: pm.name,
          resourceType: KIND,
          namespace: pm.namespace,
          details: {
            reviewer: body.reviewer,
            notes: body.notes,
            incident: pm.incident,
            ...(change.outcome === 'done' && { previousState: change.from }),
          },
        });
        return {
          body: {
            apiVersion: API_VERSION,
            kind: KIND,
            metadata: { name: pm.name, namespace: pm.namespace },
            status: {
              state: pm.state,
              reviewer: pm.reviewer,
              reviewStartedAt: iso(pm.reviewStartedAt),
              notes: pm.notes,
            },
          },
        };
      },
    }),
    route({
      method: 'post',
      path: '/postmortems/{name}/close',
      summary: 'Close a reviewed postmortem: InReview → Closed',
      tag: 'Postmortems',
      role: 'operator',
      kind: KIND,
      query: namespaceQuery,
      body: reviewBody,
      responses: {
        200: { description: 'the postmortem after close', schema: afterCloseSchema },
        409: conflictDoc,
      },
      handler: async ({ params, query, body, req }) => {
        const pm = applied(await closePostmortem(params.name, body, new Date(), query.namespace), params.name);
        await appendAudit({
          action: 'postmortem.close',
          ...auditSource(req),
          resource: pm.name,
          resourceType: KIND,
          namespace: pm.namespace,
          details: { reviewer: body.reviewer, notes: body.notes, incident: pm.incident },
        });
        return {
          body: {
            apiVersion: API_VERSION,
            kind: KIND,
            metadata: { name: pm.name, namespace: pm.namespace },
            status: { state: pm.state, reviewer: pm.reviewer, closedAt: iso(pm.closedAt), notes: pm.notes },
          },
        };
      },
    }),
    route({
      method: 'post',
      path: '/postmortems/{name}/feedback',
      summary: "Give feedback on the AI's report (any state; replaces earlier feedback)",
      tag: 'Postmortems',
      role: 'operator',
      kind: KIND,
      query: namespaceQuery,
      body: feedbackBody,
      responses: {
        200: { description: 'the recorded feedback', schema: feedbackResponseSchema },
      },
      handler: async ({ params, query, body, req }) => {
        const source = auditSource(req);
        const change = await recordFeedback(params.name, body, { user: source.user, at: new Date() }, query.namespace);
        const pm = applied(change, params.name);
        const feedback = feedbackView(pm.feedback!);
        await appendAudit({
          action: 'postmortem.feedback',
          ...source,
          resource: pm.name,
          resourceType: KIND,
          namespace: pm.namespace,
          details: { ...feedback, incident: pm.incident },
        });
        return {
          body: { apiVersion: API_VERSION, kind: KIND, metadata: { name: pm.name, namespace: pm.namespace }, feedback },
        };
      },
    }),
  ];
}
