import { Schema, model } from 'mongoose';

/** Append-only audit chain (DESIGN §9); `seq` is unique, so two writers can never fork it. */
const auditRecordSchema = new Schema(
  {
    seq: { type: Number, required: true, unique: true },
    id: { type: String, required: true, unique: true },
    timestamp: { type: Date, required: true },
    action: { type: String, required: true },
    user: { type: String, required: true },
    role: { type: String, required: true },
    resource: { type: String, default: '' },
    resourceType: { type: String, default: '' },
    namespace: { type: String, default: '' },
    details: { type: Schema.Types.Mixed, default: {} },
    sourceIP: { type: String, default: '' },
    userAgent: { type: String, default: '' },
    checksum: { type: String, required: true },
    /** Set by activities so a retried activity never writes the same event twice. */
    idempotencyKey: { type: String },
  },
  { versionKey: false, minimize: false },
);
auditRecordSchema.index({ idempotencyKey: 1 }, { unique: true, sparse: true });
auditRecordSchema.index({ timestamp: -1 });
auditRecordSchema.index({ action: 1, seq: -1 });
auditRecordSchema.index({ user: 1, seq: -1 });
auditRecordSchema.index({ resource: 1, seq: -1 });

export const AuditRecordModel = model('AuditRecord', auditRecordSchema, 'audit_records');
