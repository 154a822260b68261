import { InsightModel, type InsightDoc } from './models';
import { findPage, type Page } from './pagination';

const NO_ID = { _id: 0 } as const;

/** Exactly one per incident (unique `issueRef`); written once by the incident's analysis. */
export type InsightRecord = InsightDoc;

/** The insight of an incident, if its analysis has stored one. */
export async function getInsightByIncident(incident: string): Promise<InsightRecord | undefined> {
  return (await InsightModel.findOne({ issueRef: incident }, NO_ID).lean<InsightRecord>()) ?? undefined;
}

/**
 * Stores the incident's insight unless one is there already (a retried analysis keeps the
 * first); returns the one that holds.
 */
export async function storeInsightOnce(insight: InsightRecord): Promise<InsightRecord> {
  const held = await InsightModel.findOneAndUpdate(
    { issueRef: insight.issueRef },
    { $setOnInsert: insight },
    { upsert: true, returnDocument: 'after', projection: NO_ID },
  ).lean<InsightRecord>();
  if (!held) throw new Error(`the insight of ${insight.issueRef} was not stored`);
  return held;
}

export interface InsightFilter {
  namespace?: string;
  incident?: string;
}

/** What the list (api/views.ts insightView) shows: all but the internals an analysis retry reads. */
const LIST_FIELDS = { _id: 0, rootCause: 0, relatedEvents: 0, recommendation: 0, fallbackReason: 0 };

/** One page of insights, newest first. */
export function listInsights(filter: InsightFilter, page: number, pageSize: number): Promise<Page<InsightRecord>> {
  const query: Record<string, unknown> = {};
  if (filter.namespace) query.namespace = filter.namespace;
  if (filter.incident) query.issueRef = filter.incident;
  return findPage<InsightRecord>(InsightModel, query, { creationTimestamp: -1, name: -1 }, page, pageSize, LIST_FIELDS);
}
