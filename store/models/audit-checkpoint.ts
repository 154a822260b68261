import { Schema, model } from 'mongoose';

/**
 * Signed checkpoints of the audit chain's head (docs/audit.md), outside the audit collection so
 * that deleting the newest audit records leaves evidence. One document per head `seq` seen: a
 * unique index makes concurrent writers from several processes idempotent, and a checkpoint is
 * never overwritten (a later head with the same seq but another checksum is itself evidence).
 */
const auditCheckpointSchema = new Schema(
  {
    seq: { type: Number, required: true, unique: true },
    checksum: { type: String, required: true },
    /** The database the chain lives in; part of the signed content. */
    database: { type: String, required: true },
    at: { type: Date, required: true },
    /** `hmac-sha256:<hex>` over the fields above, with the audit key. */
    signature: { type: String, required: true },
  },
  // Created by connectMongo's createIndexes only: Mongoose's own createCollection racing it made
  // the H2 backend of the MongoDB-wire server fail `foghorn dev` on a fresh data dir.
  { versionKey: false, autoCreate: false },
);

export const AuditCheckpointModel = model('AuditCheckpoint', auditCheckpointSchema, 'audit_checkpoints');
