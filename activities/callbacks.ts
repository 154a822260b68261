import type { CallbackBody, CallbackKind, ReplyImage } from '../domain/chat';
import type { Config } from '../config/env';
import { signWebhook } from '../domain/webhook-signature';
import { markDelivered, markFailed, recordDeliveryOnce } from '../store/deliveries';
import { postJson, retryLater } from './http-post';
import { getMedia } from '../store/media';

export interface CallbackRequest {
  messageId: string;
  chatId: string;
  kind: CallbackKind;
  seq: number;
  text: string;
  image?: ReplyImage;
}

/**
 * Posts one callback to FOGHORN_WEBHOOK_CALLBACK_URL (DESIGN §10). Every attempt is recorded
 * (gateway status shows the last error); a non-2xx answer or a network error fails the attempt
 * with the next delay set here (backoff + jitter, Retry-After honoured), so the workflow's
 * retry policy only bounds how long we keep trying. Without a callback URL the reply is
 * recorded, not sent.
 */
export function createCallbackActivities(config: Config) {
  const url = config.FOGHORN_WEBHOOK_CALLBACK_URL;
  const secret = config.FOGHORN_WEBHOOK_SECRET;

  async function deliverCallback(request: CallbackRequest): Promise<'delivered' | 'recorded'> {
    const webhookId = `${request.messageId}.${request.seq}`;
    await recordDeliveryOnce({
      webhookId,
      messageId: request.messageId,
      chatId: request.chatId,
      kind: request.kind,
      seq: request.seq,
      text: request.text,
      ...(request.image && { imageFileId: request.image.fileId }),
      status: url ? 'pending' : 'recorded',
      createdAt: new Date(),
    });
    if (!url) return 'recorded';

    const body: CallbackBody = {
      chat_id: request.chatId,
      text: request.text,
      message_id: request.messageId,
      kind: request.kind,
      seq: request.seq,
    };
    if (request.image) {
      const image = await getMedia(request.image.fileId);
      Object.assign(body, {
        image_b64: image.data.toString('base64'),
        image_mime: request.image.mime,
        image_filename: request.image.filename,
      });
    }
    const json = JSON.stringify(body);
    const timestamp = Math.floor(Date.now() / 1000);
    const headers: Record<string, string> = {
      'User-Agent': 'foghorn-gateway',
      'webhook-id': webhookId,
      'webhook-timestamp': String(timestamp),
    };
    if (secret) {
      headers['X-Foghorn-Secret'] = secret;
      headers['webhook-signature'] = signWebhook(secret, webhookId, timestamp, json);
    }

    const outcome = await postJson(url, json, headers);
    if (outcome.ok) {
      await markDelivered(webhookId, new Date());
      return 'delivered';
    }
    await markFailed(webhookId, outcome.failure, new Date());
    throw retryLater(
      `callback ${request.kind} #${request.seq} not delivered: ${outcome.failure}`,
      'CallbackNotDelivered',
      outcome.retryAfterMs,
    );
  }

  return {
    deliverCallback,
  };
}

export type CallbackActivities = ReturnType<typeof createCallbackActivities>;
