import { Schema, model, type InferSchemaType } from 'mongoose';

export const NOTIFICATION_DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;

/**
 * One notification to one endpoint (docs/escalation.md). `key` names the incident, the event,
 * the rung (level and attempt, or the approval or plan step) and a hash of the endpoint: a
 * retried or replayed delivery finds its record, and once delivered is never sent again.
 * `target` is the redacted form (channel host), never a URL path or routing key.
 */
const notificationDeliverySchema = new Schema(
  {
    key: { type: String, required: true, unique: true },
    incident: { type: String, required: true },
    event: { type: String, required: true },
    channel: { type: String, required: true },
    target: { type: String, required: true },
    level: { type: Number, required: true },
    attempt: { type: Number, required: true },
    status: { type: String, required: true, enum: NOTIFICATION_DELIVERY_STATUSES },
    tries: { type: Number, required: true, default: 0 },
    lastError: String,
    lastErrorAt: Date,
    createdAt: { type: Date, required: true },
    deliveredAt: Date,
  },
  { versionKey: false },
);
notificationDeliverySchema.index({ incident: 1, createdAt: 1 });

export type NotificationDeliveryDoc = InferSchemaType<typeof notificationDeliverySchema>;
export const NotificationDelivery = model(
  'NotificationDelivery',
  notificationDeliverySchema,
  'notification_deliveries',
);
