import { z } from 'zod';
import {
  ACTION_ITEM_PRIORITIES,
  ACTION_ITEM_STATUSES,
  METRIC_PHASES,
  POSTMORTEM_STATES,
  RELATED_POSTMORTEMS,
  ROOT_CAUSE_CATEGORIES,
  type ActionItem,
  type GitCorrelation,
  type MetricSnapshot,
  type PostmortemFeedbackRequest,
  type PostmortemImpact,
  type PostmortemPatch,
  type PostmortemReport,
  type Trending,
} from '../domain/postmortem';
import { sameType } from './type-check';
import { severitySchema } from './vocabulary';

/**
 * Postmortems at the API (DESIGN §9): the report as answered (domain/postmortem.ts builds it),
 * and the bodies of review, close, feedback and edit.
 */

export const postmortemStateSchema = z.enum(POSTMORTEM_STATES);

// ---------------------------------------------------------------------------------------------
// The report (spec: Postmortem report fields)
// ---------------------------------------------------------------------------------------------

const timestamp = z.string().datetime();

export const actionItemSchema = z.object({
  priority: z.enum(ACTION_ITEM_PRIORITIES),
  description: z.string(),
  assignee: z.string().describe("'' until someone takes it"),
  status: z.enum(ACTION_ITEM_STATUSES),
  dueDate: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
});
sameType<z.output<typeof actionItemSchema>, ActionItem>(true);

export const trendingSchema = z.object({
  occurrenceCount: z.number().int().describe('earlier incidents on the same resource or runbook category'),
  windowDays: z.number().int(),
  relatedPostMortems: z.array(z.string()).describe(`the most recent ${RELATED_POSTMORTEMS}, oldest first`),
  pattern: z.string().describe("'' when nothing recurred"),
});
sameType<z.output<typeof trendingSchema>, Trending>(true);

const nullableCount = (what: string) =>
  z
    .number()
    .int()
    .min(0)
    .nullable()
    .describe(`${what}; null when no source measured it (dataNotes says why), never 0 for unknown`);

export const impactSchema = z.object({
  usersAffected: nullableCount('users affected, as an operator or a connected source reports it'),
  requestsAffected: z.string().describe("'' unless an operator sets it"),
  revenueImpact: z.string().describe("'' unless an operator sets it"),
  slosBreached: z.array(z.string()),
  podsAffected: nullableCount(
    "distinct failing pods named by the evidence (a few at most) and the incident's signals: a lower bound",
  ),
  replicasAffected: nullableCount(
    "the most replicas unavailable at once (desired − available), from the resource's availability samples",
  ),
  unavailableReplicaMinutes: z
    .number()
    .min(0)
    .nullable()
    .describe(
      'unavailable replicas integrated over detection → resolution, in minutes (one decimal), from availability samples; null without samples',
    ),
});
sameType<z.output<typeof impactSchema>, PostmortemImpact>(true);

export const metricSnapshotSchema = z.object({
  name: z.string().describe('`<Kind>/<name> availableReplicas` for availability samples'),
  value: z.string().describe('`available/desired` for availableReplicas'),
  timestamp,
  phase: z
    .enum(METRIC_PHASES)
    .describe('before: the state at detection; during: the lowest while open; after: the last at or after resolution'),
});
sameType<z.output<typeof metricSnapshotSchema>, MetricSnapshot>(true);

export const gitCorrelationSchema = z.object({
  commitSHA: z.string().describe("a revision or sha the change's GitOps/release source names; '' when it names none"),
  commitMessage: z.string().describe("the suspected change's summary"),
  author: z.string().describe('the field manager that made the change, or its change-cause'),
  timestamp: z.string().describe("RFC 3339: when the change reached the cluster; '' without a suspected change"),
  confidence: z.number().min(0).max(1).describe('0 only without a suspected change (reason says why)'),
  filesChanged: z.array(z.string()).describe('[] (the change record does not know files)'),
  change: z.string().describe("the suspected change's id in the change record; '' without one"),
  reason: z.string().describe('why this confidence, or why no change is suspected'),
});
sameType<z.output<typeof gitCorrelationSchema>, GitCorrelation>(true);

export const postmortemReportSchema = z.object({
  title: z.string(),
  severity: severitySchema,
  duration: z.string().describe('Go duration from detection to resolution'),
  detectedAt: timestamp,
  resolvedAt: timestamp,
  summary: z.string(),
  impact: impactSchema,
  rootCause: z.object({
    description: z.string(),
    category: z.union([z.enum(ROOT_CAUSE_CATEGORIES), z.literal('')]),
    confidence: z.number().min(0).max(1),
  }),
  timeline: z.array(z.object({ time: timestamp, event: z.string() })),
  remediationApplied: z.object({ runbook: z.string(), steps: z.array(z.string()), result: z.string() }),
  actionItems: z.array(actionItemSchema),
  lessonsLearned: z.array(z.string()),
  metricSnapshots: z
    .array(metricSnapshotSchema)
    .describe('from real sources only (availability samples); [] otherwise, and dataNotes says why'),
  blastRadius: z.array(
    z.object({
      resource: z.object({ kind: z.string(), name: z.string(), namespace: z.string() }),
      impact: z.string(),
      severity: severitySchema,
    }),
  ),
  gitCorrelation: gitCorrelationSchema,
  trending: trendingSchema,
  gitOpsContext: z.string(),
  logAnalysisSummary: z.string(),
  cascadeChain: z.array(z.string()).describe('related incidents and this one, in detection order'),
  dataNotes: z
    .array(z.string())
    .describe(
      'why a field is empty or null: one note per field, starting with its path and a colon (`impact.usersAffected: …`); an edit that fills the field drops its notes',
    ),
});
sameType<z.output<typeof postmortemReportSchema>, PostmortemReport>(true);

// ---------------------------------------------------------------------------------------------
// Requests (review, close, feedback)
// ---------------------------------------------------------------------------------------------

/** Body of review and close: the reviewer is recorded as given (the audit user is the token's). */
export const postmortemReviewSchema = z
  .object({
    reviewer: z.string().trim().min(1).max(200),
    notes: z.string().max(20_000).default(''),
  })
  .strict();
export type PostmortemReviewRequest = z.output<typeof postmortemReviewSchema>;

export const postmortemFeedbackSchema = z
  .object({
    overrideRootCause: z.string().max(4000).optional(),
    remediationAccuracy: z.number().int().min(1).max(5).optional(),
    comments: z.string().max(20_000).optional(),
  })
  .strict()
  .refine((f) => Object.values(f).some((v) => v !== undefined), {
    message: 'give at least one of overrideRootCause, remediationAccuracy, comments',
  });
sameType<z.output<typeof postmortemFeedbackSchema>, PostmortemFeedbackRequest>(true);

// ---------------------------------------------------------------------------------------------
// Edit (PATCH): a partial report; unknown keys are refused
// ---------------------------------------------------------------------------------------------

const TEXT_MAX = 20_000;
const LINE_MAX = 4000;
const LIST_MAX = 200;

/** Any RFC 3339 offset is accepted; stored in UTC like every report timestamp. */
const requestTimestamp = z
  .string()
  .datetime({ offset: true, message: 'must be an RFC 3339 timestamp' })
  .transform((v) => new Date(v).toISOString());

const line = z.string().max(LINE_MAX);
const lines = z.array(line).max(LIST_MAX);

export const postmortemPatchSchema = z
  .object({
    title: z.string().min(1).max(500),
    summary: z.string().max(TEXT_MAX),
    impact: z
      .object({
        usersAffected: z.number().int().min(0).nullable(),
        requestsAffected: line,
        revenueImpact: line,
        slosBreached: lines,
        podsAffected: z.number().int().min(0).nullable(),
        replicasAffected: z.number().int().min(0).nullable(),
        unavailableReplicaMinutes: z.number().min(0).nullable(),
      })
      .partial()
      .strict(),
    rootCause: z
      .object({
        description: z.string().max(TEXT_MAX),
        category: z.union([z.enum(ROOT_CAUSE_CATEGORIES), z.literal('')]),
      })
      .partial()
      .strict(),
    actionItems: z
      .array(
        actionItemSchema
          .extend({
            description: z.string().max(LINE_MAX),
            assignee: z.string().max(200),
            // ASCII digits: a JSON Schema `\d` also matches other scripts' digits.
            dueDate: z
              .string()
              .regex(/^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$/, 'must be a date yyyy-mm-dd'),
          })
          .strict(),
      )
      .max(LIST_MAX)
      .describe('replaces the list'),
    lessonsLearned: lines.describe('replaces the list'),
    gitCorrelation: z
      .object({
        commitSHA: z.string().max(200),
        commitMessage: z.string().max(TEXT_MAX),
        author: z.string().max(500),
        timestamp: z.union([requestTimestamp, z.literal('')]),
        confidence: z.number().min(0).max(1),
        filesChanged: lines,
        change: z.string().max(500),
        reason: z.string().max(LINE_MAX),
      })
      .partial()
      .strict(),
    metricSnapshots: z
      .array(
        z
          .object({
            name: z.string().max(500),
            value: z.string().max(500),
            timestamp: requestTimestamp,
            phase: z.enum(METRIC_PHASES),
          })
          .strict(),
      )
      .max(LIST_MAX)
      .describe('replaces the list'),
  })
  .partial()
  .strict();
sameType<z.output<typeof postmortemPatchSchema>, PostmortemPatch>(true);
