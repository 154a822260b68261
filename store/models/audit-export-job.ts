import { Schema, model } from 'mongoose';

/**
 * One asynchronous audit export (`export-<yyyymmdd>-<nnn>` = its workflow id). The file lives in
 * the GridFS bucket `audit_exports` as ordered parts; `parts` lists the committed ones and
 * `progress` is how far the export got, so a retried activity resumes after the last committed
 * batch: no record written twice, none skipped.
 */
const auditExportJobSchema = new Schema(
  {
    jobId: { type: String, required: true, unique: true },
    state: { type: String, required: true, enum: ['processing', 'completed', 'failed', 'expired'] },
    format: { type: String, required: true, enum: ['json', 'csv'] },
    filter: {
      start: Date,
      end: { type: Date, required: true },
      action: String,
      user: String,
      namespace: String,
    },
    /** The newest record when the export was asked for: the export never reaches past it. */
    headSeq: { type: Number, required: true },
    estimatedRecords: { type: Number, required: true },
    requestedBy: { type: String, required: true },
    createdAt: { type: Date, required: true },
    expiresAt: { type: Date, required: true },
    progress: {
      lastSeq: { type: Number, default: 0 },
      lastChecksum: { type: String, default: '' },
      written: { type: Number, default: 0 },
      digest: { type: String, required: true },
      firstTimestamp: Date,
    },
    /** GridFS ids of the record parts, in file order. */
    parts: { type: [String], default: [] },
    /** GridFS ids of the head and tail, written when the records are done. */
    head: String,
    tail: String,
    bytes: { type: Number, default: 0 },
    completedAt: Date,
    reason: String,
  },
  { versionKey: false, minimize: false },
);

export const AuditExportJobModel = model('AuditExportJob', auditExportJobSchema, 'audit_export_jobs');
