import { Schema, model } from 'mongoose';
import { ACTION_TYPES } from '../../domain/runbook';
import { RESOURCE_KINDS, RUNBOOK_CATEGORIES, SEVERITIES, SIGNAL_TYPES } from '../../domain/vocabulary';

/**
 * Runbooks (collection `runbooks`, unique `name`). The shape is validated by contracts/runbooks.ts
 * before it gets here; this schema only types the stored fields. Timestamps are set by
 * store/runbooks.ts (not Mongoose `timestamps`), so re-seeding a built-in never touches it.
 */

// `type` is a field name here, hence the `{ type: { type: String } }` form.
const stepSchema = new Schema(
  {
    type: { type: String, required: true, enum: ACTION_TYPES },
    params: { type: Schema.Types.Mixed, required: true, default: () => ({}) },
    description: { type: String },
  },
  { _id: false, minimize: false },
);

const runbookSchema = new Schema(
  {
    name: { type: String, required: true, unique: true },
    category: { type: String, required: true, enum: RUNBOOK_CATEGORIES },
    description: { type: String, required: true },
    version: { type: String, required: true },
    automated: { type: Boolean, required: true, default: true },
    approvalRequired: { type: Boolean, required: true, default: false },
    /** The incident severities the runbook targets (multikey index below). */
    severity: { type: [{ type: String, enum: SEVERITIES }], required: true },
    /** Empty lists mean "no restriction" when matching an incident. */
    targets: {
      signalTypes: { type: [{ type: String, enum: SIGNAL_TYPES }], default: [] },
      resourceKinds: { type: [{ type: String, enum: RESOURCE_KINDS }], default: [] },
    },
    /** Ordered: steps run in array order. */
    steps: { type: [stepSchema], required: true },
    maxAttempts: { type: Number, required: true, default: 3 },
    /** Shipped with Foghorn (domain/runbook-library.ts) rather than created over the API. */
    builtin: { type: Boolean, required: true, default: false },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
    // Usage statistics, written by recordRunbookExecution (store/runbooks.ts).
    executions: { type: Number, required: true, default: 0 },
    successes: { type: Number, required: true, default: 0 },
    totalExecutionMs: { type: Number, required: true, default: 0 },
    /** Absent until the runbook has run once. */
    lastUsed: { type: Date },
    /** Proposed from a successful agentic plan: not matched until an admin updates (reviews) it. */
    reviewPending: { type: Boolean },
    proposedBy: { type: String },
    /** Go duration text; absent = FOGHORN_VERIFY_WINDOW. */
    verificationWindow: { type: String },
  },
  { versionKey: false, minimize: false },
);
// Lists are sorted by name (the unique index serves that); each filter pairs with the sort key.
runbookSchema.index({ category: 1, name: 1 });
runbookSchema.index({ severity: 1, name: 1 });
runbookSchema.index({ automated: 1, name: 1 });

export const RunbookModel = model('Runbook', runbookSchema, 'runbooks');
