import { PerformanceObserver, constants, type PerformanceEntry } from 'node:perf_hooks';
import pino from 'pino';
import { Worker } from 'node:worker_threads';
import { scheduleHeapCompaction, type HeapCompaction } from '../../worker/heap-compaction';
import { until } from '../harness/processes';

/**
 * A thread like the SDK's workflow thread: it builds ~40 MiB that survives into the old
 * generation, drops it, and then idles (allocating nothing, so V8 starts no full collection of
 * its own for several seconds: its memory reducer waits; the checks come sooner). It answers
 * `stats` with its heap in use and the full collections it has seen.
 */
const THREAD = `
const { parentPort } = require('node:worker_threads');
const { PerformanceObserver, constants } = require('node:perf_hooks');
const { getHeapStatistics } = require('node:v8');
let majors = 0;
new PerformanceObserver((list) => {
  majors += list.getEntries().filter((e) => e.detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR).length;
}).observe({ entryTypes: ['gc'] });
let junk = Array.from({ length: 300000 }, (_, i) => ({ i, text: 'garbage ' + i }));
parentPort.on('message', (message) => {
  if (message === 'drop') junk = undefined;
  // The observer reports on a later turn: answer after it has.
  if (message === 'stats') setTimeout(() => parentPort.postMessage({ majors, used: getHeapStatistics().used_heap_size }), 50);
});
parentPort.postMessage('ready');
`;

/** A full collection, among a PerformanceObserver's gc entries. */
const isMajor = (entry: PerformanceEntry) =>
  (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR;

/** A debug logger whose records the test reads. */
function recordingLogger() {
  const records: { level: number; msg: string; pauses?: number[] }[] = [];
  return {
    records,
    logger: pino({ level: 'debug' }, { write: (line: string) => void records.push(JSON.parse(line)) }),
  };
}

interface ThreadStats {
  majors: number;
  used: number;
}

const MiB = 1024 * 1024;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const threads: Worker[] = [];
let compaction: HeapCompaction | undefined;

async function startThread(): Promise<{ stats(): Promise<ThreadStats>; drop(): void; worker: Worker }> {
  const worker = new Worker(THREAD, { eval: true });
  threads.push(worker);
  await new Promise((resolve) => worker.once('message', resolve));
  return {
    worker,
    drop: () => worker.postMessage('drop'),
    stats: () =>
      new Promise((resolve) => {
        worker.once('message', resolve);
        worker.postMessage('stats');
      }),
  };
}

afterEach(async () => {
  compaction?.stop();
  compaction = undefined;
  await Promise.all(threads.splice(0).map((t) => t.terminate()));
});

it('collects the garbage of the main thread and of every worker thread, started before or after it', async () => {
  const early = await startThread();
  compaction = scheduleHeapCompaction(3_600_000, recordingLogger().logger);
  const late = await startThread();
  // Threads attach to the inspector a moment after they start: until a run pauses all three.
  await until('both threads attached', async () => (await compaction!.compactNow()).length === 3, 30_000);

  const before = await Promise.all([early.stats(), late.stats()]);
  early.drop();
  late.drop();
  let mainMajors = 0;
  const observer = new PerformanceObserver((list) => {
    mainMajors += list.getEntries().filter(isMajor).length;
  });
  observer.observe({ entryTypes: ['gc'] });
  try {
    await compaction.compactNow();
    const after = await Promise.all([early.stats(), late.stats()]);
    for (const [i, s] of after.entries()) {
      expect(s.majors).toBeGreaterThan(before[i].majors);
      expect(before[i].used - s.used).toBeGreaterThan(20 * MiB);
    }
    await sleep(50); // the observer reports on a later turn
    expect(mainMajors).toBeGreaterThan(0);
  } finally {
    observer.disconnect();
  }
});

it('runs on its schedule until stopped, and a thread that exits does not hold it up', async () => {
  const thread = await startThread();
  const { records, logger } = recordingLogger();
  compaction = scheduleHeapCompaction(200, logger);
  const start = (await thread.stats()).majors;
  await until(
    'three scheduled collections in the thread',
    async () => (await thread.stats()).majors >= start + 3,
    30_000,
  );

  await thread.worker.terminate();
  await compaction.compactNow(); // only the main thread is left to collect
  expect(records.filter((r) => r.msg !== 'heaps compacted')).toEqual([]);
  // Each scheduled run says how long it paused each isolate: the main thread's, then the thread's.
  expect(records.some((r) => r.pauses?.length === 2)).toBe(true);

  const other = await startThread();
  const first = (await other.stats()).majors;
  await until('the new thread collected on schedule', async () => (await other.stats()).majors > first, 30_000);
  compaction.stop();
  await sleep(300); // a collection under way when it stopped
  const stopped = (await other.stats()).majors;
  await sleep(1_000);
  expect((await other.stats()).majors).toBe(stopped);
});

it('ends a run under way quietly when the worker stops', async () => {
  await startThread();
  const { records, logger } = recordingLogger();
  compaction = scheduleHeapCompaction(3_600_000, logger);
  await until('the thread attached', async () => (await compaction!.compactNow()).length === 2, 30_000);
  const run = compaction.compactNow();
  compaction.stop();
  await expect(run).resolves.toEqual(expect.any(Array));
  expect(records).toEqual([]);
});
