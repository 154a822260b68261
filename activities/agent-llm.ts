import type { ChatCompletionContentPart, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { AgentMessage, AgentToolCall } from '../domain/agent-conversation';
import { toolDefinitions } from '../contracts/agent-tools';
import { getMedia } from '../store/media';
import { withHeartbeat } from './context';
import { openaiClient, type LlmConfig } from './llm';

export interface AgentStepInput {
  messages: AgentMessage[];
  /** An image the user sent with the latest message, passed to the model as vision input. */
  imageFileId?: string;
  shell: boolean;
}

export interface AgentStepResult {
  content: string;
  toolCalls: AgentToolCall[];
}

/**
 * One round-trip of the LLM agent: the conversation so far in, either tool calls or the
 * answer out. The loop lives in the agent-turn workflow, so every tool call is its own
 * durable, retried activity.
 */
export function createAgentLlmActivities(llm: LlmConfig | undefined) {
  return {
    async llmAgentStep(input: AgentStepInput): Promise<AgentStepResult> {
      if (!llm) throw new Error('FOGHORN_LLM_BASE_URL is not set');
      const messages = await toOpenAi(input.messages, input.imageFileId);
      // Heartbeats while the model thinks: a dead worker's step is retried in seconds.
      const completion = await withHeartbeat((signal) =>
        openaiClient(llm).chat.completions.create(
          {
            model: llm.model,
            temperature: 0.2,
            messages,
            tools: toolDefinitions({ FOGHORN_AGENT_SHELL: input.shell ? 'on' : 'off' }),
          },
          { signal },
        ),
      );
      const message = completion.choices[0]?.message;
      return {
        content: message?.content ?? '',
        toolCalls: (message?.tool_calls ?? []).flatMap((call) =>
          call.type === 'function'
            ? [{ id: call.id, tool: call.function.name, args: parseArgs(call.function.arguments) }]
            : [],
        ),
      };
    },
  };
}

/** Models sometimes send malformed JSON arguments; the tool then reports them as invalid. */
function parseArgs(text: string): Record<string, unknown> {
  try {
    const value = JSON.parse(text || '{}') as unknown;
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return { _unparsed: text };
  }
}

async function toOpenAi(messages: AgentMessage[], imageFileId?: string): Promise<ChatCompletionMessageParam[]> {
  const lastUser = messages.map((m) => m.role).lastIndexOf('user');
  const image = imageFileId ? await getMedia(imageFileId) : undefined;
  return messages.map((m, i): ChatCompletionMessageParam => {
    switch (m.role) {
      case 'tool':
        return { role: 'tool', tool_call_id: m.toolCallId, content: m.content };
      case 'assistant':
        return {
          role: 'assistant',
          content: m.content,
          ...(m.toolCalls?.length && {
            tool_calls: m.toolCalls.map((c) => ({
              id: c.id,
              type: 'function' as const,
              function: { name: c.tool, arguments: JSON.stringify(c.args) },
            })),
          }),
        };
      case 'user': {
        if (!image || i !== lastUser) return { role: 'user', content: m.content };
        const parts: ChatCompletionContentPart[] = [
          { type: 'text', text: m.content },
          {
            type: 'image_url',
            image_url: { url: `data:${image.mime ?? 'image/png'};base64,${image.data.toString('base64')}` },
          },
        ];
        return { role: 'user', content: parts };
      }
      default:
        return { role: 'system', content: m.content };
    }
  });
}

export type AgentLlmActivities = ReturnType<typeof createAgentLlmActivities>;
