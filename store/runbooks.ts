import { canonicalJson } from '../domain/audit';
import type { RunbookSpec } from '../domain/runbook';
import type { RunbookUpdate } from '../contracts/runbooks';
import type { RunbookCategory, Severity } from '../domain/vocabulary';
import { BUILTIN_RUNBOOKS } from '../contracts/runbooks';
import { RETIRED_RUNBOOKS } from '../domain/runbook-library';
import { isDuplicateKey } from './connection';
import { RunbookModel } from './models';
import { findPage, type Page } from './pagination';

/** A stored runbook: the validated spec plus provenance, timestamps and usage statistics. */
export interface RunbookRecord extends RunbookSpec {
  builtin: boolean;
  createdAt: Date;
  updatedAt: Date;
  executions: number;
  successes: number;
  /** Sum of the execution times of every recorded run, in milliseconds. */
  totalExecutionMs: number;
  /** Absent until the runbook has run once. */
  lastUsed?: Date;
  /** Proposed by Foghorn (from a successful agentic plan): never matched until an admin updates it. */
  reviewPending?: boolean;
  /** The plan it was proposed from. */
  proposedBy?: string;
}

const RECORD_FIELDS = { _id: 0 } as const;

const NEW_STATS = { executions: 0, successes: 0, totalExecutionMs: 0 } as const;

export interface SeedResult {
  /** Built-ins written by this call. */
  inserted: string[];
  /** Built-ins that were already there (possibly edited by an admin; left untouched). */
  existing: string[];
}

/**
 * Makes sure every built-in runbook exists; run at every start. Idempotent: an upsert by name
 * with `$setOnInsert` only, so an admin's edit to a built-in is never overwritten and no
 * duplicate appears. When two processes start at once, the unique `name` index makes one of two
 * racing upserts fail with a duplicate key — that runbook then exists, which is all we want.
 */
export async function seedBuiltinRunbooks(now: Date = new Date()): Promise<SeedResult> {
  const outcomes = await Promise.all(
    BUILTIN_RUNBOOKS.map(async ({ name, ...spec }) => {
      try {
        const res = await RunbookModel.updateOne(
          { name },
          { $setOnInsert: { ...spec, builtin: true, createdAt: now, updatedAt: now, ...NEW_STATS } },
          { upsert: true },
        );
        return { name, inserted: res.upsertedCount > 0 };
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
        return { name, inserted: false };
      }
    }),
  );
  // A retired built-in no admin edited (its updatedAt is its createdAt) goes; an edited one stays theirs.
  await RunbookModel.deleteMany({
    name: { $in: RETIRED_RUNBOOKS },
    builtin: true,
    $expr: { $eq: ['$updatedAt', '$createdAt'] },
  });
  return {
    inserted: outcomes.filter((o) => o.inserted).map((o) => o.name),
    existing: outcomes.filter((o) => !o.inserted).map((o) => o.name),
  };
}

export interface RunbookFilter {
  category?: RunbookCategory;
  /** Runbooks that target this incident severity. */
  severity?: Severity;
  automated?: boolean;
}

/** One page of runbooks matching every given filter, sorted by name. */
export function listRunbooks(filter: RunbookFilter, page: number, pageSize: number): Promise<Page<RunbookRecord>> {
  const query: Record<string, unknown> = {};
  if (filter.category !== undefined) query.category = filter.category;
  if (filter.severity !== undefined) query.severity = filter.severity; // matches an element of the array
  if (filter.automated !== undefined) query.automated = filter.automated;
  return findPage<RunbookRecord>(RunbookModel, query, { name: 1 }, page, pageSize, RECORD_FIELDS);
}

/** Every runbook of a category, by name (the candidates for an incident's analysis and match). */
export function runbooksInCategory(category: RunbookCategory): Promise<RunbookRecord[]> {
  return RunbookModel.find({ category, reviewPending: { $ne: true } }, RECORD_FIELDS)
    .sort({ name: 1 })
    .lean<RunbookRecord[]>();
}

export async function getRunbook(name: string): Promise<RunbookRecord | undefined> {
  return (await RunbookModel.findOne({ name }, RECORD_FIELDS).lean<RunbookRecord>()) ?? undefined;
}

export type CreateRunbookResult =
  | { created: true; runbook: RunbookRecord }
  /** The name is taken; `existing` is that runbook (absent if it was deleted in the meantime). */
  | { created: false; existing?: RunbookRecord };

/** Creates a runbook from a validated spec; the unique name index settles concurrent creates. */
export async function createRunbook(
  spec: RunbookSpec,
  now: Date = new Date(),
  proposal?: { reviewPending: true; proposedBy: string },
): Promise<CreateRunbookResult> {
  const runbook: RunbookRecord = { ...spec, builtin: false, createdAt: now, updatedAt: now, ...NEW_STATS, ...proposal };
  try {
    await RunbookModel.create(runbook);
    return { created: true, runbook };
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
    return { created: false, existing: await getRunbook(spec.name) };
  }
}

export interface RunbookUpdateResult {
  before: RunbookRecord;
  after: RunbookRecord;
  /** Top-level spec fields whose value differs from before. */
  changed: (keyof RunbookUpdate)[];
}

/**
 * Replaces the spec of runbook `name` (PUT semantics: fields left out of the body take their
 * defaults). Statistics, `builtin` and `createdAt` are kept. Undefined when there is no such runbook.
 */
export async function updateRunbook(
  name: string,
  update: RunbookUpdate,
  now: Date = new Date(),
): Promise<RunbookUpdateResult | undefined> {
  // One atomic read-modify: the `before` image is exactly what this write replaced.
  const before = await RunbookModel.findOneAndUpdate(
    { name },
    // An admin's update is the review of a proposed runbook: from now on it can match.
    { $set: { ...update, updatedAt: now, reviewPending: false } },
    { returnDocument: 'before', projection: RECORD_FIELDS, lean: true },
  ).lean<RunbookRecord>();
  if (!before) return undefined;
  const changed = (Object.keys(update) as (keyof RunbookUpdate)[]).filter(
    (key) => canonicalJson(before[key]) !== canonicalJson(update[key]),
  );
  return { before, after: { ...before, ...update, updatedAt: now }, changed };
}

/** Deletes runbook `name`; returns what was deleted, or undefined when there was no such runbook. */
export async function deleteRunbook(name: string): Promise<RunbookRecord | undefined> {
  return (
    (await RunbookModel.findOneAndDelete({ name }, { projection: RECORD_FIELDS }).lean<RunbookRecord>()) ?? undefined
  );
}

/**
 * Adds one run to a runbook's usage statistics (for the remediation activities). Atomic `$inc`,
 * so concurrent runs all count; `lastUsed` only moves forward. False when there is no such runbook.
 */
export async function recordRunbookExecution(
  name: string,
  run: { success: boolean; durationMs: number; at?: Date },
): Promise<boolean> {
  if (!Number.isFinite(run.durationMs) || run.durationMs < 0) {
    throw new RangeError(`durationMs must be a finite number >= 0, got ${run.durationMs}`);
  }
  const res = await RunbookModel.updateOne(
    { name },
    {
      $inc: { executions: 1, successes: run.success ? 1 : 0, totalExecutionMs: run.durationMs },
      $max: { lastUsed: run.at ?? new Date() },
    },
  );
  return res.matchedCount > 0;
}
