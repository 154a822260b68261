import { Schema, model } from 'mongoose';

/** Per-day name counters, `_id` = `<PREFIX>-<yyyymmdd>`. */
export const Counter = model(
  'Counter',
  new Schema({ _id: { type: String, required: true }, seq: { type: Number, required: true } }, { versionKey: false }),
  'counters',
);

/**
 * One document per allocated name. The unique `_id` is what makes allocation collision-free,
 * even on servers whose findAndModify is not atomic (see docs/spike.md).
 */
export const NameClaim = model(
  'NameClaim',
  new Schema(
    { _id: { type: String, required: true }, claimedAt: { type: Date, required: true } },
    { versionKey: false },
  ),
  'name_claims',
);
