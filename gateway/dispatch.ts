import type { Logger } from 'pino';
import { handOverLate, type ChatDispatcher } from '../operations/chat-dispatch';

/** The gateway's Temporal side: which client and task queue its chat workflows run on. */
export type Dispatcher = ChatDispatcher;

/**
 * Messages stored but never handed over (Temporal was down, or the process died in between).
 * Three times the signal deadline, past the accept path's own retries in the usual case; an
 * overlap only re-signals messages the chat workflow drops as duplicates.
 */
const SWEEP_AFTER_MS = 15_000;
const SWEEP_EVERY_MS = 5_000;

/**
 * Hands over stored messages that did not reach Temporal, chat by chat in acceptance order
 * (operations/chat-dispatch.ts), until stopped. This is what makes "accepted" mean "will be
 * answered" across crashes and outages. One sweep at a time; stopping interrupts a sweep
 * between messages.
 */
export function startSweeper(d: Dispatcher, logger: Logger): { stop(): Promise<void> } {
  let stopped = false;
  let sweeping: Promise<void> | undefined;
  const sweep = async () => {
    try {
      await handOverLate(d, new Date(Date.now() - SWEEP_AFTER_MS), {
        shouldStop: () => stopped,
        onHandedOver: (m) => logger.info({ messageId: m.messageId, chatId: m.chatId }, 'late message dispatched'),
      });
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
