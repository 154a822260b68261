import { useState, type FormEvent, type ReactNode } from 'react';
import { replaceQuery } from '../router';

/**
 * A filter form over the hash's query: Apply writes the filters into the URL (so they survive
 * live refreshes, navigation and reloads), Clear drops them.
 */
export function Filters({
  parts,
  initial,
  encode = (v) => v,
  children,
}: {
  parts: string[];
  initial: Record<string, string>;
  /** Form values → URL query (e.g. local date-times → RFC 3339). */
  encode?: (values: Record<string, string>) => Record<string, string>;
  children: (values: Record<string, string>, set: (k: string, v: string) => void) => ReactNode;
}) {
  const [values, setValues] = useState(initial);
  const set = (k: string, v: string) => setValues((old) => ({ ...old, [k]: v }));
  const apply = (e: FormEvent) => {
    e.preventDefault();
    replaceQuery(parts, encode(values));
  };
  const clear = () => {
    const empty = Object.fromEntries(Object.keys(values).map((k) => [k, '']));
    setValues(empty);
    replaceQuery(parts, {});
  };
  return (
    <form className="filters card" onSubmit={apply} aria-label="Filters">
      {children(values, set)}
      <div className="filter-buttons">
        <button type="submit" className="primary">
          Apply filters
        </button>
        <button type="button" onClick={clear}>
          Clear
        </button>
      </div>
    </form>
  );
}

/** `datetime-local` text ↔ RFC 3339 (the API's `since`, `from`, `to`). */
export const toIso = (local: string) => (local ? new Date(local).toISOString() : '');
export const toLocal = (iso: string) => {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};
