/** Exit codes of the API-client commands. */
export const EXIT_OK = 0;
/** The API said no, the server could not be reached, or the local setup is wrong. */
export const EXIT_FAILED = 1;
/** The command line is wrong (commander's own errors). */
export const EXIT_USAGE = 2;

/** A problem on this side (no server configured, unreadable file…): its message says what to do. */
export class ClientError extends Error {}

/** An error answer of the API: the envelope's code, message and details. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly details: unknown,
  ) {
    super(message);
  }
}

/** The request never got an HTTP answer. */
export class ConnectionFailure extends Error {}

/** One field problem of a details list, whatever its keys. */
function describeProblem(p: unknown): string {
  if (typeof p === 'string') return p;
  if (p && typeof p === 'object') {
    const o = p as Record<string, unknown>;
    const where = o.field ?? o.path ?? o.name ?? o.location;
    const what = o.message ?? o.reason ?? o.error;
    if (what !== undefined)
      return `${Array.isArray(where) ? where.join('.') : (where ?? '')}${where ? ': ' : ''}${String(what)}`;
  }
  return JSON.stringify(p);
}

/** The details of an error envelope as text: a string as is, a list one problem per line. */
export function describeDetails(details: unknown): string {
  if (details === undefined || details === null || details === '') return '';
  if (typeof details === 'string') return details;
  if (Array.isArray(details)) return details.map((d) => `\n  - ${describeProblem(d)}`).join('');
  return describeProblem(details);
}

/** kubectl's shape: `Error from server (404 Incident not found): incident INC-1 does not exist`. */
export function describeFailure(err: unknown): string | undefined {
  if (err instanceof ApiFailure) {
    const details = describeDetails(err.details);
    const sep = details.startsWith('\n') ? ':' : ': ';
    return `Error from server (${err.status} ${err.message})${details ? sep + details : ''}`;
  }
  if (err instanceof ConnectionFailure || err instanceof ClientError) return `error: ${err.message}`;
  return undefined;
}
