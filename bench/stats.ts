/** Percentiles and rates for the benchmarks' printouts. */
export function percentile(sortedMs: number[], p: number): number {
  if (sortedMs.length === 0) return NaN;
  return sortedMs[Math.min(sortedMs.length - 1, Math.ceil((p / 100) * sortedMs.length) - 1)];
}

export function summary(samplesMs: number[]): { p50: number; p99: number; mean: number } {
  const sorted = [...samplesMs].sort((a, b) => a - b);
  return {
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    mean: sorted.reduce((a, b) => a + b, 0) / sorted.length,
  };
}

/** Runs `task(i)` for i in [0, total) with at most `concurrency` in flight; returns each duration. */
export async function runConcurrently(
  total: number,
  concurrency: number,
  task: (i: number) => Promise<void>,
): Promise<number[]> {
  const durations: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const i = next++;
        const started = performance.now();
        await task(i);
        durations.push(performance.now() - started);
      }
    }),
  );
  return durations;
}
