import { Schema, model, type InferSchemaType } from 'mongoose';
import { CHANGE_TYPES, REVISION_STATES } from '../../domain/changes';

/**
 * The change record (domain/changes.ts): one document per change, keyed by its deterministic id
 * so a relist after a watcher hand-over records nothing twice. `diff` and `by` hold plain text
 * (never a Secret's content: a Secret's change is a keyed content hash).
 */
const changeSchema = new Schema(
  {
    id: { type: String, required: true, unique: true },
    cluster: { type: String, required: true },
    namespace: { type: String, default: '' },
    resource: { type: String, required: true },
    type: { type: String, required: true, enum: CHANGE_TYPES },
    at: { type: Date, required: true },
    revision: Number,
    previousRevision: Number,
    summary: { type: String, required: true },
    diff: { type: [{ _id: false, field: String, from: String, to: String }], default: [] },
    by: {
      _id: false,
      manager: { type: String, default: '' },
      changeCause: { type: String, default: '' },
      source: { type: String, default: '' },
      foghorn: { type: Boolean, default: false },
    },
    workloads: { type: [String], default: [] },
    recordedAt: { type: Date, required: true },
  },
  { versionKey: false, minimize: false },
);
changeSchema.index({ at: -1, id: -1 });
changeSchema.index({ cluster: 1, namespace: 1, at: -1 });
changeSchema.index({ cluster: 1, namespace: 1, workloads: 1, at: -1 });

export type ChangeDoc = InferSchemaType<typeof changeSchema>;
export const ChangeModel = model('Change', changeSchema, 'changes');

/** What Foghorn has seen of each revision of a watched Deployment (one document per revision). */
const revisionSchema = new Schema(
  {
    cluster: { type: String, required: true },
    namespace: { type: String, required: true },
    resource: { type: String, required: true },
    revision: { type: Number, required: true },
    replicaSet: { type: String, required: true },
    templateHash: { type: String, default: '' },
    images: { type: [String], default: [] },
    state: { type: String, required: true, enum: REVISION_STATES },
    healthyAt: Date,
    failure: {
      type: new Schema({ signal: String, reason: String, exitCode: Number, at: Date }, { _id: false }),
      default: undefined,
    },
    firstSeenAt: { type: Date, required: true },
  },
  { versionKey: false, minimize: false },
);
revisionSchema.index({ cluster: 1, namespace: 1, resource: 1, revision: -1 }, { unique: true });
revisionSchema.index({ firstSeenAt: 1 });

export type RevisionDoc = InferSchemaType<typeof revisionSchema>;
export const RevisionModel = model('Revision', revisionSchema, 'revisions');

/** A Deployment's availability, one document each time it changed. */
const availabilitySchema = new Schema(
  {
    cluster: { type: String, required: true },
    namespace: { type: String, required: true },
    resource: { type: String, required: true },
    at: { type: Date, required: true },
    desired: { type: Number, required: true },
    available: { type: Number, required: true },
  },
  { versionKey: false },
);
availabilitySchema.index({ cluster: 1, namespace: 1, resource: 1, at: 1 }, { unique: true });
availabilitySchema.index({ at: 1 });

export type AvailabilityDoc = InferSchemaType<typeof availabilitySchema>;
export const AvailabilityModel = model('Availability', availabilitySchema, 'availability');
