import { WorkflowIdReusePolicy, type Client } from '@temporalio/client';
import type { Logger } from 'pino';
import { markQueued, undispatchedMessages } from '../store/chat';
import { chatWorkflow } from '../workflows/chat';
import { chatMessageSignal, chatWorkflowId } from '../workflows/chat-messages';

export interface Dispatcher {
  client: Client;
  taskQueue: string;
}

/**
 * Hands a stored message to its chat's workflow (signal-with-start: the first message of a
 * chat starts it). Duplicate deliveries are dropped by the workflow, so this can be retried.
 */
export async function dispatchMessage(
  d: Dispatcher,
  message: { messageId: string; chatId: string; acceptedAt: Date },
): Promise<void> {
  await d.client.workflow.signalWithStart(chatWorkflow, {
    workflowId: chatWorkflowId(message.chatId),
    taskQueue: d.taskQueue,
    args: [{ chatId: message.chatId }],
    signal: chatMessageSignal,
    signalArgs: [{ messageId: message.messageId, acceptedAt: message.acceptedAt.toISOString() }],
    workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
  });
  await markQueued(message.messageId);
}

/**
 * Messages stored but never handed over (Temporal was down, or the process died in between).
 * Three times the hand-over deadline, so a slow hand-over is not doubled.
 */
const SWEEP_AFTER_MS = 15_000;
const SWEEP_EVERY_MS = 5_000;

/**
 * Re-dispatches stored messages that did not reach Temporal, oldest first, until stopped. This
 * is what makes "accepted" mean "will be answered" across crashes and outages. One sweep at a
 * time; stopping interrupts a sweep between messages.
 */
export function startSweeper(d: Dispatcher, logger: Logger): { stop(): Promise<void> } {
  let stopped = false;
  let sweeping: Promise<void> | undefined;
  const sweep = async () => {
    try {
      for (const m of await undispatchedMessages(new Date(Date.now() - SWEEP_AFTER_MS))) {
        if (stopped) return;
        await dispatchMessage(d, { messageId: m.messageId, chatId: m.chatId, acceptedAt: m.acceptedAt });
        logger.info({ messageId: m.messageId, chatId: m.chatId }, 'late message dispatched');
      }
    } catch (err) {
      logger.warn({ err }, 'dispatch sweep failed; will retry');
    }
  };
  const tick = () => {
    if (stopped || sweeping) return;
    sweeping = sweep().finally(() => (sweeping = undefined));
  };
  const timer = setInterval(tick, SWEEP_EVERY_MS);
  tick();
  return {
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      await sweeping;
    },
  };
}
