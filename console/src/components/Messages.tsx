import { ApiError } from '../http';

/** An error people must notice: role="alert" is announced at once. */
export function ErrorMessage({ error }: { error: unknown }) {
  if (!error) return null;
  const text = error instanceof ApiError ? explain(error) : error instanceof Error ? error.message : String(error);
  return (
    <p role="alert" className="message message-error">
      {text}
    </p>
  );
}

/** What an API answer means to an operator, then what the API said. */
function explain(e: ApiError): string {
  if (e.status === 403) return `Not allowed — ${e.text}`;
  if (e.status === 409) return `Already done — ${e.text}`;
  if (e.status === 503) return `Service unavailable, try again shortly — ${e.text}`;
  return e.text;
}

/** A confirmation: role="status" is announced politely. */
export function StatusMessage({ text }: { text: string }) {
  return (
    <p role="status" className={text ? 'message message-ok' : 'visually-hidden'}>
      {text}
    </p>
  );
}

export function Loading({ what }: { what: string }) {
  return <p className="muted">Loading {what}…</p>;
}
