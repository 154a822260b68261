import { Schema, model } from 'mongoose';

/** Repairs made by the reconciler, one document per kind (`_id`), counted since the first run. */
export const ReconcilerStat = model(
  'ReconcilerStat',
  new Schema(
    {
      _id: { type: String, required: true },
      count: { type: Number, required: true, default: 0 },
      lastAt: { type: Date },
    },
    { versionKey: false },
  ),
  'reconciler_stats',
);
