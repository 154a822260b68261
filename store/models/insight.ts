import { Schema, model, type InferSchemaType } from 'mongoose';

/** Exactly one AI insight per incident (unique `issueRef`). */
const insightSchema = new Schema(
  {
    name: { type: String, required: true, unique: true },
    namespace: { type: String, required: true },
    issueRef: { type: String, required: true, unique: true },
    provider: { type: String, required: true },
    model: { type: String, required: true },
    analysis: { type: String, default: '' },
    rootCause: { type: String, default: '' },
    confidence: { type: Number, required: true },
    recommendations: { type: [String], default: [] },
    suggestedActions: { type: [Schema.Types.Mixed], default: [] },
    logAnalysis: { type: String, default: '' },
    gitOpsContext: { type: String, default: '' },
    cascadeAnalysis: { type: String, default: '' },
    blastRadiusPrediction: { type: String, default: '' },
    relatedEvents: { type: [String], default: [] },
    /** What the analysis collected (domain/evidence.ts); absent without cluster evidence. */
    evidence: { type: Schema.Types.Mixed, default: undefined },
    // Internal (not in the API's view): what the incident record and the timeline take from the
    // analysis, so a retried activity can finish writing them from the stored insight.
    recommendation: { type: String, default: '' },
    fallbackReason: { type: String, default: '' },
    generatedAt: { type: Date, required: true },
    creationTimestamp: { type: Date, required: true },
  },
  { versionKey: false, minimize: false },
);
insightSchema.index({ creationTimestamp: -1, name: -1 });
insightSchema.index({ namespace: 1, creationTimestamp: -1, name: -1 });

export type InsightDoc = InferSchemaType<typeof insightSchema>;
export const InsightModel = model('Insight', insightSchema, 'aiinsights');
