import type { WorkflowHandle } from '@temporalio/client';
import type { agentTurnWorkflow } from '../../workflows/agent-turn';
import type { chatWorkflow } from '../../workflows/chat';
import {
  chatMessagesSignal,
  chatStateQuery,
  chatWorkflowId,
  type ChatWorkflowInput,
} from '../../workflows/chat-messages';
import { useFlowEnv } from '../harness/flow-env';
import { asActivities, createFakes, inputs, startInput, terminateWhenIdle, until, type Fakes } from './fakes';

/**
 * A conversation (workflows/chat.ts) with fake activities: messages run one at a time as agent-turn
 * children in acceptance order, each seeing the chat's earlier turns; duplicates are dropped; a
 * turn run before is not run again; the run continues as new after `turnsPerRun` turns carrying
 * its context; an idle chat completes after an hour.
 */

let flow: Awaited<ReturnType<typeof useFlowEnv>>;
beforeAll(async () => {
  flow = await useFlowEnv();
}, 120_000);
afterAll(() => flow?.stop());

let chats = 0;

/** Fakes whose turns go to the LLM agent: "question <id>" in, "answer to <id>" out. */
function llmFakes(): Fakes {
  const fakes = createFakes();
  fakes.prepareTurn.mockImplementation(async ({ messageId }) => ({
    chatId: 'room',
    text: `question ${messageId}`,
    agent: 'llm',
    shell: false,
  }));
  fakes.llmAgentStep.mockImplementation(async ({ messages }) => ({
    content: `answer to ${messages[messages.length - 1].content.replace('question ', '')}`,
    toolCalls: [],
  }));
  return fakes;
}
const turned = (fakes: Fakes) => inputs(fakes.prepareTurn).map((t) => t.messageId as string);
const message = (chatId: string, n: number, second: number) => ({
  messageId: `${chatId}-m${n}`,
  acceptedAt: `2026-03-01T10:00:0${second}.000Z`,
});

async function withChat(
  fakes: Fakes,
  input: Partial<ChatWorkflowInput>,
  test: (chat: WorkflowHandle<typeof chatWorkflow>, chatId: string, taskQueue: string) => Promise<void>,
): Promise<void> {
  const chatId = `c${++chats}`;
  await flow.run(asActivities(fakes), async (taskQueue) => {
    const chat = await flow.client.workflow.start<typeof chatWorkflow>('chatWorkflow', {
      taskQueue,
      workflowId: chatWorkflowId(chatId),
      args: [{ chatId, ...input }],
    });
    try {
      await test(chat, chatId, taskQueue);
    } finally {
      await terminateWhenIdle([chat]);
    }
  });
}

describe('a chat', () => {
  it('runs its messages one at a time in acceptance order, each turn seeing the earlier ones; a duplicate is dropped; idle for an hour, it completes', async () => {
    const fakes = llmFakes();
    fakes.loadChatHistory.mockResolvedValue([{ messageId: 'old', text: 'question old', reply: 'answer to old' }]);
    await withChat(fakes, {}, async (chat, chatId) => {
      const [first, second] = [message(chatId, 1, 1), message(chatId, 2, 2)];
      // The later message signalled first: the chat orders by acceptance.
      await chat.signal(chatMessagesSignal, [second, first]);
      await chat.signal(chatMessagesSignal, [first]); // the sweeper's resend
      await until(() => fakes.completeTurn.mock.calls.length === 2, 'two turns');
      expect(turned(fakes)).toEqual([first.messageId, second.messageId]);
      expect(inputs(fakes.loadChatHistory)).toEqual([{ chatId, limit: 20 }]);
      // The second turn's model saw the stored turn and the first one, then its own question.
      const seen = inputs(fakes.llmAgentStep)[1].messages.slice(1);
      expect(seen).toEqual([
        { role: 'user', content: 'question old' },
        { role: 'assistant', content: 'answer to old' },
        { role: 'user', content: `question ${first.messageId}` },
        { role: 'assistant', content: `answer to ${first.messageId}` },
        { role: 'user', content: `question ${second.messageId}` },
      ]);
      await until(async () => (await chat.query(chatStateQuery)).turns === 2, 'the state');
      expect(await chat.query(chatStateQuery)).toEqual({ queued: 0, turns: 2 });

      await chat.result(); // an hour without a message
      expect(fakes.completeTurn).toHaveBeenCalledTimes(2);
    });
  });

  it('continues as new after turnsPerRun turns, carrying its context, queue and recent ids', async () => {
    const fakes = llmFakes();
    await withChat(fakes, { turnsPerRun: 1 }, async (chat, chatId) => {
      const [first, second] = [message(chatId, 1, 1), message(chatId, 2, 2)];
      await chat.signal(chatMessagesSignal, [first, second]);
      await until(() => fakes.completeTurn.mock.calls.length === 2, 'two turns');
      // The continued run gets a resend of the first message: recent ids came along, it is dropped.
      await chat.signal(chatMessagesSignal, [first]);
      await until(
        async () => (await startInput<ChatWorkflowInput>(chat)).carried?.recent.includes(second.messageId) === true,
        'the run after the second turn',
      );
      const { carried } = await startInput<ChatWorkflowInput>(chat);
      expect(carried).toEqual({
        history: [
          { messageId: first.messageId, text: `question ${first.messageId}`, reply: `answer to ${first.messageId}` },
          { messageId: second.messageId, text: `question ${second.messageId}`, reply: `answer to ${second.messageId}` },
        ],
        pending: [],
        recent: [first.messageId, second.messageId],
      });
      expect(fakes.loadChatHistory).toHaveBeenCalledTimes(1); // continued runs carry it
      await chat.result();
      expect(turned(fakes)).toEqual([first.messageId, second.messageId]);
    });
  });

  it('does not run again a turn an earlier run of the chat ran, and goes on with the next', async () => {
    const fakes = llmFakes();
    await withChat(fakes, {}, async (chat, chatId, taskQueue) => {
      const [first, second] = [message(chatId, 1, 1), message(chatId, 2, 2)];
      await flow.client.workflow.execute<typeof agentTurnWorkflow>('agentTurnWorkflow', {
        taskQueue,
        workflowId: first.messageId,
        args: [{ messageId: first.messageId, chatId, history: [] }],
      });
      await chat.signal(chatMessagesSignal, [first, second]);
      await until(() => fakes.completeTurn.mock.calls.length === 2, 'the second turn');
      expect(turned(fakes)).toEqual([first.messageId, second.messageId]);
      await until(async () => (await chat.query(chatStateQuery)).turns === 2, 'both counted');
    });
  });
});
