/**
 * Plain-text tables as `kubectl get` prints them: upper-case headers, columns padded with
 * spaces (three between columns), no borders, no trailing blanks.
 */
export interface Column<T> {
  header: string;
  value: (row: T) => string;
  /** Only with `-o wide`. */
  wide?: boolean;
}

const GAP = '   ';

export function formatTable<T>(columns: readonly Column<T>[], rows: readonly T[], wide = false): string {
  const shown = columns.filter((c) => wide || !c.wide);
  const cells = [shown.map((c) => c.header.toUpperCase()), ...rows.map((r) => shown.map((c) => oneLine(c.value(r))))];
  const widths = shown.map((_, i) => Math.max(...cells.map((line) => line[i].length)));
  return cells
    .map((line) =>
      line
        .map((cell, i) => (i === line.length - 1 ? cell : cell.padEnd(widths[i])))
        .join(GAP)
        .trimEnd(),
    )
    .join('\n');
}

/** A cell is one line: newlines and tabs become spaces. */
const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();

/**
 * Elapsed time the way kubectl's AGE column shows it (k8s.io/apimachinery duration.HumanDuration):
 * `45s`, `5m30s`, `42m`, `3h10m`, `20h`, `3d4h`, `41d`, `2y30d`, `9y`.
 */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 60 * 2) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 60 * 3) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.floor(hours / 24)}d` : `${Math.floor(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const d = Math.floor(hours / 24) % 365;
    return d === 0 ? `${Math.floor(hours / 24 / 365)}y` : `${Math.floor(hours / 24 / 365)}y${d}d`;
  }
  return `${Math.floor(hours / 24 / 365)}y`;
}

/** The age of something created at `since` (an RFC 3339 timestamp), or `<unknown>`. */
export function ageOf(since: string | undefined, now: Date): string {
  const at = since ? Date.parse(since) : NaN;
  return Number.isNaN(at) ? '<unknown>' : humanDuration(now.getTime() - at);
}
