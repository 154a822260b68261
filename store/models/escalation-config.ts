import { Schema, model } from 'mongoose';

/**
 * Escalation policies, on-call schedules and maintenance windows (collection `escalation_config`,
 * unique `(kind, name)`), written and read only by store/escalation-config.ts. The validated spec
 * is sealed whole (AES-256-GCM, store/cluster-secrets.ts): policies and schedules carry Slack and
 * webhook URLs, PagerDuty routing keys and signing secrets. Only what queries need is in clear.
 */
const sealedSchema = new Schema(
  {
    keyId: { type: String, required: true },
    algorithm: { type: String, required: true, enum: ['aes-256-gcm'] },
    iv: { type: String, required: true }, // base64
    tag: { type: String, required: true }, // base64
    ciphertext: { type: String, required: true }, // base64
  },
  { _id: false },
);

const escalationConfigSchema = new Schema(
  {
    kind: { type: String, required: true, enum: ['policy', 'schedule', 'maintenance'] },
    name: { type: String, required: true },
    /** Policies: the order they are tried in (then `seq`). */
    priority: { type: Number },
    /** Maintenance windows: which namespace (`*`: all) and when, to find the active ones. */
    namespace: { type: String },
    from: { type: Date },
    to: { type: Date },
    sealed: { type: sealedSchema, required: true },
    /** `file`: provisioned from FOGHORN_ESCALATION_FILE (read-only over the API); `api`: an admin's. */
    source: { type: String, required: true, enum: ['file', 'api'] },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
    /** Creation order: breaks priority ties and orders lists. */
    seq: { type: Number, required: true },
  },
  { versionKey: false },
);
escalationConfigSchema.index({ kind: 1, name: 1 }, { unique: true });
escalationConfigSchema.index({ kind: 1, priority: 1, seq: 1 });
escalationConfigSchema.index({ kind: 1, namespace: 1, from: 1, to: 1 });

export const EscalationConfigModel = model('EscalationConfig', escalationConfigSchema, 'escalation_config');
