import type { Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { chatWorkflowId, type QueuedMessage } from '../../workflows/chat-messages';

/**
 * The hand-overs a chat workflow received, as Temporal recorded them: per signal, the message ids
 * it carried, in order (each `chatMessages` signal carries a batch).
 * The chat's current run: the tests' chats neither idle out nor continue as new.
 */
export async function signalledBatches(client: Client, chatId: string): Promise<string[][]> {
  const history = await client.workflow.getHandle(chatWorkflowId(chatId)).fetchHistory();
  return (history.events ?? []).flatMap((event) => {
    const signal = event.workflowExecutionSignaledEventAttributes;
    if (!signal) return [];
    const batch = defaultPayloadConverter.fromPayload<QueuedMessage[]>(signal.input!.payloads![0]!);
    return [batch.map((m) => m.messageId)];
  });
}

/** Message ids in the order the chat workflow first heard of them (a re-signalled id counts once). */
export const firstSignalled = (batches: string[][]) => [...new Set(batches.flat())];
