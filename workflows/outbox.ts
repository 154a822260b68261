import { log, proxyActivities } from '@temporalio/workflow';
import type { CallbackActivities } from '../activities/callbacks';
import { NOTICE_AFTER_MS, PROGRESS_EVERY_MS, truncateReply, type CallbackKind, type ReplyImage } from '../domain/chat';
import { RELIABLE_DELIVERY_WINDOW_MS } from '../domain/delivery';

/**
 * Final, error and proactive messages must arrive: keep trying for a day (delays set by the
 * activity), so a receiver down for hours still gets them. The day is a product choice (DESIGN §10).
 */
const reliable = proxyActivities<CallbackActivities>({
  startToCloseTimeout: '30s',
  scheduleToCloseTimeout: RELIABLE_DELIVERY_WINDOW_MS,
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30m' },
});
/** Notices and progress are stale soon: three quick tries on purpose, then the turn goes on. */
const bestEffort = proxyActivities<CallbackActivities>({
  startToCloseTimeout: '30s',
  scheduleToCloseTimeout: '2m',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumAttempts: 3 },
});

/**
 * The callbacks of one turn, delivered one after another in `seq` order: a retried callback
 * holds back the ones after it, so the receiver never sees them out of order.
 */
export class Outbox {
  private seq = 0;
  private chain: Promise<void> = Promise.resolve();
  private lastProgressAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly messageId: string,
    private readonly chatId: string,
    private readonly startedAt: number,
  ) {}

  post(kind: CallbackKind, text: string, opts: { chatId?: string; image?: ReplyImage } = {}): void {
    const request = {
      messageId: this.messageId,
      chatId: opts.chatId ?? this.chatId,
      kind,
      seq: ++this.seq,
      text: truncateReply(text),
      ...(opts.image && { image: opts.image }),
    };
    const delivery = kind === 'notice' || kind === 'progress' ? bestEffort : reliable;
    this.chain = this.chain.then(async () => {
      try {
        await delivery.deliverCallback(request);
      } catch (err) {
        // Out of time or tries: the delivery record keeps the last error for `gateway status`.
        log.warn('callback given up', { webhookId: `${this.messageId}.${request.seq}`, err });
      }
    });
  }

  /** Progress only once the notice window has passed, and at most one per PROGRESS_EVERY_MS. */
  progress(text: string): void {
    const now = Date.now();
    if (now - this.startedAt < NOTICE_AFTER_MS || now - this.lastProgressAt < PROGRESS_EVERY_MS) return;
    this.lastProgressAt = now;
    this.post('progress', text);
  }

  /** Resolves when every posted callback was delivered or given up. */
  drained(): Promise<void> {
    return this.chain;
  }
}
