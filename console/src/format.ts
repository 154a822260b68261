/** Dates and durations as people read them. */
export function when(iso?: string | null): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

/** How long ago, e.g. `5m`, `3h 2m`, `2d 4h`. */
export function ago(iso?: string, now = Date.now()): string {
  if (!iso) return '—';
  const s = Math.max(0, Math.floor((now - new Date(iso).getTime()) / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h ${m % 60}m`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}

export const percent = (n: number | null | undefined, digits = 1) =>
  n === null || n === undefined ? '—' : `${(n * 100).toFixed(digits)}%`;

/** Go time.Duration in integer nanoseconds → `1h2m3s`-like text. */
export function nanos(n: number | null | undefined): string {
  if (n === null || n === undefined) return '—';
  const s = Math.round(n / 1e9);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return `${h ? `${h}h` : ''}${h || m ? `${m}m` : ''}${s % 60}s`;
}
