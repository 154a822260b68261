import { Types } from 'mongoose';
import type { ChatTurn, MediaRef } from '../domain/chat';
import type { Config } from '../config/env';
import { adapterStatuses, type AdapterStatus } from '../domain/gateway-status';
import { GroupInsert } from './group-insert';
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

/**
 * Stores an accepted message; resolves once MongoDB has it (the 202 comes right after).
 * `acceptedAt` places it in its chat's order: the gateway stamps it when it registers the insert
 * with its hand-over queue (operations/chat-dispatch.ts).
 */
export async function saveChatMessage(message: NewChatMessage, acceptedAt = new Date()): Promise<Date> {
  // The record as the schema has it, built directly: the gateway validated every field at the
  // edge, and a Mongoose document (cast, validate, toObject) was 150 µs of the accepting
  // process's CPU per message at 400 msg/s (docs/decisions.md, "Chat gateway").
  const doc: ChatMessageDoc & { _id: Types.ObjectId } = {
    _id: new Types.ObjectId(),
    ...message,
    status: 'accepted',
    acceptedAt,
  };
  await messageInserts.add([doc]);
  return acceptedAt;
}

/** Messages accepted at once share inserts (built above: no documents to cast again). */
const messageInserts = new GroupInsert<object>(async (docs) => {
  await ChatMessage.insertMany(docs, { ordered: true, lean: true });
});

export async function getChatMessage(messageId: string): Promise<ChatMessageRecord | null> {
  return ChatMessage.findOne({ messageId }).lean<ChatMessageRecord>();
}

/** Marks messages as handed to their chat workflow (one write per hand-over batch). */
export async function markQueued(messageIds: string[]): Promise<void> {
  if (messageIds.length === 0) return;
  await ChatMessage.updateMany(
    { messageId: { $in: messageIds }, status: 'accepted' },
    { $set: { status: 'queued', queuedAt: new Date() } },
  );
}

/**
 * The chats' messages not yet handed to their workflow, in acceptance order (`acceptedAt`, then
 * `_id`, which a process allocates in increasing order), accepted before `bound` (or at it, with
 * `inclusive`). One query for many chats: one walk of the `{status, acceptedAt}` index per round,
 * however many chats wait.
 */
export async function undispatchedMessagesOf(
  chatIds: string[],
  bound: Date,
  opts: { inclusive?: boolean; limit?: number } = {},
): Promise<ChatMessageRecord[]> {
  return ChatMessage.find({
    chatId: chatIds.length === 1 ? chatIds[0] : { $in: chatIds },
    status: 'accepted',
    acceptedAt: { [opts.inclusive ? '$lte' : '$lt']: bound },
  })
    .sort({ acceptedAt: 1, _id: 1 })
    .limit(opts.limit ?? 100)
    .lean<ChatMessageRecord[]>();
}

/**
 * Chats with a message accepted before `before` and never handed over, the chat with the oldest
 * such message first; `skip` leaves out chats already dealt with.
 */
export async function chatsWithUndispatched(before: Date, skip: string[] = [], limit = 100): Promise<string[]> {
  const docs = await ChatMessage.find({
    status: 'accepted',
    acceptedAt: { $lt: before },
    ...(skip.length && { chatId: { $nin: skip } }),
  })
    .sort({ acceptedAt: 1, _id: 1 })
    .limit(limit)
    .select({ chatId: 1 })
    .lean<{ chatId: string }[]>();
  return [...new Set(docs.map((d) => d.chatId))];
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
