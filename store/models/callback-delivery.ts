import { Schema, model, type InferSchemaType } from 'mongoose';
import { CALLBACK_KINDS } from '../../domain/chat';

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed', 'recorded'] as const;

/**
 * One callback and how its delivery went; keyed by `webhook-id` (`<message_id>.<seq>`), which
 * receivers can also use to drop duplicates. `recorded`: no callback URL was configured.
 */
const callbackDeliverySchema = new Schema(
  {
    webhookId: { type: String, required: true, unique: true },
    messageId: { type: String, required: true },
    chatId: { type: String, required: true },
    kind: { type: String, required: true, enum: CALLBACK_KINDS },
    seq: { type: Number, required: true },
    text: { type: String, required: true },
    imageFileId: String,
    status: { type: String, required: true, enum: DELIVERY_STATUSES },
    attempts: { type: Number, required: true, default: 0 },
    lastError: String,
    lastErrorAt: Date,
    createdAt: { type: Date, required: true },
    deliveredAt: Date,
  },
  { versionKey: false },
);
callbackDeliverySchema.index({ lastErrorAt: -1 });
callbackDeliverySchema.index({ messageId: 1, seq: 1 });

export type CallbackDeliveryDoc = InferSchemaType<typeof callbackDeliverySchema>;
export const CallbackDelivery = model('CallbackDelivery', callbackDeliverySchema, 'callback_deliveries');
