import { WorkflowIdReusePolicy, type Client } from '@temporalio/client';
import { chatsWithUndispatched, markQueued, undispatchedMessagesOf } from '../store/chat';
import { chatWorkflow } from '../workflows/chat';
import { chatMessagesSignal, chatWorkflowId } from '../workflows/chat-messages';

/**
 * Handing stored chat messages over to their chat workflow (DESIGN §10), shared by the gateway's
 * accept path ({@link ChatHandOverQueue}), its sweeper and the reconciler ({@link handOverLate}).
 *
 * The 202 waits only for the message to be stored; the hand-over runs after it, in batches: one
 * signal-with-start per chat carries every message of the chat stored and not yet handed over.
 *
 * Order: the chat workflow queues messages by `acceptedAt`, but it cannot un-run a turn, so a
 * message must never reach it before an earlier accepted message of the same chat. Hence:
 * - a hand-over reads the chat's messages stored but not handed over from MongoDB (so it holds
 *   across processes) and signals them in acceptance order, a page at a time; if a signal fails,
 *   nothing later of the chat is signalled (the next attempt reads them all again);
 * - within a process, one hand-over of a chat runs at a time (the queue, the sweeper and the
 *   reconciler take turns), and the queue does not hand over past an earlier message of the
 *   chat whose insert this process has not finished;
 * - the sweeper and the reconciler hand over chat by chat, each chat in acceptance order.
 * A message signalled twice is harmless: the chat workflow drops duplicate ids.
 */
export interface ChatDispatcher {
  client: Client;
  taskQueue: string;
}

/** How long one signal-with-start may take before that hand-over counts as failed. */
export const SIGNAL_DEADLINE_MS = 5_000;
/** Messages per signal, and read from MongoDB per chat and query. */
const PAGE = 100;
/** Chats failing in a row before a sweep gives up (Temporal or MongoDB is down, not one chat). */
const GIVE_UP_AFTER_FAILED_CHATS = 3;
/** Chats the accept path hands over at once per queue; the others wait (and their batches grow). */
const PARALLEL_CHATS = 32;
/**
 * Retries of a chat's failed hand-over by the accept path, for a short Temporal outage; after
 * them the sweeper owns the chat's messages (SWEEP_AFTER_MS in gateway/dispatch.ts).
 */
const RETRY_DELAYS_MS = [1_000, 3_000];

export interface HandedOverMessage {
  messageId: string;
  chatId: string;
  acceptedAt: Date;
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

/**
 * One signal-with-start of the chat workflow (the first batch starts it) carrying a batch of the
 * chat's messages in acceptance order. The caller then marks them queued.
 */
async function signalBatch(d: ChatDispatcher, chatId: string, batch: HandedOverMessage[]): Promise<void> {
  await d.client.withDeadline(Date.now() + SIGNAL_DEADLINE_MS, () =>
    d.client.workflow.signalWithStart(chatWorkflow, {
      workflowId: chatWorkflowId(chatId),
      taskQueue: d.taskQueue,
      args: [{ chatId }],
      signal: chatMessagesSignal,
      signalArgs: [batch.map((m) => ({ messageId: m.messageId, acceptedAt: m.acceptedAt.toISOString() }))],
      workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
    }),
  );
}

/**
 * Hands over, in acceptance order and one signal per page, every message of `chatId` stored but
 * not handed over and accepted before `bound` (or at it, with `inclusive`). Stops at the first
 * failure (throwing it), so nothing later of the chat overtakes what failed. Returns how many it
 * handed over.
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
    const page = await undispatchedMessagesOf([chatId], bound, { inclusive: opts.inclusive, limit: PAGE });
    const fresh = page
      .filter((m) => !seen.has(m.messageId))
      .map((m) => ({ messageId: m.messageId, chatId, acceptedAt: m.acceptedAt }));
    if (fresh.length === 0 || opts.shouldStop?.()) return count;
    for (const m of fresh) seen.add(m.messageId);
    await signalBatch(d, chatId, fresh);
    await markQueued(fresh.map((m) => m.messageId));
    count += fresh.length;
    if (opts.onHandedOver) fresh.forEach(opts.onHandedOver);
    if (page.length < PAGE) return count;
  }
}

/** Per-chat turns of this process, one set per Temporal client: one hand-over of a chat at a time. */
const turns = new WeakMap<Client, Map<string, Promise<unknown>>>();

function oneAtATime<T>(client: Client, chatId: string, job: () => Promise<T>): Promise<T> {
  let chats = turns.get(client);
  if (!chats) turns.set(client, (chats = new Map()));
  const result = (chats.get(chatId) ?? Promise.resolve()).then(job);
  const tail = result.catch(() => undefined);
  chats.set(chatId, tail);
  void tail.then(() => {
    if (chats.get(chatId) === tail) chats.delete(chatId);
  });
  return result;
}

/** What a {@link ChatHandOverQueue} reports (the gateway logs it). */
export interface HandOverEvents {
  /** A hand-over of the chat failed; `retryInMs` is absent when it is left to the sweeper. */
  onFailed?(chatId: string, err: unknown, retryInMs?: number): void;
}

/**
 * The accept path's hand-over: after the 202, asynchronous and batched. A stored message asks
 * for a hand-over of its chat; the queue works in rounds: one read of every waiting chat's
 * messages not yet handed over (one query however many chats), then per chat one signal
 * carrying all of its messages, then one write marking every signalled message queued. A chat
 * whose signal is in flight waits for the next round, so messages stored meanwhile go together.
 * A failed hand-over is retried a few times, then left to the sweeper: stored is accepted
 * either way.
 */
export class ChatHandOverQueue {
  /** Acceptance stamps of this process's inserts that have not finished, per chat. */
  private readonly inserting = new Map<string, Date[]>();
  /** Chats with messages stored since their last read. */
  private readonly wanted = new Set<string>();
  /** Chats read in a round whose signal (and mark) has not finished. */
  private readonly busy = new Set<string>();
  private reading = false;
  /** No round reads before this (see pump). */
  private nextReadAt = 0;
  private paced?: NodeJS.Timeout;
  private readonly failures = new Map<string, number>();
  private readonly retries = new Map<string, NodeJS.Timeout>();
  private readonly rounds = new Set<Promise<void>>();
  private marks: { ids: string[]; resolve(): void; reject(err: unknown): void }[] = [];
  private marking = false;
  private stopped = false;

  constructor(
    private readonly d: ChatDispatcher,
    private readonly events: HandOverEvents = {},
  ) {}

  /**
   * Call with the message's acceptance stamp right before storing it, then `settled()` once the
   * insert finished, stored or not (it asks for the chat's hand-over). Until then no hand-over of
   * this queue goes past the stamp, so a message whose insert finished first never overtakes an
   * earlier one of its chat.
   */
  accepting(chatId: string, acceptedAt: Date): { settled(): void } {
    let stamps = this.inserting.get(chatId);
    if (!stamps) this.inserting.set(chatId, (stamps = []));
    stamps.push(acceptedAt);
    return {
      settled: () => {
        stamps.splice(stamps.indexOf(acceptedAt), 1);
        if (!stamps.length && this.inserting.get(chatId) === stamps) this.inserting.delete(chatId);
        // Also after a failed insert: later messages of the chat may have waited for it.
        this.want(chatId);
      },
    };
  }

  /** No more retries; resolves once no hand-over of this queue is waiting or running. */
  async drain(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.paced);
    this.paced = undefined;
    for (const timer of this.retries.values()) clearTimeout(timer);
    this.retries.clear();
    while (this.rounds.size) await Promise.all([...this.rounds]);
  }

  private want(chatId: string): void {
    this.wanted.add(chatId);
    this.pump();
  }

  /**
   * Starts a round for the waiting chats that are not busy, unless a read is already running or
   * the last one ended less than its own duration ago. The embedded server scans the collection
   * for the read while holding the lock every insert needs: back-to-back reads in a burst kept the
   * inserts (the 202s) waiting. Pacing keeps the reads to at most half of the time, whatever the
   * collection's size; with a small collection the pause is a few milliseconds.
   */
  private pump(): void {
    if (this.reading || this.paced || this.busy.size >= PARALLEL_CHATS) return;
    const wait = this.nextReadAt - Date.now();
    if (wait > 0 && !this.stopped) {
      this.paced = setTimeout(() => {
        this.paced = undefined;
        this.pump();
      }, wait);
      return;
    }
    const chats = [...this.wanted].filter((c) => !this.busy.has(c)).slice(0, PARALLEL_CHATS - this.busy.size);
    if (!chats.length) return;
    for (const c of chats) {
      this.wanted.delete(c);
      this.busy.add(c);
    }
    this.reading = true;
    const round = this.round(chats).finally(() => this.rounds.delete(round));
    this.rounds.add(round);
  }

  private async round(chats: string[]): Promise<void> {
    // Taken before the read: an insert that starts later gets a later stamp.
    const bounds = new Map(chats.map((c) => [c, earliest(this.inserting.get(c))]));
    const limit = PAGE * chats.length;
    let rows: Awaited<ReturnType<typeof undispatchedMessagesOf>>;
    const readStarted = Date.now();
    try {
      rows = await undispatchedMessagesOf(chats, new Date(), { inclusive: true, limit });
    } catch (err) {
      this.reading = false;
      for (const c of chats) {
        this.busy.delete(c);
        this.failed(c, err);
      }
      this.pump();
      return;
    }
    this.reading = false;
    const readEnded = Date.now();
    this.nextReadAt = readEnded + (readEnded - readStarted);
    const batches = new Map<string, HandedOverMessage[]>();
    for (const row of rows) {
      const bound = bounds.get(row.chatId);
      if (bound && row.acceptedAt >= bound) continue; // an earlier insert of the chat is still running
      let batch = batches.get(row.chatId);
      if (!batch) batches.set(row.chatId, (batch = []));
      // A signal stays small (Temporal payloads): the rest of the chat goes in the next round.
      if (batch.length === PAGE) this.wanted.add(row.chatId);
      else batch.push({ messageId: row.messageId, chatId: row.chatId, acceptedAt: row.acceptedAt });
    }
    // A cut-off read gave each chat a prefix of its messages, in order: the rest comes next round.
    if (rows.length === limit) chats.forEach((c) => this.wanted.add(c));
    this.pump(); // the next round reads while this one signals
    await Promise.all(chats.map((c) => this.handOver(c, batches.get(c) ?? [])));
  }

  private async handOver(chatId: string, batch: HandedOverMessage[]): Promise<void> {
    try {
      if (batch.length)
        await oneAtATime(this.d.client, chatId, async () => {
          await signalBatch(this.d, chatId, batch);
          await this.mark(batch.map((m) => m.messageId));
        });
      this.failures.delete(chatId);
      clearTimeout(this.retries.get(chatId));
      this.retries.delete(chatId);
    } catch (err) {
      this.failed(chatId, err);
    } finally {
      this.busy.delete(chatId);
      this.pump();
    }
  }

  private failed(chatId: string, err: unknown): void {
    const failures = this.failures.get(chatId) ?? 0;
    const delay = this.stopped ? undefined : RETRY_DELAYS_MS[failures];
    this.failures.set(chatId, failures + 1);
    if (delay === undefined) this.failures.delete(chatId);
    else if (!this.retries.has(chatId))
      this.retries.set(
        chatId,
        setTimeout(() => {
          this.retries.delete(chatId);
          this.want(chatId);
        }, delay),
      );
    try {
      this.events.onFailed?.(chatId, err, delay);
    } catch {
      // a reporting problem must not stop the queue
    }
  }

  /** Marks messages queued, one write at a time for every chat signalled meanwhile. */
  private mark(ids: string[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.marks.push({ ids, resolve, reject });
      this.flushMarks();
    });
  }

  private flushMarks(): void {
    if (this.marking || !this.marks.length) return;
    const waiting = this.marks;
    this.marks = [];
    this.marking = true;
    markQueued(waiting.flatMap((w) => w.ids))
      .then(
        () => waiting.forEach((w) => w.resolve()),
        (err: unknown) => waiting.forEach((w) => w.reject(err)),
      )
      .finally(() => {
        this.marking = false;
        this.flushMarks();
      });
  }
}

const earliest = (stamps?: Date[]) => stamps?.reduce<Date | undefined>((a, b) => (a && a <= b ? a : b), undefined);

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
        count += await oneAtATime(d.client, chatId, () => handOverChat(d, chatId, olderThan, opts));
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
 * overtakes it. `shouldStop` is checked between batches (e.g. an activity's cancellation);
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
