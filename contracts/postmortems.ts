import { z } from 'zod';
import {
  ACTION_ITEM_PRIORITIES,
  ACTION_ITEM_STATUSES,
  METRIC_PHASES,
  POSTMORTEM_STATES,
  RELATED_POSTMORTEMS,
  ROOT_CAUSE_CATEGORIES,
  type ActionItem,
  type PostmortemFeedbackRequest,
  type PostmortemReport,
  type Trending,
} from '../domain/postmortem';
import { sameType } from './type-check';
import { severitySchema } from './vocabulary';

/**
 * Postmortems at the API (DESIGN §9): the report as answered (domain/postmortem.ts builds it),
 * and the bodies of review, close and feedback.
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

export const postmortemReportSchema = z.object({
  title: z.string(),
  severity: severitySchema,
  duration: z.string().describe('Go duration from detection to resolution'),
  detectedAt: timestamp,
  resolvedAt: timestamp,
  summary: z.string(),
  impact: z.object({
    usersAffected: z.number().int(),
    requestsAffected: z.string(),
    revenueImpact: z.string(),
    slosBreached: z.array(z.string()),
  }),
  rootCause: z.object({
    description: z.string(),
    category: z.union([z.enum(ROOT_CAUSE_CATEGORIES), z.literal('')]),
    confidence: z.number().min(0).max(1),
  }),
  timeline: z.array(z.object({ time: timestamp, event: z.string() })),
  remediationApplied: z.object({ runbook: z.string(), steps: z.array(z.string()), result: z.string() }),
  actionItems: z.array(actionItemSchema),
  lessonsLearned: z.array(z.string()),
  metricSnapshots: z.array(z.object({ name: z.string(), value: z.string(), timestamp, phase: z.enum(METRIC_PHASES) })),
  blastRadius: z.array(
    z.object({
      resource: z.object({ kind: z.string(), name: z.string(), namespace: z.string() }),
      impact: z.string(),
      severity: severitySchema,
    }),
  ),
  gitCorrelation: z.object({
    commitSHA: z.string(),
    commitMessage: z.string(),
    author: z.string(),
    timestamp: z.string().describe("RFC 3339, or '' without a correlated commit"),
    confidence: z.number().min(0).max(1),
    filesChanged: z.array(z.string()),
  }),
  trending: trendingSchema,
  gitOpsContext: z.string(),
  logAnalysisSummary: z.string(),
  cascadeChain: z.array(z.string()).describe('related incidents and this one, in detection order'),
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
