import { z } from 'zod';
import { describeZodError } from './envelope';

/**
 * Validation of an inbound webhook message (spec webhook-channel.md, "Inbound message").
 * Inline media is decoded here, at the edge, so a bad base64 string is a 400 and not a failed
 * turn later. `null` counts as absent: chat systems often send explicit nulls.
 */

const optionalString = z
  .string()
  .nullish()
  .transform((v) => v ?? undefined);
const mime = (kind: 'audio' | 'image') =>
  z
    .string()
    // Parameters are allowed: voice notes arrive as `audio/ogg; codecs=opus`.
    .regex(new RegExp(`^${kind}/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*(\\s*;.*)?$`), `must have the shape ${kind}/<subtype>`)
    .nullish()
    .transform((v) => v?.toLowerCase() ?? undefined);
const httpUrl = z
  .string()
  .url('must be a URL')
  .refine((u) => /^https?:\/\//i.test(u), 'must be an http or https URL')
  .nullish()
  .transform((v) => v ?? undefined);
// No repetition groups: a group repeated millions of times overflows V8's regexp stack (a 20 MB voice note).
const BASE64_CHARS = /^[A-Za-z0-9+/]*={0,2}$/;
const base64 = z
  .string()
  .nullish()
  .transform((v, ctx) => {
    if (v === null || v === undefined) return undefined;
    const compact = v.replace(/\s+/g, ''); // line-wrapped base64 (MIME style) is still base64
    if (compact.length === 0 || compact.length % 4 !== 0 || !BASE64_CHARS.test(compact)) {
      ctx.addIssue({ code: 'custom', message: 'is not valid base64' });
      return z.NEVER;
    }
    return Buffer.from(compact, 'base64');
  });

const inboundSchema = z
  .object({
    // Echoed exactly as sent (the caller matches replies by it); only a blank one is refused.
    chat_id: z
      .string({ required_error: 'Required', invalid_type_error: 'must be a string' })
      .max(256)
      .refine((id) => id.trim().length > 0, 'must not be empty or blank'),
    user_id: z
      .string()
      .max(256)
      .nullish()
      .transform((v) => (v?.trim() ? v : undefined)),
    text: optionalString,
    audio_b64: base64,
    audio_url: httpUrl,
    audio_mime: mime('audio'),
    image_b64: base64,
    image_url: httpUrl,
    image_mime: mime('image'),
  })
  .superRefine((m, ctx) => {
    if (m.audio_b64 && m.audio_url)
      ctx.addIssue({ code: 'custom', path: ['audio_url'], message: 'give audio_b64 or audio_url, not both' });
    if (m.image_b64 && m.image_url)
      ctx.addIssue({ code: 'custom', path: ['image_url'], message: 'give image_b64 or image_url, not both' });
    if (!m.text?.trim() && !m.audio_b64 && !m.audio_url && !m.image_b64 && !m.image_url)
      ctx.addIssue({
        code: 'custom',
        path: [],
        message: 'one of text, audio_b64, audio_url, image_b64 or image_url is required',
      });
  });

export interface InboundMedia {
  data?: Buffer;
  url?: string;
  mime?: string;
}

export interface InboundMessage {
  chatId: string;
  userId?: string;
  text?: string;
  audio?: InboundMedia;
  image?: InboundMedia;
}

export type InboundResult = { ok: true; message: InboundMessage } | { ok: false; status: 400 | 413; details: string };

/** Validates a parsed JSON body; decoded audio larger than the cap is a 413. */
export function parseInbound(body: unknown, maxAudioBytes: number): InboundResult {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return { ok: false, status: 400, details: 'body: must be a JSON object' };
  const parsed = inboundSchema.safeParse(body);
  if (!parsed.success) return { ok: false, status: 400, details: describeZodError(parsed.error, 'body') };
  const m = parsed.data;
  if (m.audio_b64 && m.audio_b64.length > maxAudioBytes)
    return {
      ok: false,
      status: 413,
      details: `body.audio_b64: the audio is ${m.audio_b64.length} bytes; the limit is ${maxAudioBytes} (FOGHORN_GATEWAY_MAX_AUDIO_BYTES)`,
    };
  const media = (data?: Buffer, url?: string, type?: string): InboundMedia | undefined =>
    data || url ? { ...(data && { data }), ...(url && { url }), ...(type && { mime: type }) } : undefined;
  const audio = media(m.audio_b64, m.audio_url, m.audio_mime);
  const image = media(m.image_b64, m.image_url, m.image_mime);
  return {
    ok: true,
    message: {
      chatId: m.chat_id,
      ...(m.user_id && { userId: m.user_id }),
      ...(m.text?.trim() && { text: m.text }),
      ...(audio && { audio }),
      ...(image && { image }),
    },
  };
}
