import { setFlagsFromString } from 'v8';

/** How far V8 may let an old generation grow above what survived its last full collection. */
export const HEAP_GROWTH_PERCENT = 30;

/**
 * Bounds this process's V8 heaps by what they hold: after each full collection the old
 * generation may grow by HEAP_GROWTH_PERCENT of its live size before the next one.
 *
 * Why: given no heap limit, V8 sizes its heuristics for the machine (here a 4 GiB limit) and
 * lets the old generation grow to up to four times what survived. Under a storm the API's live
 * heap stayed at ~100 MiB while its RSS climbed from 280 to 460 MiB and fell back, higher each
 * time (docs/decisions.md, "Performance and capacity").
 *
 * Why not a heap limit: `--max-old-space-size` must be on the command line, and a limit near the
 * live size turns a burst of large chat bodies (~30 MiB of heap each while parsed) into an
 * out-of-memory crash. The growth factor fails nothing: the heap still grows as far as a burst
 * needs, then shrinks back. V8 reads the flag at each full collection, so setting it once the
 * process runs takes effect.
 */
export function limitHeapGrowth(percent = HEAP_GROWTH_PERCENT): void {
  setFlagsFromString(`--heap-growing-percent=${percent}`);
}
