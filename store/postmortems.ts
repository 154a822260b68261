import type { Severity } from '../domain/incident';
import {
  currentReport,
  POSTMORTEM_AUTHOR,
  reportChanges,
  rootCauseCategory,
  type EarlierIncidents,
  RELATED_POSTMORTEMS,
  type PostmortemFeedback,
  type PostmortemFeedbackRequest,
  type PostmortemPatch,
  type PostmortemReport,
  type ReportFieldChange,
  type PostmortemState,
  type RelatedIncident,
} from '../domain/postmortem';
import { type PostmortemReviewRequest } from '../contracts/postmortems';
import { categoryForSignal, SIGNAL_TYPES } from '../domain/vocabulary';
import { isDuplicateKey } from './connection';
import type { IncidentRecord } from './incidents';
import { IncidentModel, PostmortemModel } from './models';
import { allocateName } from './names';
import { findPage, type Page } from './pagination';

/** A postmortem as stored (lean). */
export interface PostmortemRecord {
  name: string;
  incident: string;
  namespace: string;
  state: PostmortemState;
  author: string;
  reviewer?: string;
  reviewStartedAt?: Date;
  closedAt?: Date;
  notes?: string;
  createdAt: Date;
  report: PostmortemReport;
  feedback?: PostmortemFeedback;
  /** The token user of the last edit that changed the report, and when. */
  lastEditedBy?: string;
  lastEditedAt?: Date;
}

/** What a list shows: everything but the report, plus its title and severity. */
export type PostmortemSummary = Omit<PostmortemRecord, 'report'> & {
  report: Pick<PostmortemReport, 'title' | 'severity'>;
};

const NO_ID = { _id: 0 } as const;

/** A stored postmortem with its report in today's shape (a legacy report's placeholders read as unknown). */
const current = (p: PostmortemRecord | null): PostmortemRecord | undefined =>
  p ? { ...p, report: currentReport(p.report) } : undefined;

export async function getPostmortem(name: string, namespace?: string): Promise<PostmortemRecord | undefined> {
  return current(
    await PostmortemModel.findOne(
      { name, ...(namespace !== undefined && { namespace }) },
      NO_ID,
    ).lean<PostmortemRecord>(),
  );
}

export async function getPostmortemByIncident(incident: string): Promise<PostmortemRecord | undefined> {
  return current(await PostmortemModel.findOne({ incident }, NO_ID).lean<PostmortemRecord>());
}

/**
 * Writes the incident's one postmortem, Open and authored by Foghorn. Idempotent: when the
 * incident already has one (a retried activity, a second call, a concurrent writer — the unique
 * `incident` index decides) that one's name comes back and nothing is written. The caller has
 * looked for one before building the report, so this does not look again first.
 */
export async function createPostmortemOnce(input: {
  incident: string;
  namespace: string;
  report: PostmortemReport;
  at: Date;
}): Promise<{ name: string; created: boolean }> {
  const name = await allocateName('PM', input.at);
  try {
    await PostmortemModel.create({
      name,
      incident: input.incident,
      namespace: input.namespace,
      state: 'Open',
      author: POSTMORTEM_AUTHOR,
      createdAt: input.at,
      report: input.report,
    });
    return { name, created: true };
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
    const raced = await getPostmortemByIncident(input.incident);
    if (!raced) throw err;
    return { name: raced.name, created: false };
  }
}

export interface PostmortemFilter {
  state?: PostmortemState;
  incident?: string;
}

/** One page of postmortems, newest first (the name breaks ties), without the bulky report. */
export function listPostmortems(
  filter: PostmortemFilter,
  page: number,
  pageSize: number,
): Promise<Page<PostmortemSummary>> {
  const query: Record<string, unknown> = {};
  if (filter.state) query.state = filter.state;
  if (filter.incident) query.incident = filter.incident;
  return findPage<PostmortemSummary>(PostmortemModel, query, { createdAt: -1, name: -1 }, page, pageSize, {
    _id: 0,
    name: 1,
    incident: 1,
    namespace: 1,
    state: 1,
    author: 1,
    reviewer: 1,
    reviewStartedAt: 1,
    closedAt: 1,
    createdAt: 1,
    'report.title': 1,
    'report.severity': 1,
  });
}

/** The outcome of a review, close or feedback: the postmortem after it, or why it was refused. */
export type PostmortemChange =
  | { outcome: 'done'; postmortem: PostmortemRecord; from: PostmortemState }
  | { outcome: 'not-found' }
  | { outcome: 'closed' | 'not-reviewed'; postmortem: PostmortemRecord };

const MAX_TRIES = 10;

/**
 * Applies the first move whose `from` state the postmortem is in, as a conditional update (the
 * state is part of the filter, so a concurrent move makes ours match nothing and we re-read).
 * `refuse` names why the current state allows none of the moves.
 */
async function move(
  name: string,
  namespace: string | undefined,
  moves: { from: PostmortemState; set: Record<string, unknown> }[],
  refuse: (current: PostmortemRecord) => 'closed' | 'not-reviewed',
): Promise<PostmortemChange> {
  const where = { name, ...(namespace !== undefined && { namespace }) };
  for (let attempt = 0; attempt < MAX_TRIES; attempt++) {
    for (const m of moves) {
      const res = await PostmortemModel.updateOne({ ...where, state: m.from }, { $set: m.set });
      if (res.matchedCount > 0) return { outcome: 'done', postmortem: (await getPostmortem(name))!, from: m.from };
    }
    const current = await getPostmortem(name, namespace);
    if (!current) return { outcome: 'not-found' };
    if (!moves.some((m) => m.from === current.state)) return { outcome: refuse(current), postmortem: current };
    // It moved between our update and our read: try again against its new state.
  }
  throw new Error(`postmortem ${name} kept changing under us`);
}

/**
 * Open → InReview (reviewer, notes, reviewStartedAt recorded); InReview → InReview updates the
 * reviewer and notes and keeps when the review started. Refused from Closed.
 */
export function reviewPostmortem(
  name: string,
  request: PostmortemReviewRequest,
  at: Date,
  namespace?: string,
): Promise<PostmortemChange> {
  const { reviewer, notes } = request;
  return move(
    name,
    namespace,
    [
      { from: 'Open', set: { state: 'InReview', reviewer, notes, reviewStartedAt: at } },
      { from: 'InReview', set: { reviewer, notes } },
    ],
    () => 'closed',
  );
}

/** InReview → Closed (reviewer = who closed it, closedAt, notes). Refused from Open and Closed. */
export function closePostmortem(
  name: string,
  request: PostmortemReviewRequest,
  at: Date,
  namespace?: string,
): Promise<PostmortemChange> {
  const { reviewer, notes } = request;
  return move(
    name,
    namespace,
    [{ from: 'InReview', set: { state: 'Closed', reviewer, notes, closedAt: at } }],
    (current) => (current.state === 'Closed' ? 'closed' : 'not-reviewed'),
  );
}

/** Records feedback on the AI's report in any state; the latest feedback replaces the previous. */
export async function recordFeedback(
  name: string,
  feedback: PostmortemFeedbackRequest,
  by: { user: string; at: Date },
  namespace?: string,
): Promise<PostmortemChange> {
  const where = { name, ...(namespace !== undefined && { namespace }) };
  const stored: PostmortemFeedback = {
    ...(feedback.overrideRootCause !== undefined && { overrideRootCause: feedback.overrideRootCause }),
    ...(feedback.remediationAccuracy !== undefined && { remediationAccuracy: feedback.remediationAccuracy }),
    ...(feedback.comments !== undefined && { comments: feedback.comments }),
    providedBy: by.user,
    providedAt: by.at,
  };
  const before = await getPostmortem(name, namespace);
  if (!before) return { outcome: 'not-found' };
  const res = await PostmortemModel.updateOne(where, { $set: { feedback: stored } });
  if (res.matchedCount === 0) return { outcome: 'not-found' };
  return { outcome: 'done', postmortem: { ...before, feedback: stored }, from: before.state };
}

/** The outcome of an edit: the postmortem after it with what changed ([] for none), or why it was refused. */
export type PostmortemEdit =
  | { outcome: 'done'; postmortem: PostmortemRecord; changes: ReportFieldChange[] }
  | { outcome: 'not-found' }
  | { outcome: 'closed'; postmortem: PostmortemRecord };

const EDITABLE_STATES: PostmortemState[] = ['Open', 'InReview'];

/**
 * Applies an operator's corrections to the report of an Open or InReview postmortem. Field by
 * field (`$set` of `report.<path>`), and conditional: the filter names the state and the value
 * each changed field had when read, so a concurrent edit of other fields is kept, a concurrent
 * edit of the same field makes this one re-read and re-compare (the audit's `from` stays true),
 * and a concurrent close wins (then `closed`). Nothing changes: nothing is written.
 */
export async function editPostmortem(
  name: string,
  patch: PostmortemPatch,
  by: { user: string; at: Date },
  namespace?: string,
): Promise<PostmortemEdit> {
  const where = { name, ...(namespace !== undefined && { namespace }) };
  for (let attempt = 0; attempt < MAX_TRIES; attempt++) {
    const stored = await PostmortemModel.findOne(where, NO_ID).lean<PostmortemRecord>();
    if (!stored) return { outcome: 'not-found' };
    const pm = current(stored)!;
    if (pm.state === 'Closed') return { outcome: 'closed', postmortem: pm };
    if (!Array.isArray((stored.report as { dataNotes?: unknown }).dataNotes)) {
      // A legacy report is written in today's shape first (only while it still is legacy), so
      // the field-level update below lands on the fields the reader shows.
      await PostmortemModel.updateOne(
        { ...where, 'report.dataNotes': { $exists: false } },
        { $set: { report: pm.report } },
      );
      continue;
    }
    const changes = reportChanges(pm.report, patch);
    if (changes.length === 0) return { outcome: 'done', postmortem: pm, changes };
    const unchanged = Object.fromEntries(changes.map((c) => [`report.${c.field}`, c.from]));
    const set = Object.fromEntries(changes.map((c) => [`report.${c.field}`, c.to]));
    // The driver's own update: Mongoose would cast a list in the filter to `$in` (an empty one
    // matching nothing), and the filter must compare whole values.
    const res = await PostmortemModel.collection.updateOne(
      { ...where, state: { $in: EDITABLE_STATES }, ...unchanged },
      { $set: { ...set, lastEditedBy: by.user, lastEditedAt: by.at } },
    );
    if (res.matchedCount > 0) return { outcome: 'done', postmortem: (await getPostmortem(name, namespace))!, changes };
    // Closed, or a field we change was changed since we read it: read again.
  }
  throw new Error(`postmortem ${name} kept changing under us`);
}

// ---------------------------------------------------------------------------------------------
// Facts for the report
// ---------------------------------------------------------------------------------------------

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * How many incidents were detected in the `windowDays` before this one on the same resource, and
 * how many of the same runbook category on other resources; with the postmortems of the most
 * recent {@link RELATED_POSTMORTEMS} of them, oldest first. Counted, not fetched: in a storm the
 * window holds thousands, and each report named every one of their postmortems (issue 14).
 */
export async function trendingIncidents(
  incident: Pick<IncidentRecord, 'resourceKey' | 'signalType' | 'detectedAt'>,
  windowDays: number,
): Promise<EarlierIncidents> {
  const detectedAt = { $gte: new Date(incident.detectedAt.getTime() - windowDays * DAY_MS), $lt: incident.detectedAt };
  const category = rootCauseCategory(incident.signalType);
  const sameCategory = category ? SIGNAL_TYPES.filter((t) => categoryForSignal(t) === category) : [];
  const inCategory = { signalType: { $in: sameCategory } };
  const elsewhere = { ...inCategory, resourceKey: { $ne: incident.resourceKey }, detectedAt };
  const [onResource, otherResources, recent] = await Promise.all([
    IncidentModel.countDocuments({ resourceKey: incident.resourceKey, detectedAt }),
    sameCategory.length ? IncidentModel.countDocuments(elsewhere) : 0,
    IncidentModel.find(
      {
        detectedAt,
        postmortem: { $nin: ['', null] },
        $or: [{ resourceKey: incident.resourceKey }, ...(sameCategory.length ? [inCategory] : [])],
      },
      { _id: 0, postmortem: 1 },
    )
      .sort({ detectedAt: -1, name: -1 })
      .limit(RELATED_POSTMORTEMS)
      .lean<{ postmortem: string }[]>(),
  ]);
  return { onResource, elsewhere: otherResources, postmortems: recent.map((r) => r.postmortem).reverse() };
}

/** Other incidents in the namespace (any state) detected within `windowMs` of this one, oldest first. */
export async function incidentsNear(
  incident: Pick<IncidentRecord, 'name' | 'namespace' | 'detectedAt'>,
  windowMs: number,
  limit = 50,
): Promise<RelatedIncident[]> {
  const at = incident.detectedAt.getTime();
  return IncidentModel.find(
    {
      namespace: incident.namespace,
      name: { $ne: incident.name },
      detectedAt: { $gte: new Date(at - windowMs), $lte: new Date(at + windowMs) },
    },
    { _id: 0, name: 1, resource: 1, signalType: 1, severity: 1, namespace: 1, detectedAt: 1 },
  )
    .sort({ detectedAt: 1, name: 1 })
    .limit(limit)
    .lean<(Omit<RelatedIncident, 'severity'> & { severity: Severity })[]>();
}
