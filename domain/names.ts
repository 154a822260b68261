/**
 * Resource names `<PREFIX>-<yyyymmdd>-<nnn>` (DESIGN §4): a per-day counter, at least three
 * digits, growing past 999. The counter itself lives in the store; this is the pure part.
 */
export const NAME_PREFIXES = ['INC', 'PM', 'APR', 'RP', 'AI', 'audit', 'export'] as const;
export type NamePrefix = (typeof NAME_PREFIXES)[number];

/** `yyyymmdd` of a timestamp, in UTC. */
export function dayKey(at: Date): string {
  return at.toISOString().slice(0, 10).replace(/-/g, '');
}

export function formatName(prefix: NamePrefix, at: Date, seq: number): string {
  return `${prefix}-${dayKey(at)}-${String(seq).padStart(3, '0')}`;
}

const NAME_RE = /^([A-Za-z]+)-(\d{8})-(\d{3,})$/;

/** The parts of a name, or undefined when it does not have the shape. */
export function parseName(name: string): { prefix: string; day: string; seq: number } | undefined {
  const m = NAME_RE.exec(name);
  return m ? { prefix: m[1], day: m[2], seq: Number(m[3]) } : undefined;
}
