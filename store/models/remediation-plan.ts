import { Schema, model } from 'mongoose';
import { PLAN_STATES } from '../../domain/remediation';

/** One step of a plan: the action as run (templates filled), and what happened. */
const planActionSchema = new Schema(
  {
    type: { type: String, required: true },
    params: { type: Schema.Types.Mixed, default: () => ({}) },
    description: String,
    /** The concrete Kubernetes inputs chosen once (replicas, limits), so a retry applies the same. */
    resolved: { type: Schema.Types.Mixed },
    /** `ok`, `failed`, `undone`; absent until the step ran. */
    outcome: String,
    result: String,
    /** The agent step that proposed it (agentic plans). */
    agenticStep: Number,
  },
  { _id: false, minimize: false },
);

/**
 * Remediation plans (collection `remediation_plans`): one per attempt, name = `RP-…` = the
 * workflow id of the attempt's child workflow. Written only by the plan's activities; the
 * unique `key` (`<incident>/attempt/<n>`) makes a retried creation find the first one.
 */
const planSchema = new Schema(
  {
    name: { type: String, required: true, unique: true },
    key: { type: String, required: true, unique: true },
    namespace: { type: String, required: true },
    issueRef: { type: String, required: true },
    cluster: { type: String, required: true },
    attempt: { type: Number, required: true },
    strategy: { type: String, required: true },
    strategyKind: { type: String, required: true },
    /** domain/remediation.ts strategyKey: what the strategy is, across incidents. */
    strategyKey: { type: String, default: '' },
    /** `<cluster>/<namespace>/<resource>/<signalType>`: the failure it fixes, for the ineffective-fix memory. */
    subject: { type: String, default: '' },
    runbook: { type: String, default: '' },
    state: { type: String, required: true, enum: PLAN_STATES },
    result: { type: String, default: '' },
    agenticMode: { type: Boolean, required: true },
    agenticStepCount: { type: Number, default: 0 },
    actions: { type: [planActionSchema], default: [] },
    riskScore: { type: Number, required: true },
    approvalRequired: { type: Boolean, required: true },
    approvalReasons: { type: [String], default: [] },
    approval: { type: String, default: '' },
    verifyWindowMs: { type: Number, required: true },
    startedAt: { type: Date, required: true },
    completedAt: Date,
    creationTimestamp: { type: Date, required: true },
  },
  { versionKey: false, minimize: false },
);
// The list's order (newest first, the name breaks ties) after each filter's equality, so the
// index gives the page without a sort (test/store/index-shapes.test.ts).
planSchema.index({ creationTimestamp: -1, name: -1 });
planSchema.index({ issueRef: 1, attempt: 1 });
planSchema.index({ issueRef: 1, creationTimestamp: -1, name: -1 });
planSchema.index({ namespace: 1, creationTimestamp: -1, name: -1 });
planSchema.index({ state: 1, creationTimestamp: -1, name: -1 });
planSchema.index({ runbook: 1, state: 1, completedAt: -1 });
planSchema.index({ subject: 1, state: 1, completedAt: -1 });

export const RemediationPlanModel = model('RemediationPlan', planSchema, 'remediation_plans');
