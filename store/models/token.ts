import { Schema, model, type InferSchemaType } from 'mongoose';
import { USER_ROLES } from '../../domain/roles';

/** API tokens, stored as SHA-256 hashes only (DESIGN §5). */
const tokenSchema = new Schema(
  {
    hash: { type: String, required: true, unique: true },
    user: { type: String, required: true },
    role: { type: String, required: true, enum: USER_ROLES },
    createdAt: { type: Date, required: true },
    lastUsedAt: { type: Date },
    revoked: { type: Boolean, required: true, default: false },
    revokedAt: { type: Date },
  },
  { versionKey: false },
);
tokenSchema.index({ createdAt: -1 });

export type TokenDoc = InferSchemaType<typeof tokenSchema>;
export const Token = model('Token', tokenSchema, 'tokens');
