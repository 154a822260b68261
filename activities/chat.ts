import { ApplicationFailure } from '@temporalio/common';
import type { ChatTurn, MediaRef } from '../domain/chat';
import type { Config } from '../config/env';
import { completeChatMessage, getChatMessage, recentTurns } from '../store/chat';

export interface PreparedTurn {
  chatId: string;
  userId?: string;
  text?: string;
  audio?: MediaRef;
  image?: MediaRef;
  /** `llm` when FOGHORN_LLM_* is configured, else the built-in ChatOps agent. */
  agent: 'llm' | 'builtin';
  shell: boolean;
  homeChannel?: string;
}

/** The chat's own persistence: the stored message in, the finished turn out. */
export function createChatActivities(config: Config) {
  return {
    async loadChatHistory(input: { chatId: string; limit: number }): Promise<ChatTurn[]> {
      return recentTurns(input.chatId, input.limit);
    },

    /** The stored message and how this worker is configured to answer it. */
    async prepareTurn(input: { messageId: string }): Promise<PreparedTurn> {
      const message = await getChatMessage(input.messageId);
      if (!message) throw ApplicationFailure.nonRetryable(`message ${input.messageId} is not stored`, 'MessageMissing');
      type Stored = { [K in keyof MediaRef]?: MediaRef[K] | null };
      const media = (m?: Stored | null): MediaRef | undefined =>
        m && (m.fileId || m.url)
          ? {
              ...(m.fileId && { fileId: m.fileId }),
              ...(m.url && { url: m.url }),
              ...(m.mime && { mime: m.mime }),
              ...(m.filename && { filename: m.filename }),
            }
          : undefined;
      const audio = media(message.audio);
      const image = media(message.image);
      return {
        chatId: message.chatId,
        ...(message.userId && { userId: message.userId }),
        ...(message.text && { text: message.text }),
        ...(audio && { audio }),
        ...(image && { image }),
        agent: config.FOGHORN_LLM_BASE_URL ? 'llm' : 'builtin',
        shell: config.FOGHORN_AGENT_SHELL === 'on',
        ...(config.FOGHORN_WEBHOOK_HOME_CHANNEL && { homeChannel: config.FOGHORN_WEBHOOK_HOME_CHANNEL }),
      };
    },

    async completeTurn(input: {
      messageId: string;
      prompt: string;
      reply: string;
      replyKind: 'final' | 'error';
    }): Promise<void> {
      await completeChatMessage(input.messageId, {
        prompt: input.prompt,
        reply: input.reply,
        replyKind: input.replyKind,
      });
    },
  };
}

export type ChatActivities = ReturnType<typeof createChatActivities>;
