import { CallbackDelivery, type CallbackDeliveryDoc } from './models';

/** What a callback is before its first attempt. */
export type NewDelivery = Pick<
  CallbackDeliveryDoc,
  'webhookId' | 'messageId' | 'chatId' | 'kind' | 'seq' | 'text' | 'status' | 'createdAt'
> & { imageFileId?: string };

/** Records a callback once: a retried activity finds it and keeps its attempts. */
export async function recordDeliveryOnce(delivery: NewDelivery): Promise<void> {
  await CallbackDelivery.updateOne(
    { webhookId: delivery.webhookId },
    { $setOnInsert: { ...delivery, attempts: 0 } },
    { upsert: true },
  );
}

export async function markDelivered(webhookId: string, at: Date): Promise<void> {
  await CallbackDelivery.updateOne(
    { webhookId },
    { $set: { status: 'delivered', deliveredAt: at }, $inc: { attempts: 1 } },
  );
}

/** The last error is what `gateway status` shows. */
export async function markFailed(webhookId: string, error: string, at: Date): Promise<void> {
  await CallbackDelivery.updateOne(
    { webhookId },
    { $set: { status: 'failed', lastError: error, lastErrorAt: at }, $inc: { attempts: 1 } },
  );
}
