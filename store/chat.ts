import type { ChatTurn, MediaRef } from '../domain/chat';
import type { Config } from '../domain/config';
import { adapterStatuses, type AdapterStatus } from '../domain/gateway-status';
import { CallbackDelivery, ChatMessage, type ChatMessageDoc } from './models';

/** Chat messages and callback deliveries of the gateway (DESIGN §10). */

export interface NewChatMessage {
  messageId: string;
  chatId: string;
  userId?: string;
  text?: string;
  audio?: MediaRef;
  image?: MediaRef;
}

export type ChatMessageRecord = ChatMessageDoc;

/** Stores an accepted message; resolves once MongoDB has it (the 202 comes after). */
export async function saveChatMessage(message: NewChatMessage): Promise<Date> {
  const acceptedAt = new Date();
  await ChatMessage.create({ ...message, status: 'accepted', acceptedAt });
  return acceptedAt;
}

export async function getChatMessage(messageId: string): Promise<ChatMessageRecord | null> {
  return ChatMessage.findOne({ messageId }).lean<ChatMessageRecord>();
}

/** Marks a message as handed to its chat workflow. */
export async function markQueued(messageId: string): Promise<void> {
  await ChatMessage.updateOne({ messageId, status: 'accepted' }, { $set: { status: 'queued', queuedAt: new Date() } });
}

/** Messages accepted before `before` that never reached their chat workflow, oldest first. */
export async function undispatchedMessages(before: Date, limit = 100): Promise<ChatMessageRecord[]> {
  return ChatMessage.find({ status: 'accepted', acceptedAt: { $lt: before } })
    .sort({ acceptedAt: 1 })
    .limit(limit)
    .lean<ChatMessageRecord[]>();
}

/** Records media downloaded or stored after acceptance (URL media lands in GridFS). */
export async function setMessageMedia(messageId: string, field: 'audio' | 'image', media: MediaRef): Promise<void> {
  await ChatMessage.updateOne({ messageId }, { $set: { [field]: media } });
}

/** The turn is over: the reply is kept as context for the chat's next turns. */
export async function completeChatMessage(
  messageId: string,
  outcome: { prompt: string; reply: string; replyKind: 'final' | 'error' },
): Promise<void> {
  await ChatMessage.updateOne({ messageId }, { $set: { ...outcome, status: 'done', doneAt: new Date() } });
}

/** The last `limit` finished turns of a chat, oldest first (the agent's context). */
export async function recentTurns(chatId: string, limit: number): Promise<ChatTurn[]> {
  const docs = await ChatMessage.find({ chatId, status: 'done' })
    .sort({ doneAt: -1 })
    .limit(limit)
    .lean<ChatMessageRecord[]>();
  return docs.reverse().map((d) => ({
    messageId: d.messageId,
    ...(d.userId && { userId: d.userId }),
    text: d.prompt ?? d.text ?? '',
    reply: d.reply ?? '',
  }));
}

/** Messages accepted but not finished: the gateway's queue depth. */
export async function chatQueueDepth(): Promise<number> {
  return ChatMessage.countDocuments({ status: { $ne: 'done' } });
}

/** The most recent failed callback attempt, if any. */
export async function lastDeliveryError(): Promise<{ at: Date; error: string; webhookId: string } | undefined> {
  const doc = await CallbackDelivery.findOne({ lastErrorAt: { $exists: true } })
    .sort({ lastErrorAt: -1 })
    .lean();
  return doc?.lastError && doc.lastErrorAt
    ? { at: doc.lastErrorAt, error: doc.lastError, webhookId: doc.webhookId }
    : undefined;
}

/** The active adapters with their live queue depth and last delivery error. */
export async function gatewayStatus(config: Config): Promise<AdapterStatus[]> {
  const [queueDepth, lastError] = await Promise.all([chatQueueDepth(), lastDeliveryError()]);
  return adapterStatuses(config, { queueDepth, ...(lastError && { lastDeliveryError: lastError }) });
}
