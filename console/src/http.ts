import { config } from './config';

/** One problem with one field of a request, e.g. `{ path: 'name', message: 'must be a DNS label' }`. */
export interface FieldProblem {
  path: string;
  message: string;
}

/** The API's error envelope `{apiVersion, kind:"Error", error:{code, message, details}}`, as an Error. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly details: string,
    readonly problems: FieldProblem[],
  ) {
    super(message);
  }
  /** What a person reads: `Forbidden: role viewer may not do this; …`. */
  get text(): string {
    return this.details ? `${this.message}: ${this.details}` : this.message;
  }
}

/**
 * `details` is a string such as `body.name: must be a DNS label; body.steps: Required` (zod's
 * issues joined by api/route.ts) or already a list of `{path, message}`: both become field problems
 * with the `body.`/`query.` prefix taken off.
 */
export function fieldProblems(details: unknown): FieldProblem[] {
  const strip = (p: string) => p.replace(/^(body|query)\.?/, '');
  if (Array.isArray(details))
    return details
      .filter((d): d is FieldProblem => typeof d === 'object' && d !== null && 'path' in d && 'message' in d)
      .map((d) => ({ path: strip(String(d.path)), message: String(d.message) }));
  if (typeof details !== 'string') return [];
  return details
    .split('; ')
    .map((part) => /^((?:body|query)(?:\.[\w-]+)*): (.+)$/s.exec(part))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ path: strip(m[1]), message: m[2] }));
}

let currentToken = '';
let onUnauthorized: (() => void) | undefined;

/** The session sets the token every request carries, and what a 401 does (sign out). */
export function setApiToken(token: string, unauthorized?: () => void) {
  currentToken = token;
  onUnauthorized = unauthorized;
}

export function url(path: string, query?: Record<string, string | number | undefined>): string {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== '') qs.set(k, String(v));
  const s = qs.toString();
  return `${config.apiBase}${path}${s ? `?${s}` : ''}`;
}

async function toError(res: Response): Promise<ApiError> {
  let message = `HTTP ${res.status}`;
  let details: unknown = '';
  try {
    const body = (await res.json()) as { error?: { message?: string; details?: unknown } };
    message = body.error?.message ?? message;
    details = body.error?.details ?? '';
  } catch {
    // not the envelope
  }
  const text = Array.isArray(details)
    ? details.map((d: FieldProblem) => `${d.path}: ${d.message}`).join('; ')
    : String(details);
  return new ApiError(res.status, message, text, fieldProblems(details));
}

/** A request with the bearer token; answers the response (still unread) or throws ApiError. */
export async function request(
  method: string,
  path: string,
  opts: { query?: Record<string, string | number | undefined>; body?: unknown; token?: string; accept?: string } = {},
): Promise<Response> {
  const headers: Record<string, string> = { accept: opts.accept ?? 'application/json' };
  const token = opts.token ?? currentToken;
  if (token) headers.authorization = `Bearer ${token}`;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(url(path, opts.query), {
    method,
    headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
  if (!res.ok) {
    const err = await toError(res);
    if (res.status === 401 && !opts.token) onUnauthorized?.();
    throw err;
  }
  return res;
}

export async function getJson<T>(path: string, query?: Record<string, string | number | undefined>): Promise<T> {
  return (await (await request('GET', path, { query })).json()) as T;
}

export async function send<T>(
  method: 'POST' | 'PUT' | 'DELETE',
  path: string,
  body?: unknown,
  query?: Record<string, string | undefined>,
): Promise<T> {
  const res = await request(method, path, { body, query });
  return (res.status === 204 ? undefined : await res.json()) as T;
}

/**
 * Saves what `path` answers as a file: fetch with the Authorization header, then a Blob and
 * `<a download>` (a plain link could not carry the token). A 202 is an export job: its
 * `status.downloadUrl` is asked again every 2 s until the file is ready.
 */
export async function download(path: string, query: Record<string, string | undefined>, fallbackName: string) {
  let res = await request('GET', path, { query, accept: '*/*' });
  while (res.status === 202) {
    const job = (await res.json()) as { status: { downloadUrl: string } };
    await new Promise((r) => window.setTimeout(r, 2000));
    res = await request('GET', job.status.downloadUrl.replace(config.apiBase, ''), { accept: '*/*' });
  }
  const disposition = res.headers.get('content-disposition') ?? '';
  const name = /filename="([^"]+)"/.exec(disposition)?.[1] ?? fallbackName;
  const blob = await res.blob();
  const link = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = link;
  a.download = name;
  a.hidden = true;
  document.body.appendChild(a);
  a.click();
  a.remove();
  window.setTimeout(() => URL.revokeObjectURL(link), 60_000);
  return name;
}
