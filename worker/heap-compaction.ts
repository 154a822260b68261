import { Session } from 'node:inspector';
import type { Logger } from 'pino';

export interface HeapCompaction {
  /**
   * Runs one compaction in every isolate now; resolves when all of them have finished, with the
   * milliseconds each took (the main thread's first).
   */
  compactNow(): Promise<number[]>;
  stop(): void;
}

/**
 * A full, compacting collection of every V8 heap in this process on a schedule: the main
 * thread's (activities, the SDK's connection) and each workflow thread's (the workflow cache).
 *
 * Why: V8's own memory reducer runs only when allocation lets up, which a storm never does, so
 * the worker carried 60–80 MiB of garbage it had not collected yet above live heaps that do not
 * grow (docs/benchmarks.md, "Eleventh pass" and "Twelfth pass").
 *
 * How: the in-process inspector (no port is opened), the only handle Node gives on the workflow
 * threads the SDK owns. `HeapProfiler.collectGarbage` is V8's low-memory collection: full,
 * compacting, and it hands free pages back. It pauses one isolate at a time: 0.2–0.4 s each in a
 * storm on two busy cores.
 */
export function scheduleHeapCompaction(intervalMs: number, logger: Pick<Logger, 'debug' | 'warn'>): HeapCompaction {
  const session = new Session();
  session.connect();
  const threads = new Set<string>();
  /** Collections asked of a thread and not answered yet, by request id. */
  const pending = new Map<number, { sessionId: string; settle: (error?: Error) => void }>();
  let nextId = 0;
  const settle = (id: number, error?: Error) => {
    pending.get(id)?.settle(error);
    pending.delete(id);
  };

  session.on('NodeWorker.attachedToWorker', ({ params }) => threads.add(params.sessionId));
  session.on('NodeWorker.detachedFromWorker', ({ params }) => {
    threads.delete(params.sessionId);
    // A thread that exits (the worker shutting down) answers nothing more: its heap is gone too.
    for (const [id, request] of pending) if (request.sessionId === params.sessionId) settle(id);
  });
  session.on('NodeWorker.receivedMessageFromWorker', ({ params }) => {
    const reply = JSON.parse(params.message) as { id?: number; error?: { message: string } };
    if (reply.id !== undefined) settle(reply.id, reply.error && new Error(reply.error.message));
  });
  // Attaches to the threads there are and to those started later.
  session.post('NodeWorker.enable', { waitForDebuggerOnStart: false });

  let stopped = false;
  const collectMain = () =>
    new Promise<void>((resolve, reject) =>
      // Stopping closes the session, which fails what is under way: that ends quietly.
      session.post('HeapProfiler.collectGarbage', (err) => (err && !stopped ? reject(err) : resolve())),
    );
  const collectThread = (sessionId: string) =>
    new Promise<void>((resolve, reject) => {
      const id = ++nextId;
      pending.set(id, { sessionId, settle: (err) => (err ? reject(err) : resolve()) });
      const message = JSON.stringify({ id, method: 'HeapProfiler.collectGarbage' });
      // After a stop this finds nothing to settle: stop() settled it before closing the session.
      session.post('NodeWorker.sendMessageToWorker', { sessionId, message }, (err) => err && settle(id, err));
    });

  // A function, not a promise: the clock starts before the collection is asked for.
  const timed = async (collect: () => Promise<void>) => {
    const start = performance.now();
    await collect();
    return Math.round(performance.now() - start);
  };
  let running: Promise<number[]> | undefined;
  const compactNow = () =>
    (running ??= (async () => {
      try {
        const pauses = [await timed(collectMain)];
        // One isolate at a time: the threads' pauses do not stack up on the same moment.
        for (const sessionId of [...threads]) {
          if (stopped) break; // the worker is shutting down: a run under way ends quietly
          pauses.push(await timed(() => collectThread(sessionId)));
        }
        return pauses;
      } finally {
        running = undefined;
      }
    })());

  const timer = setInterval(
    () =>
      compactNow().then(
        (pauses) => logger.debug({ pauses }, 'heaps compacted'),
        (err: Error) => logger.warn({ err }, 'heap compaction failed'),
      ),
    intervalMs,
  );
  timer.unref();
  return {
    compactNow,
    stop() {
      stopped = true;
      clearInterval(timer);
      for (const id of [...pending.keys()]) settle(id);
      session.disconnect();
    },
  };
}
