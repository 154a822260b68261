/**
 * One inbound message, end to end (workflow id = message id): fetch URL media, transcribe
 * voice, run the agent, and post notice → progress → final to the callback URL in order.
 * Returns the turn for the chat's context. Never fails: every problem becomes an error reply.
 */
import { ActivityFailure, ApplicationFailure, proxyActivities, sleep, TimeoutFailure } from '@temporalio/workflow';
import type { AgentLlmActivities } from '../activities/agent-llm';
import type { AgentToolActivities } from '../activities/agent-tools';
import type { ChatActivities, PreparedTurn } from '../activities/chat';
import type { MediaActivities } from '../activities/media';
import type { TranscriptionActivities } from '../activities/transcribe';
import { agentConversation, MAX_AGENT_STEPS, type AgentMessage } from '../domain/agent-conversation';
import { TOOL_NAMES, type ToolCall, type ToolCaller, type ToolName, type ToolResult } from '../domain/agent-tools';
import { extractSendDirectives, NOTICE_AFTER_MS, type ChatTurn, type MediaRef, type ReplyImage } from '../domain/chat';
import { HELP_TEXT, parseChatCommand } from '../domain/chatops';
import type { AgentTurnInput } from './chat-messages';
import { Outbox } from './outbox';
import { STORE_CALL_OPTIONS } from './store-options';

/** The turn's own records: quick and idempotent, retried without a cap (MongoDB may be down for a while). */
const store = proxyActivities<ChatActivities>(STORE_CALL_OPTIONS);
/*
 * A person is waiting on this turn, and the chat's later messages wait behind it: the calls to
 * other people's services (media URLs, the STT and LLM endpoints) get a few tries and then the
 * turn answers with an error reply the user can act on (the workflow itself never fails).
 * Bounded on purpose, unlike the incident workflow's persistence.
 */
/** Downloads refuse for good (SSRF, size) or fail transiently (timeouts, 5xx). */
const media = proxyActivities<MediaActivities>({
  startToCloseTimeout: '1m',
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumAttempts: 4 },
});
/** Transcription heartbeats (a local recogniser may run for minutes). */
const stt = proxyActivities<TranscriptionActivities>({
  startToCloseTimeout: '5m',
  heartbeatTimeout: '30s',
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumAttempts: 3 },
});
/** A model step heartbeats while the model thinks: a dead worker is noticed in seconds. */
const llm = proxyActivities<AgentLlmActivities>({
  startToCloseTimeout: '2m',
  heartbeatTimeout: '10s',
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumAttempts: 3 },
});
/**
 * Tools heartbeat, so a worker that dies mid-tool is noticed in seconds, not minutes. What they
 * throw is our own MongoDB or Temporal being down (refusals come back as results): retried for
 * up to 10 minutes, then the turn answers with an error.
 */
const tools = proxyActivities<AgentToolActivities>({
  startToCloseTimeout: '5m',
  scheduleToCloseTimeout: '10m',
  heartbeatTimeout: '10s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' },
});
/** A shell command is not idempotent: it runs at most once. */
const shell = proxyActivities<AgentToolActivities>({
  startToCloseTimeout: '15m',
  heartbeatTimeout: '10s',
  retry: { maximumAttempts: 1 },
});

export const NOTICE_TEXT = 'Working on it…';
export const SHELL_INTERRUPTED =
  'The shell command was interrupted: the worker running it stopped. It may or may not have completed, and it was not run again.';

interface Outcome {
  kind: 'final' | 'error';
  text: string;
  image?: ReplyImage;
}

export async function agentTurnWorkflow(input: AgentTurnInput): Promise<ChatTurn> {
  const startedAt = Date.now();
  const outbox = new Outbox(input.messageId, input.chatId, startedAt);
  let answered = false;
  void sleep(NOTICE_AFTER_MS).then(() => {
    if (!answered) outbox.post('notice', NOTICE_TEXT);
  });

  let prompt = '';
  let turn: PreparedTurn | undefined;
  let outcome: Outcome;
  try {
    const prepared = await store.prepareTurn({ messageId: input.messageId });
    turn = prepared;
    const image = prepared.image && (await fetched(input.messageId, 'image', prepared.image));
    const audio = prepared.audio && (await fetched(input.messageId, 'audio', prepared.audio));
    const transcript = audio ? (await stt.transcribeAudio({ fileId: audio.fileId!, mime: audio.mime })).text : '';
    prompt = [prepared.text, transcript].filter(Boolean).join('\n') || (image ? '[image]' : '');
    const caller: ToolCaller = {
      chatId: input.chatId,
      messageId: input.messageId,
      ...(prepared.userId && { userId: prepared.userId }),
    };
    outcome =
      prepared.agent === 'llm'
        ? await llmAgent(input, prepared, prompt, image, caller, outbox)
        : await builtinAgent(prompt, image, caller, outbox);
  } catch (err) {
    outcome = { kind: 'error', text: describeFailure(err) };
  }
  answered = true;

  const { reply, proactive } = extractSendDirectives(outcome.text);
  let text = reply;
  for (const message of proactive) {
    if (turn?.homeChannel) outbox.post('proactive', message, { chatId: turn.homeChannel });
  }
  if (proactive.length && !turn?.homeChannel) text += '\n(Not sent: FOGHORN_WEBHOOK_HOME_CHANNEL is not set.)';
  if (!text.trim()) text = proactive.length ? `Sent to the home channel.` : 'Done.';
  outbox.post(outcome.kind, text, outcome.image && { image: outcome.image });
  await outbox.drained();

  await store.completeTurn({ messageId: input.messageId, prompt, reply: text, replyKind: outcome.kind });
  return { messageId: input.messageId, ...(turn?.userId && { userId: turn.userId }), text: prompt, reply: text };
}

/** URL media is downloaded (SSRF-guarded) into GridFS; inline media is there already. */
async function fetched(messageId: string, field: 'audio' | 'image', ref: MediaRef): Promise<MediaRef> {
  if (ref.fileId || !ref.url) return ref;
  return media.fetchMedia({ messageId, field, url: ref.url, ...(ref.mime && { mime: ref.mime }) });
}

async function runTool(caller: ToolCaller, call: ToolCall): Promise<ToolResult> {
  if (call.tool !== 'run_shell') return tools.runAgentTool({ caller, call });
  try {
    return await shell.runAgentTool({ caller, call });
  } catch (err) {
    if (err instanceof ActivityFailure && err.cause instanceof TimeoutFailure)
      return { error: true, text: SHELL_INTERRUPTED };
    throw err;
  }
}

/** Slash commands onto the shared tool set; anything else gets the help text. */
async function builtinAgent(
  prompt: string,
  image: MediaRef | undefined,
  caller: ToolCaller,
  outbox: Outbox,
): Promise<Outcome> {
  const command = parseChatCommand(prompt);
  if (command.kind === 'help') {
    const seen = image
      ? `I received your image${image.mime ? ` (${image.mime})` : ''}; the built-in agent cannot read images — set FOGHORN_LLM_BASE_URL for an agent that can.\n\n`
      : '';
    return { kind: 'final', text: seen + (command.reason ? `${command.reason}\n\n` : '') + HELP_TEXT };
  }
  outbox.progress(`Running ${command.call.tool}…`);
  const result = await runTool(caller, command.call);
  return { kind: result.error ? 'error' : 'final', text: result.text, ...(result.image && { image: result.image }) };
}

/** The tool-calling loop: each model step and each tool call is its own activity. */
async function llmAgent(
  input: AgentTurnInput,
  turn: PreparedTurn,
  prompt: string,
  image: MediaRef | undefined,
  caller: ToolCaller,
  outbox: Outbox,
): Promise<Outcome> {
  const messages: AgentMessage[] = agentConversation(input.history, prompt, turn.userId);
  let chart: ReplyImage | undefined;
  for (let step = 0; step < MAX_AGENT_STEPS; step++) {
    const answer = await llm.llmAgentStep({
      messages,
      shell: turn.shell,
      ...(image?.fileId && { imageFileId: image.fileId }),
    });
    if (answer.toolCalls.length === 0) return { kind: 'final', text: answer.content, ...(chart && { image: chart }) };
    messages.push({ role: 'assistant', content: answer.content, toolCalls: answer.toolCalls });
    for (const call of answer.toolCalls) {
      outbox.progress(`Running ${call.tool}…`);
      const result: ToolResult = TOOL_NAMES.includes(call.tool as ToolName)
        ? await runTool(caller, { tool: call.tool as ToolName, args: call.args })
        : { text: `Unknown tool ${call.tool}.`, error: true };
      if (result.image) chart = result.image;
      messages.push({ role: 'tool', toolCallId: call.id, content: result.text });
    }
  }
  return {
    kind: 'final',
    text: `I stopped after ${MAX_AGENT_STEPS} steps without a final answer; please narrow the request.`,
    ...(chart && { image: chart }),
  };
}

/** What the user reads when a turn fails: refusals carry their own explanation. */
function describeFailure(err: unknown): string {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure && cause.nonRetryable) return cause.message;
  return `Sorry, that failed: ${(cause as Error | undefined)?.message ?? 'unknown error'}`;
}
