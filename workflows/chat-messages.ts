import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { ChatTurn } from '../domain/chat';

/** A stored inbound message handed to its chat's workflow (the body stays in MongoDB). */
export interface QueuedMessage {
  messageId: string;
  acceptedAt: string;
}

/** Several messages of the chat in acceptance order, one signal per hand-over batch. */
export const chatMessagesSignal = defineSignal<[QueuedMessage[]]>('chatMessages');

export interface ChatState {
  queued: number;
  turns: number;
  current?: string;
}
export const chatStateQuery = defineQuery<ChatState>('chatState');

export interface ChatWorkflowInput {
  chatId: string;
  /** Turns per run before continue-as-new (default 100; tests lower it). */
  turnsPerRun?: number;
  /** Carried across continue-as-new; a fresh run loads its context from MongoDB. */
  carried?: { history: ChatTurn[]; pending: QueuedMessage[]; recent: string[] };
}

export interface AgentTurnInput {
  messageId: string;
  chatId: string;
  /** The chat's last turns, oldest first (CONTEXT_TURNS at most). */
  history: ChatTurn[];
}

/** Workflow id of a chat's conversation. */
export const chatWorkflowId = (chatId: string) => `chat-${chatId}`;
