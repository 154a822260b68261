import { Schema, model, type InferSchemaType } from 'mongoose';

const mediaSchema = new Schema({ fileId: String, url: String, mime: String, filename: String }, { _id: false });

export const CHAT_MESSAGE_STATUSES = ['accepted', 'queued', 'done'] as const;

/**
 * One inbound chat message, written before the 202 so nothing accepted is lost (DESIGN §10).
 * `accepted` → signalled to its chat workflow (`queued`) → its turn finished (`done`, with
 * the reply, which later turns read back as context).
 */
const chatMessageSchema = new Schema(
  {
    messageId: { type: String, required: true, unique: true },
    chatId: { type: String, required: true },
    userId: String,
    text: String,
    audio: mediaSchema,
    image: mediaSchema,
    status: { type: String, required: true, enum: CHAT_MESSAGE_STATUSES },
    acceptedAt: { type: Date, required: true },
    queuedAt: Date,
    doneAt: Date,
    /** What the agent understood (text, or the transcript of a voice message). */
    prompt: String,
    reply: String,
    replyKind: { type: String, enum: ['final', 'error'] },
  },
  { versionKey: false },
);
chatMessageSchema.index({ status: 1, acceptedAt: 1 });
chatMessageSchema.index({ chatId: 1, status: 1, doneAt: -1 });

export type ChatMessageDoc = InferSchemaType<typeof chatMessageSchema>;
export const ChatMessage = model('ChatMessage', chatMessageSchema, 'chat_messages');
