import { version } from '../../package.json';
import type { ClientSettings } from './config';
import { ApiFailure, ConnectionFailure } from './errors';

/** How the CLI names itself to the API: the audit log's userAgent of every change it makes. */
export const USER_AGENT = `foghorn-cli/${version}`;

export type Query = Record<string, string | number | boolean | undefined>;

export interface RequestOptions {
  query?: Query;
  body?: unknown;
}

/** `/incidents/{name}` with the name percent-encoded. */
export const pathOf = (...segments: string[]) => segments.map((s, i) => (i % 2 ? encodeURIComponent(s) : s)).join('/');

/** The Foghorn API over HTTP: bearer token, JSON bodies, the error envelope turned into ApiFailure. */
export class ApiClient {
  constructor(readonly settings: ClientSettings) {}

  /** `path` under the base path (`/incidents`), or absolute from the server root (`/api/v1/…`, as downloadUrl is). */
  url(path: string, query: Query = {}): string {
    const base = new URL(this.settings.apiBase);
    const full = path.startsWith(base.pathname + '/') ? base.origin + path : this.settings.apiBase + path;
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query))
      if (value !== undefined && value !== '') params.set(key, String(value));
    const qs = params.toString();
    return qs ? `${full}${full.includes('?') ? '&' : '?'}${qs}` : full;
  }

  /** The raw answer of any status; only a failure to get one throws. */
  async send(method: string, path: string, opts: RequestOptions = {}): Promise<Response> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.settings.token}`,
      accept: 'application/json',
      'user-agent': USER_AGENT,
    };
    let body: string | undefined;
    if (opts.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(opts.body);
    }
    try {
      return await fetch(this.url(path, opts.query), { method, headers, body });
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new ConnectionFailure(
        `cannot reach the server at ${this.settings.url}: ${cause?.code ?? cause?.message ?? (err as Error).message}`,
      );
    }
  }

  /** A JSON answer of 2xx, else ApiFailure from the error envelope. A 204 gives undefined. */
  async request<T = unknown>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const res = await this.send(method, path, opts);
    if (!res.ok) throw await failureOf(res);
    if (res.status === 204) return undefined as T;
    const text = await res.text();
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new ApiFailure(res.status, 'Unexpected answer', `not JSON: ${text.slice(0, 200)}`);
    }
  }

  get = <T = unknown>(path: string, query?: Query) => this.request<T>('GET', path, { query });
  post = <T = unknown>(path: string, body: unknown = {}, query?: Query) =>
    this.request<T>('POST', path, { body, query });
  put = <T = unknown>(path: string, body: unknown) => this.request<T>('PUT', path, { body });
  delete = (path: string) => this.request<void>('DELETE', path);
}

/** The API's error envelope `{error: {code, message, details}}`, or what the answer was when it is not one. */
export async function failureOf(res: Response): Promise<ApiFailure> {
  const text = await res.text().catch(() => '');
  try {
    const error = (JSON.parse(text) as { error?: { code?: number; message?: string; details?: unknown } }).error;
    if (error?.message) return new ApiFailure(error.code ?? res.status, error.message, error.details);
  } catch {
    // not the envelope
  }
  return new ApiFailure(res.status, res.statusText || 'Error', text.slice(0, 200));
}
