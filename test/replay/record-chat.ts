/**
 * Records the chat histories of the batched hand-over (one `chatMessages` signal carrying
 * several messages) for the replay test, without re-recording every other workflow as
 * record.ts does:
 *
 *   npx ts-node --transpile-only test/replay/record-chat.ts [label]
 *
 * Writes test/replay/histories/<label>-chat-batched-running.pb: a chat whose first hand-over
 * carried three messages (two stored by a gateway that "died", taken along by a live one), then
 * one more, all answered, the chat still running.
 */
import { randomUUID } from 'crypto';
import { writeFile } from 'fs/promises';
import path from 'path';
import { temporal } from '@temporalio/proto';
import { saveChatMessage } from '../../store/chat';
import { chatWorkflowId } from '../../workflows/chat-messages';
import { useGateway } from '../harness/gateway';

async function main(): Promise<void> {
  const label = process.argv[2] ?? 'v0.7';
  const gw = await useGateway();
  try {
    const chatId = 'replay-chat-batched';
    const ids: string[] = [];
    for (const text of ['/help', '/incidents']) {
      const messageId = `msg-${randomUUID()}`;
      await saveChatMessage({ messageId, chatId, userId: 'alice', text });
      ids.push(messageId);
    }
    ids.push(await gw.send({ chat_id: chatId, user_id: 'alice', text: '/gateway status' }));
    for (const id of ids) await gw.reply(id, 60_000);
    ids.push(await gw.send({ chat_id: chatId, user_id: 'bob', text: '/help' }));
    await gw.reply(ids[3]!, 60_000);
    const handle = gw.client.workflow.getHandle(chatWorkflowId(chatId));
    // Polled, not awaited with result(): that would let the test server skip the chat's idle timer.
    const history = await gw.eventually(
      () => handle.fetchHistory(),
      (h) => (h.events ?? []).filter((e) => e.childWorkflowExecutionCompletedEventAttributes).length === 4,
      60_000,
    );
    const signals = (history.events ?? []).filter((e) => e.workflowExecutionSignaledEventAttributes);
    if (signals[0]?.workflowExecutionSignaledEventAttributes?.signalName !== 'chatMessages')
      throw new Error('the first hand-over was not a batched chatMessages signal');
    const file = path.join(__dirname, 'histories', `${label}-chat-batched-running.pb`);
    await writeFile(file, temporal.api.history.v1.History.encode(history).finish());
    console.log(`recorded ${path.basename(file)} (${history.events?.length} events, ${signals.length} signals)`);
  } finally {
    await gw.stop();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
