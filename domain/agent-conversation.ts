import type { ChatTurn } from './chat';

/**
 * The LLM agent's conversation, in a provider-neutral shape the workflow can carry (the
 * activity maps it onto OpenAI chat-completions messages; images are attached there, from
 * GridFS, so payloads stay small).
 */
export type AgentMessage =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls?: AgentToolCall[] }
  | { role: 'tool'; content: string; toolCallId: string };

export interface AgentToolCall {
  id: string;
  tool: string;
  /** Raw JSON arguments as the model produced them (validated by the tool activity). */
  args: Record<string, unknown>;
}

/** Most model round-trips one message may take (each may call several tools). */
export const MAX_AGENT_STEPS = 8;

export const AGENT_SYSTEM_PROMPT = [
  "You are Foghorn's ChatOps agent, talking to SREs through a chat system.",
  'Use the tools to look at and act on incidents; never invent incident names, states or numbers.',
  'Act without asking for confirmation: the people who can reach you are trusted operators.',
  'Keep answers short and plain text (no Markdown tables).',
  'To post a message to the team home channel, write a line of its own: @send webhook <text>.',
].join(' ');

/** System prompt, the chat's previous turns (speaker noted), then the new message. */
export function agentConversation(history: ChatTurn[], prompt: string, userId?: string): AgentMessage[] {
  const said = (who: string | undefined, text: string) => (who ? `[${who}] ${text}` : text);
  return [
    { role: 'system', content: AGENT_SYSTEM_PROMPT },
    ...history.flatMap((t): AgentMessage[] => [
      { role: 'user', content: said(t.userId, t.text) },
      { role: 'assistant', content: t.reply },
    ]),
    { role: 'user', content: said(userId, prompt) },
  ];
}
