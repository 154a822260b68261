/**
 * Kubernetes resource quantities (`500m`, `2`, `16Gi`, `128974848`, `1e3`): parse, sum, format.
 * CPU is counted in whole millicores and memory in whole bytes, rounded up as Kubernetes does.
 */

const SUFFIX: Record<string, number> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

const QUANTITY = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]))?$/;

export class QuantityError extends Error {}

/** The value of a quantity in base units (cores, bytes); throws QuantityError on bad syntax. */
export function parseQuantity(text: string): number {
  const m = QUANTITY.exec(text.trim());
  if (!m) throw new QuantityError(`not a Kubernetes quantity: ${JSON.stringify(text)}`);
  const [, number, exponent, suffix = ''] = m;
  return exponent ? Number(number + exponent) : Number(number) * SUFFIX[suffix];
}

/** Small tolerance so 0.1 × 1000 (100.00000000000001) does not round up to 101. */
const EPSILON = 1e-6;
const ceil = (v: number) => Math.ceil(v - EPSILON);

/** Whole millicores of a CPU quantity (`250m` → 250, `2` → 2000). */
export const cpuMillis = (text: string) => ceil(parseQuantity(text) * 1000);

/** Whole bytes of a memory quantity (`1Ki` → 1024, `1M` → 1000000). */
export const memoryBytes = (text: string) => ceil(parseQuantity(text));

/** Millicores as Kubernetes writes them: `8` for whole cores, else `3500m`. */
export function formatCpu(millis: number): string {
  return millis % 1000 === 0 ? String(millis / 1000) : `${millis}m`;
}

const BINARY = ['Ei', 'Pi', 'Ti', 'Gi', 'Mi', 'Ki'] as const;

/** Bytes with the largest binary suffix that divides them exactly: `16Gi`, `1536Mi`, `1000`. */
export function formatMemory(bytes: number): string {
  if (bytes === 0) return '0';
  for (const suffix of BINARY) {
    const unit = SUFFIX[suffix];
    if (bytes >= unit && bytes % unit === 0) return `${bytes / unit}${suffix}`;
  }
  return String(bytes);
}

/** Sums quantities given per item (absent ones count 0); bad values are skipped, not fatal. */
export function sumQuantities(values: (string | undefined)[], toUnits: (text: string) => number): number {
  let total = 0;
  for (const v of values) {
    if (v === undefined) continue;
    try {
      total += toUnits(v);
    } catch {
      // a malformed quantity from one object must not hide the rest of the figure
    }
  }
  return total;
}
