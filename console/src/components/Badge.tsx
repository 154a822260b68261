/** A coloured word for a severity, state or status; the colour is a hint, the word says it. */
export function Badge({ value, kind = 'state' }: { value: string; kind?: 'severity' | 'state' }) {
  const tone = value.toLowerCase().replace(/[^a-z-]/g, '');
  return <span className={`badge badge-${kind} tone-${tone || 'none'}`}>{value || '—'}</span>;
}
