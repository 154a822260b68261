import { WorkflowIdReusePolicy, type Client } from '@temporalio/client';
import { chatsWithUndispatched, markQueued, undispatchedMessagesOf } from '../store/chat';
import { chatWorkflow } from '../workflows/chat';
import { chatMessageSignal, chatWorkflowId } from '../workflows/chat-messages';

/**
 * Handing stored chat messages over to their chat workflow (DESIGN §10), shared by the gateway's
 * accept path, its sweeper and the reconciler.
 *
 * Order: the chat workflow queues messages by `acceptedAt`, but it cannot un-run a turn, so a
 * message must never reach it before an earlier accepted message of the same chat. Hence:
 * - before signalling a message, every earlier message of its chat that is stored but not handed
 *   over (read from MongoDB, so it holds across processes) is signalled first, in acceptance order;
 *   if one of them fails, the later ones are not signalled (they wait for the next attempt);
 * - within a process, hand-overs of one chat run one at a time, in the order they were accepted;
 * - the sweeper and the reconciler hand over chat by chat, each chat in acceptance order.
 * A message signalled twice is harmless: the chat workflow drops duplicate ids.
 */
export interface ChatDispatcher {
  client: Client;
  taskQueue: string;
}

/** How long one signal-with-start may take before that hand-over counts as failed. */
export const SIGNAL_DEADLINE_MS = 5_000;
/** Messages read from MongoDB per query. */
const PAGE = 100;
/** Chats failing in a row before a sweep gives up (Temporal or MongoDB is down, not one chat). */
const GIVE_UP_AFTER_FAILED_CHATS = 3;

export interface HandedOverMessage {
  messageId: string;
  chatId: string;
  acceptedAt: Date;
}

/** A later message of a chat is not signalled while an earlier one could not be. */
export class EarlierHandOverFailed extends Error {
  constructor(chatId: string) {
    super(`an earlier hand-over of chat ${chatId} failed in this process: left to the sweeper, in order`);
    this.name = 'EarlierHandOverFailed';
  }
}

/** Some chats could not be handed over; the others were. */
export class LateHandOverError extends Error {
  constructor(
    /** Messages that were handed over before giving up. */
    readonly handedOver: number,
    /** Chats left with messages not handed over (their later messages were not signalled either). */
    readonly failedChats: string[],
    options: { cause: unknown },
  ) {
    super(
      `${failedChats.length} chat(s) not handed over (${handedOver} message(s) were): ${
        (options.cause as Error | undefined)?.message ?? String(options.cause)
      }`,
      options,
    );
    this.name = 'LateHandOverError';
  }
}

/** Signal-with-start of the chat workflow (the first message starts it), then mark it queued. */
async function signal(d: ChatDispatcher, m: HandedOverMessage): Promise<void> {
  await d.client.withDeadline(Date.now() + SIGNAL_DEADLINE_MS, () =>
    d.client.workflow.signalWithStart(chatWorkflow, {
      workflowId: chatWorkflowId(m.chatId),
      taskQueue: d.taskQueue,
      args: [{ chatId: m.chatId }],
      signal: chatMessageSignal,
      signalArgs: [{ messageId: m.messageId, acceptedAt: m.acceptedAt.toISOString() }],
      workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
    }),
  );
  await markQueued(m.messageId);
}

/**
 * Hands over, in acceptance order, every message of `chatId` stored but not handed over and
 * accepted before `bound` (or at it, with `inclusive`). Stops at the first failure (throwing it),
 * so nothing later of the chat overtakes what failed. Returns how many it handed over.
 */
async function handOverChat(
  d: ChatDispatcher,
  chatId: string,
  bound: Date,
  opts: { inclusive?: boolean; shouldStop?: () => boolean; onHandedOver?: (m: HandedOverMessage) => void },
): Promise<number> {
  let count = 0;
  const seen = new Set<string>();
  for (;;) {
    const page = await undispatchedMessagesOf(chatId, bound, { inclusive: opts.inclusive, limit: PAGE });
    const fresh = page.filter((m) => !seen.has(m.messageId));
    for (const m of fresh) {
      if (opts.shouldStop?.()) return count;
      seen.add(m.messageId);
      const message = { messageId: m.messageId, chatId, acceptedAt: m.acceptedAt };
      await signal(d, message);
      count++;
      opts.onHandedOver?.(message);
    }
    if (page.length < PAGE || fresh.length === 0) return count;
  }
}

/**
 * Per-chat hand-over queues of this process, one set per Temporal client. A job learns whether
 * the job before it (same chat) failed.
 */
const queues = new WeakMap<Client, Map<string, Promise<boolean>>>();

function inChatOrder<T>(client: Client, chatId: string, job: (earlierFailed: boolean) => Promise<T>): Promise<T> {
  let chats = queues.get(client);
  if (!chats) queues.set(client, (chats = new Map()));
  const result = (chats.get(chatId) ?? Promise.resolve(true)).then((ok) => job(!ok));
  const tail = result.then(
    () => true,
    () => false,
  );
  chats.set(chatId, tail);
  void tail.then(() => {
    if (chats.get(chatId) === tail) chats.delete(chatId);
  });
  return result;
}

/**
 * The accept path: takes the chat's place in this process's hand-over queue at once (call it
 * right after stamping `acceptedAt`, before storing), then, once `stored` resolves, hands over
 * every earlier message of the chat still not handed over and this one, in acceptance order.
 * Resolves to the number of messages handed over (0 when `stored` failed: nothing was accepted).
 * Rejects when a hand-over failed, or when the previous hand-over of the chat in this process
 * failed ({@link EarlierHandOverFailed}): the message then waits, in order, for the sweeper.
 */
export function handOverMessage(
  d: ChatDispatcher,
  message: HandedOverMessage,
  opts: { stored?: Promise<unknown>; onHandedOver?: (m: HandedOverMessage) => void } = {},
): Promise<number> {
  return inChatOrder(d.client, message.chatId, async (earlierFailed) => {
    try {
      await opts.stored;
    } catch {
      return 0; // not stored, so not accepted: the request itself fails
    }
    if (earlierFailed) throw new EarlierHandOverFailed(message.chatId);
    return handOverChat(d, message.chatId, message.acceptedAt, {
      inclusive: true,
      ...(opts.onHandedOver && { onHandedOver: opts.onHandedOver }),
    });
  });
}

/**
 * {@link handOverLateMessages} with a report per message handed over (the gateway's sweeper logs
 * each one).
 */
export async function handOverLate(
  d: ChatDispatcher,
  olderThan: Date,
  opts: { shouldStop?: () => boolean; onHandedOver?: (m: HandedOverMessage) => void } = {},
): Promise<number> {
  let count = 0;
  const done: string[] = [];
  const failed: string[] = [];
  let firstError: unknown;
  let failedInARow = 0;
  sweep: for (;;) {
    if (opts.shouldStop?.()) break;
    const chats = await chatsWithUndispatched(olderThan, done);
    if (chats.length === 0) break;
    for (const chatId of chats) {
      if (opts.shouldStop?.() || failedInARow >= GIVE_UP_AFTER_FAILED_CHATS) break sweep;
      done.push(chatId);
      try {
        count += await inChatOrder(d.client, chatId, () => handOverChat(d, chatId, olderThan, opts));
        failedInARow = 0;
      } catch (err) {
        failed.push(chatId);
        firstError ??= err;
        failedInARow++;
      }
    }
  }
  if (failed.length) throw new LateHandOverError(count, failed, { cause: firstError });
  return count;
}

/**
 * Hands over, per chat in acceptance order, every stored message accepted before `olderThan`
 * that was never handed over, and returns how many it handed over. Chats are taken oldest
 * message first; within a chat it stops at the first failure, so no later message of that chat
 * overtakes it. `shouldStop` is checked between messages (e.g. an activity's cancellation);
 * stopping returns the count so far. When a chat fails the next chats are still tried (three
 * failing in a row end the call: Temporal or MongoDB is down); then it throws a
 * {@link LateHandOverError} carrying `handedOver` (the count) and `failedChats`.
 * Idempotent: a second call finds nothing (or re-signals a message whose "queued" mark was lost,
 * which the chat workflow drops as a duplicate).
 */
export async function handOverLateMessages(
  d: { client: Client; taskQueue: string },
  olderThan: Date,
  shouldStop?: () => boolean,
): Promise<number> {
  return handOverLate(d, olderThan, shouldStop ? { shouldStop } : {});
}
