import { stringify } from 'yaml';
import { formatTable, type Column } from '../../domain/table';

/** `-o`: a table (kubectl's default), a wider one, or the API's answer as JSON or YAML. */
export const OUTPUT_FORMATS = ['table', 'wide', 'json', 'yaml'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** A list answer of the API: `{kind: "<Kind>List", metadata: {totalCount, page, pageSize}, items}`. */
export interface ListAnswer<T> {
  kind: string;
  metadata: { totalCount: number; page: number; pageSize: number };
  items: T[];
}

const out = (text: string) => process.stdout.write(text.endsWith('\n') ? text : text + '\n');
const note = (text: string) => process.stderr.write(text + '\n');

/** The API's answer unchanged as JSON or YAML, else what `human` makes of it. */
export function printAnswer(format: OutputFormat, answer: unknown, human: () => string): void {
  if (format === 'json') out(JSON.stringify(answer, null, 2));
  else if (format === 'yaml') out(stringify(answer));
  else {
    const text = human();
    if (text) out(text);
  }
}

/** One object as a one-row table (`kubectl get pod x`), or as JSON/YAML. */
export function printOne<T>(format: OutputFormat, answer: T, columns: readonly Column<T>[]): void {
  printAnswer(format, answer, () => formatTable(columns, [answer], format === 'wide'));
}

/**
 * A list as a table; on stderr "No <noun> found." when empty and a hint when more pages exist,
 * so stdout stays the table alone.
 */
export function printList<T>(format: OutputFormat, list: ListAnswer<T>, columns: readonly Column<T>[], noun: string) {
  printAnswer(format, list, () => {
    const { totalCount, page, pageSize } = list.metadata ?? { totalCount: list.items.length, page: 1, pageSize: 0 };
    if (list.items.length === 0) {
      note(totalCount > 0 ? `No ${noun} on page ${page} (${totalCount} in all).` : `No ${noun} found.`);
      return '';
    }
    const shownUpTo = (page - 1) * pageSize + list.items.length;
    if (totalCount > shownUpTo) note(`(${list.items.length} of ${totalCount} ${noun}; --page ${page + 1} for more)`);
    return formatTable(columns, list.items, format === 'wide');
  });
}

/** `key: value` lines (sections of a report), aligned. */
export function keyValues(pairs: readonly [string, unknown][]): string {
  const width = Math.max(...pairs.map(([k]) => k.length)) + 1;
  return pairs.map(([k, v]) => `${(k + ':').padEnd(width)} ${show(v)}`.trimEnd()).join('\n');
}

/** A cell or value as people read it: `<none>` for nothing, lists comma-separated, maps `k=v`. */
export function show(value: unknown): string {
  if (value === undefined || value === null || value === '') return '<none>';
  if (Array.isArray(value)) return value.length ? value.map(show).join(',') : '<none>';
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    return entries.length ? entries.map(([k, v]) => `${k}=${show(v)}`).join(',') : '<none>';
  }
  return String(value);
}
