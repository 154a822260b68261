/**
 * One conversation (workflow id `chat-<chat_id>`, DESIGN §10): messages queue in arrival order
 * and run one at a time as agent-turn child workflows (id = message id), each seeing the last
 * CONTEXT_TURNS turns. One at a time is what keeps replies, and their callbacks, in order.
 */
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  ChildWorkflowFailure,
  executeChild,
  log,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy } from '@temporalio/common';
import type { ChatActivities } from '../activities/chat';
import { CONTEXT_TURNS, type ChatTurn } from '../domain/chat';
import { agentTurnWorkflow } from './agent-turn';
import { chatMessagesSignal, chatStateQuery, type ChatWorkflowInput, type QueuedMessage } from './chat-messages';
import { STORE_CALL_OPTIONS } from './store-options';

const chatStore = proxyActivities<ChatActivities>(STORE_CALL_OPTIONS);

/** A chat that stays quiet this long completes; its next message starts a fresh run. */
const IDLE_TIMEOUT = '1h';
/** Turns per run before continue-as-new keeps the history small. */
const TURNS_PER_RUN = 100;
/** Message ids remembered to drop a duplicate signal (the gateway's sweeper may resend). */
const RECENT_IDS = 200;

export async function chatWorkflow(input: ChatWorkflowInput): Promise<void> {
  const pending: QueuedMessage[] = input.carried?.pending ?? [];
  const recent: string[] = input.carried?.recent ?? [];
  let current: string | undefined;
  let turns = 0;

  const enqueue = (message: QueuedMessage) => {
    if (recent.includes(message.messageId) || pending.some((m) => m.messageId === message.messageId)) return;
    // Keep acceptance order even when the sweeper delivers a late message.
    const at = pending.findIndex((m) => m.acceptedAt > message.acceptedAt);
    if (at < 0) pending.push(message);
    else pending.splice(at, 0, message);
  };
  setHandler(chatMessagesSignal, (messages) => messages.forEach(enqueue));
  setHandler(chatStateQuery, () => ({ queued: pending.length, turns, ...(current && { current }) }));

  const history: ChatTurn[] =
    input.carried?.history ?? (await chatStore.loadChatHistory({ chatId: input.chatId, limit: CONTEXT_TURNS }));

  for (;;) {
    if (!(await condition(() => pending.length > 0, IDLE_TIMEOUT))) return;
    const next = pending.shift()!;
    current = next.messageId;
    recent.push(next.messageId);
    if (recent.length > RECENT_IDS) recent.shift();
    try {
      const turn = await executeChild(agentTurnWorkflow, {
        workflowId: next.messageId,
        args: [{ messageId: next.messageId, chatId: input.chatId, history: history.slice(-CONTEXT_TURNS) }],
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      });
      history.push(turn);
      if (history.length > CONTEXT_TURNS) history.splice(0, history.length - CONTEXT_TURNS);
    } catch (err) {
      // Already run by an earlier run of this chat: its reply went out then.
      if (err instanceof WorkflowExecutionAlreadyStartedError)
        log.info('turn already run', { messageId: next.messageId });
      // A turn answers its own failures with an error callback; one broken turn must not end the chat.
      else if (err instanceof ChildWorkflowFailure) log.error('turn failed', { messageId: next.messageId, err });
      else throw err;
    }
    current = undefined;
    turns++;
    if (turns >= (input.turnsPerRun ?? TURNS_PER_RUN) || workflowInfo().continueAsNewSuggested) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof chatWorkflow>({ ...input, carried: { history, pending, recent } });
    }
  }
}
