import type { Logger } from 'pino';
import type { ServerProcess } from './process';

const BACKOFF_MS = [500, 1_000, 2_000, 5_000, 10_000];

/**
 * Keeps an embedded server up: when it dies on its own (a crash, the OOM killer, kill -9) it is
 * started again the same way — same port, same data file — with a growing pause between failed
 * tries. The clients in this process (Mongoose, Temporal) reconnect by themselves, so a dead
 * server costs an outage of seconds instead of a dead `foghorn dev`. The returned handle's
 * fields (address, URI) are the first start's: a restart binds the same port.
 */
export async function supervise<T extends ServerProcess>(
  name: string,
  start: () => Promise<T>,
  logger: Logger,
  /**
   * Tries of the first start (with the same pauses) before giving up: more than one for a
   * process that needs the others, which may be restarting just then (a kill -9 of the
   * MongoDB-wire server while the worker connects).
   */
  firstStartTries = 1,
): Promise<T> {
  let current = await firstStart(name, start, logger, firstStartTries);
  let stopping = false;
  let restarting: Promise<void> | undefined;

  const restart = async () => {
    for (let attempt = 0; !stopping; attempt++) {
      await new Promise((r) => setTimeout(r, BACKOFF_MS[Math.min(attempt, BACKOFF_MS.length - 1)]));
      if (stopping) return;
      try {
        current = await start();
        watch(current);
        logger.warn({ server: name }, `${name} restarted`);
        return;
      } catch (err) {
        logger.error({ server: name, err }, `${name} could not be restarted; trying again`);
      }
    }
  };
  const watch = (proc: T) =>
    proc.child.once('exit', (code, signal) => {
      if (stopping) return;
      logger.warn({ server: name, code, signal }, `${name} exited unexpectedly; restarting it`);
      restarting = restart().finally(() => (restarting = undefined));
    });
  watch(current);

  return {
    ...current,
    get child() {
      return current.child;
    },
    stop: async () => {
      stopping = true;
      await restarting; // a start in flight finishes first, so its process is stopped too
      await current.stop();
    },
  };
}

async function firstStart<T>(name: string, start: () => Promise<T>, logger: Logger, tries: number): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (err) {
      if (attempt >= tries) throw err;
      logger.warn({ server: name, err }, `${name} could not be started; trying again`);
      await new Promise((r) => setTimeout(r, BACKOFF_MS[Math.min(attempt - 1, BACKOFF_MS.length - 1)]));
    }
  }
}
