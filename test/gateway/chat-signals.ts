import type { Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { chatWorkflowId, type QueuedMessage } from '../../workflows/chat-messages';

/**
 * The hand-overs a chat workflow received, as Temporal recorded them: per signal, the message ids
 * it carried, in order (`chatMessages` carries a batch, the older `chatMessage` one message).
 * The chat's current run: the tests' chats neither idle out nor continue as new.
 */
export async function signalledBatches(client: Client, chatId: string): Promise<string[][]> {
  const history = await client.workflow.getHandle(chatWorkflowId(chatId)).fetchHistory();
  return (history.events ?? []).flatMap((event) => {
    const signal = event.workflowExecutionSignaledEventAttributes;
    if (!signal) return [];
    const arg = defaultPayloadConverter.fromPayload<QueuedMessage[] | QueuedMessage>(signal.input!.payloads![0]!);
    return [(Array.isArray(arg) ? arg : [arg]).map((m) => m.messageId)];
  });
}

/** Message ids in the order the chat workflow first heard of them (a re-signalled id counts once). */
export const firstSignalled = (batches: string[][]) => [...new Set(batches.flat())];
