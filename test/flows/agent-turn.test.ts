import { ApplicationFailure } from '@temporalio/common';
import type { AgentTurnInput } from '../../workflows/chat-messages';
import type { agentTurnWorkflow } from '../../workflows/agent-turn';
import { HELP_TEXT } from '../../domain/chatops';
import { useFlowEnv } from '../harness/flow-env';
import { asActivities, createFakes, gate, heldWithHeartbeats, inputs, until, type Fakes } from './fakes';

/**
 * One chat turn (workflows/agent-turn.ts) with fake activities: the built-in agent's commands and
 * help, the LLM agent's tool loop, voice fetched and transcribed, the notice when the reply is
 * slow, proactive messages to the home channel, and a failure answered with an error reply.
 * Callbacks go out in `seq` order, and the turn is recorded last.
 */

let flow: Awaited<ReturnType<typeof useFlowEnv>>;
beforeAll(async () => {
  flow = await useFlowEnv();
}, 120_000);
afterAll(() => flow?.stop());

let turns = 0;
const callbacks = (fakes: Fakes) => inputs(fakes.deliverCallback);

async function turn(fakes: Fakes, input: Partial<AgentTurnInput> = {}, during?: () => Promise<void>) {
  const messageId = `msg-${++turns}`;
  return flow.run(asActivities(fakes), async (taskQueue) => {
    const handle = await flow.client.workflow.start<typeof agentTurnWorkflow>('agentTurnWorkflow', {
      taskQueue,
      workflowId: messageId,
      args: [{ messageId, chatId: 'room-1', history: [], ...input }],
    });
    await during?.();
    return { messageId, result: await handle.result() };
  });
}

describe('an agent turn', () => {
  it('runs a slash command through the shared tools and answers with its result', async () => {
    const fakes = createFakes();
    fakes.prepareTurn.mockResolvedValue({
      chatId: 'room-1',
      userId: 'u-ana',
      text: '/ack INC-9 on it',
      agent: 'builtin',
      shell: false,
    });
    fakes.runAgentTool.mockResolvedValue({ text: 'INC-9 acknowledged.' });
    const { messageId, result } = await turn(fakes);
    expect(inputs(fakes.runAgentTool)).toEqual([
      {
        caller: { chatId: 'room-1', messageId, userId: 'u-ana' },
        call: { tool: 'acknowledge_incident', args: { name: 'INC-9', message: 'on it' } },
      },
    ]);
    expect(callbacks(fakes).filter((c) => c.kind !== 'notice')).toEqual([
      expect.objectContaining({ messageId, chatId: 'room-1', kind: 'final', text: 'INC-9 acknowledged.' }),
    ]);
    expect(inputs(fakes.completeTurn)).toEqual([
      { messageId, prompt: '/ack INC-9 on it', reply: 'INC-9 acknowledged.', replyKind: 'final' },
    ]);
    expect(result).toEqual({ messageId, userId: 'u-ana', text: '/ack INC-9 on it', reply: 'INC-9 acknowledged.' });
  });

  it('answers a tool’s refusal as an error reply, and anything that is not a command with the help text', async () => {
    const fakes = createFakes();
    fakes.prepareTurn.mockResolvedValue({ chatId: 'room-1', text: '/ack INC-404', agent: 'builtin', shell: false });
    fakes.runAgentTool.mockResolvedValue({ text: 'No incident INC-404.', error: true });
    await turn(fakes);
    expect(callbacks(fakes).find((c) => c.kind !== 'notice')).toMatchObject({
      kind: 'error',
      text: 'No incident INC-404.',
    });
    expect(inputs(fakes.completeTurn)[0]).toMatchObject({ replyKind: 'error' });

    const help = createFakes();
    help.prepareTurn.mockResolvedValue({ chatId: 'room-1', text: 'hello?', agent: 'builtin', shell: false });
    await turn(help);
    expect(help.runAgentTool).not.toHaveBeenCalled();
    expect(callbacks(help).find((c) => c.kind === 'final')?.text).toBe(
      `Not a command: commands start with /\n\n${HELP_TEXT}`,
    );
  });

  it('runs the LLM agent’s tool calls and gives the model their results until it answers', async () => {
    const fakes = createFakes();
    fakes.prepareTurn.mockResolvedValue({
      chatId: 'room-1',
      userId: 'u-ana',
      text: 'what is open?',
      agent: 'llm',
      shell: false,
    });
    fakes.llmAgentStep
      .mockResolvedValueOnce({ content: '', toolCalls: [{ id: 'call-1', tool: 'list_incidents', args: {} }] })
      .mockResolvedValueOnce({ content: 'One incident is open: INC-3.', toolCalls: [] });
    fakes.runAgentTool.mockResolvedValue({ text: 'INC-3 Escalated critical shop/api' });
    const history = [{ messageId: 'msg-0', userId: 'u-ana', text: 'hi', reply: 'Hello.' }];
    await turn(fakes, { history });
    expect(inputs(fakes.runAgentTool)).toEqual([
      expect.objectContaining({ call: { tool: 'list_incidents', args: {} } }),
    ]);
    const [first, second] = inputs(fakes.llmAgentStep);
    // The chat's earlier turns and the prompt; then the tool's result for the model's call.
    expect(first.messages.slice(1)).toEqual([
      { role: 'user', content: '[u-ana] hi' },
      { role: 'assistant', content: 'Hello.' },
      { role: 'user', content: '[u-ana] what is open?' },
    ]);
    expect(second.messages.slice(-1)).toEqual([
      { role: 'tool', toolCallId: 'call-1', content: 'INC-3 Escalated critical shop/api' },
    ]);
    expect(callbacks(fakes).find((c) => c.kind === 'final')?.text).toBe('One incident is open: INC-3.');
  });

  it('fetches URL voice media and transcribes it: the transcript is the prompt', async () => {
    const fakes = createFakes();
    fakes.prepareTurn.mockResolvedValue({
      chatId: 'room-1',
      audio: { url: 'https://media.example.com/v.ogg', mime: 'audio/ogg' },
      agent: 'builtin',
      shell: false,
    });
    fakes.transcribeAudio.mockResolvedValue({ text: '/help', backend: 'whisper' });
    const { messageId } = await turn(fakes);
    expect(inputs(fakes.fetchMedia)).toEqual([
      { messageId, field: 'audio', url: 'https://media.example.com/v.ogg', mime: 'audio/ogg' },
    ]);
    expect(inputs(fakes.transcribeAudio)).toEqual([{ fileId: 'file-audio', mime: 'audio/ogg' }]);
    expect(inputs(fakes.completeTurn)[0]).toMatchObject({ prompt: '/help', replyKind: 'final' });
  });

  it('posts the notice when the reply is not ready in time, before the reply, in seq order', async () => {
    const fakes = createFakes();
    fakes.prepareTurn.mockResolvedValue({ chatId: 'room-1', text: '/incidents', agent: 'builtin', shell: false });
    const slow = gate();
    fakes.runAgentTool.mockImplementation(async () => {
      await heldWithHeartbeats(slow);
      return { text: 'done' };
    });
    await turn(fakes, {}, async () => {
      await until(() => fakes.runAgentTool.mock.calls.length > 0, 'the tool');
      await flow.env.sleep(5_000);
      await until(() => callbacks(fakes).some((c) => c.kind === 'notice'), 'the notice');
      slow.open();
    });
    expect(callbacks(fakes).map((c) => [c.kind, c.seq, c.text])).toEqual([
      ['notice', 1, 'Working on it…'],
      ['final', 2, 'done'],
    ]);
  });

  it('sends @send lines to the home channel as proactive messages and keeps the rest as the reply', async () => {
    const fakes = createFakes();
    fakes.prepareTurn.mockResolvedValue({
      chatId: 'room-1',
      text: 'tell ops',
      agent: 'llm',
      shell: false,
      homeChannel: 'ops-room',
    });
    fakes.llmAgentStep.mockResolvedValue({ content: 'Told them.\n@send webhook Deploy of api paused', toolCalls: [] });
    await turn(fakes);
    expect(callbacks(fakes).filter((c) => c.kind !== 'notice')).toEqual([
      expect.objectContaining({ kind: 'proactive', chatId: 'ops-room', text: 'Deploy of api paused' }),
      expect.objectContaining({ kind: 'final', chatId: 'room-1', text: 'Told them.' }),
    ]);
  });

  it('never fails: a refusal becomes an error reply the user can act on', async () => {
    const fakes = createFakes();
    fakes.prepareTurn.mockRejectedValue(
      ApplicationFailure.nonRetryable('message msg-x is not stored', 'MessageMissing'),
    );
    const { messageId, result } = await turn(fakes);
    expect(callbacks(fakes).find((c) => c.kind === 'error')?.text).toBe('message msg-x is not stored');
    expect(inputs(fakes.completeTurn)).toEqual([
      { messageId, prompt: '', reply: 'message msg-x is not stored', replyKind: 'error' },
    ]);
    expect(result).toEqual({ messageId, text: '', reply: 'message msg-x is not stored' });
  });
});
