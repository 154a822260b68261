/**
 * The webhook channel's message shapes (spec webhook-channel.md, DESIGN §10): what a chat
 * system posts, what the agent turn works on, and what goes back to the callback URL.
 */

export const CALLBACK_KINDS = ['notice', 'progress', 'final', 'error', 'proactive'] as const;
export type CallbackKind = (typeof CALLBACK_KINDS)[number];

/** Replies longer than this are cut to REPLY_LIMIT - 1 characters plus `…`. */
export const REPLY_LIMIT = 3500;
/** Turns of the same chat the agent sees as context. */
export const CONTEXT_TURNS = 20;
/** The 'working on it' notice goes out when the reply is not ready this long after the turn began. */
export const NOTICE_AFTER_MS = 2_000;
/** At most one progress callback per this interval. */
export const PROGRESS_EVERY_MS = 3_000;
/** Request bodies may exceed the audio cap by this much (JSON framing, text, an image). */
export const BODY_OVERHEAD_BYTES = 1024 * 1024;

/** Cuts by code points, so an emoji is never split into half a surrogate pair. */
export function truncateReply(text: string): string {
  const chars = Array.from(text);
  return chars.length > REPLY_LIMIT ? chars.slice(0, REPLY_LIMIT - 1).join('') + '…' : text;
}

/** A stored blob (GridFS file id) or a URL still to be downloaded. */
export interface MediaRef {
  fileId?: string;
  url?: string;
  mime?: string;
  filename?: string;
}

/** One exchange of a chat, as the agent sees it next time. */
export interface ChatTurn {
  messageId: string;
  userId?: string;
  /** What the user said (the transcript for voice; `[image]` noted when one was sent). */
  text: string;
  reply: string;
}

/** Image attached to a reply, stored in GridFS; the delivery activity inlines it as base64. */
export interface ReplyImage {
  fileId: string;
  mime: string;
  filename: string;
}

/** The body of every callback (spec fields + message_id, kind, seq). */
export interface CallbackBody {
  chat_id: string;
  text: string;
  image_b64?: string;
  image_mime?: string;
  image_filename?: string;
  message_id: string;
  kind: CallbackKind;
  seq: number;
}

/** Lines `@send webhook TEXT` in agent output: proactive messages for the home channel. */
const SEND_DIRECTIVE = /^\s*@send\s+webhook\s+(.+?)\s*$/;

/** Splits agent output into the reply and the proactive messages it asked to send. */
export function extractSendDirectives(output: string): { reply: string; proactive: string[] } {
  const proactive: string[] = [];
  const kept: string[] = [];
  for (const line of output.split('\n')) {
    const m = SEND_DIRECTIVE.exec(line);
    if (m) proactive.push(m[1]!);
    else kept.push(line);
  }
  return { reply: kept.join('\n').trim(), proactive };
}
