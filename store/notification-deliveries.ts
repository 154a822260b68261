import { NotificationDelivery, type NotificationDeliveryDoc } from './models';

export type NewNotificationDelivery = Pick<
  NotificationDeliveryDoc,
  'key' | 'incident' | 'event' | 'channel' | 'target' | 'level' | 'attempt'
>;

/** The delivery's record, created on first sight; a retry or replay finds the first one. */
export async function deliveryOnce(
  delivery: NewNotificationDelivery,
  at: Date,
): Promise<Pick<NotificationDeliveryDoc, 'status' | 'tries'>> {
  const doc = await NotificationDelivery.findOneAndUpdate(
    { key: delivery.key },
    { $setOnInsert: { ...delivery, status: 'pending', tries: 0, createdAt: at } },
    { upsert: true, returnDocument: 'after', projection: { status: 1, tries: 1, _id: 0 } },
  ).lean();
  return doc!;
}

export async function markNotificationDelivered(key: string, at: Date): Promise<void> {
  await NotificationDelivery.updateOne({ key }, { $set: { status: 'delivered', deliveredAt: at }, $inc: { tries: 1 } });
}

/** `error` is already redacted (hosts and status codes only). */
export async function markNotificationFailed(key: string, error: string, at: Date): Promise<void> {
  await NotificationDelivery.updateOne(
    { key, status: { $ne: 'delivered' } },
    { $set: { status: 'failed', lastError: error, lastErrorAt: at }, $inc: { tries: 1 } },
  );
}

export function deliveriesOf(incident: string): Promise<NotificationDeliveryDoc[]> {
  return NotificationDelivery.find({ incident }, { _id: 0 }).sort({ createdAt: 1 }).lean<NotificationDeliveryDoc[]>();
}
