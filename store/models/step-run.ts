import { Schema, model, type InferSchemaType } from 'mongoose';

export const STEP_RUN_KINDS = ['http', 'script'] as const;
export const STEP_RUN_STATES = ['started', 'done'] as const;

/**
 * One HttpRequest or RunScript remediation step (activities/remediation-steps.ts), keyed by its
 * idempotency key (plan + step). A script is recorded `started` before it runs, so an attempt
 * after a stopped worker knows not to run it again; an HTTP step is recorded once it has an
 * outcome. `result` is the activity's result (HttpStepResult or ScriptStepResult), already
 * redacted.
 */
const stepRunSchema = new Schema(
  {
    key: { type: String, required: true, unique: true },
    kind: { type: String, required: true, enum: STEP_RUN_KINDS },
    /** Fingerprint of what the step asks for (domain stepFingerprint): a reused key must ask for the same. */
    fingerprint: { type: String, required: true },
    /** `POST https://hooks.example.com/restart`, `script (120 bytes)`: never a query string or header. */
    target: { type: String, required: true },
    state: { type: String, required: true, enum: STEP_RUN_STATES },
    result: Schema.Types.Mixed,
    createdAt: { type: Date, required: true },
    doneAt: Date,
  },
  { versionKey: false },
);

export type StepRunDoc = InferSchemaType<typeof stepRunSchema>;
export const StepRunModel = model('StepRun', stepRunSchema, 'step_runs');
