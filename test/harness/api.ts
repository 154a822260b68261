import type { Client } from '@temporalio/client';
import type { Server } from 'http';
import type { AddressInfo } from 'net';
import { createApp } from '../../api/app';
import { createLogger } from '../../api/observability';
import type { UserRole } from '../../domain/roles';
import { createToken } from '../../store/tokens';
import { useMongo } from './mongo';

export interface ApiResponse {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests inspect arbitrary JSON
  body: any;
  text: string;
}

export const BASE_PATH = '/api/v1';

/**
 * The whole API on an ephemeral port over a real MongoDB-wire server, with one token per role.
 * `call` speaks real HTTP, so headers, body parsing and error mapping are all exercised.
 */
export async function useApi(
  opts: {
    temporal?: Client;
    taskQueue?: string;
    rateLimitPerMinute?: number;
    mongo?: Awaited<ReturnType<typeof useMongo>>;
    auditExportSyncLimit?: number;
    trustProxy?: false | number | string[];
  } = {},
) {
  const mongo = opts.mongo ?? (await useMongo());
  const app = createApp({
    basePath: BASE_PATH,
    rateLimitPerMinute: opts.rateLimitPerMinute ?? 100_000,
    logger: createLogger('silent'),
    temporal: opts.temporal,
    taskQueue: opts.taskQueue ?? 'foghorn',
    ...(opts.auditExportSyncLimit !== undefined && { auditExportSyncLimit: opts.auditExportSyncLimit }),
    ...(opts.trustProxy !== undefined && { trustProxy: opts.trustProxy }),
  });
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const tokens = {} as Record<UserRole, string>;
  for (const role of ['viewer', 'operator', 'admin'] as const)
    tokens[role] = (await createToken(`${role}-user`, role)).token;

  async function call(
    method: string,
    path: string,
    init: { token?: string | null; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
  ): Promise<ApiResponse> {
    const headers: Record<string, string> = { ...init.headers };
    const token = init.token === undefined ? tokens.admin : init.token;
    if (token) headers.authorization = `Bearer ${token}`;
    let body: string | undefined = init.rawBody;
    if (init.body !== undefined) {
      body = JSON.stringify(init.body);
      headers['content-type'] ??= 'application/json';
    }
    const url =
      path.startsWith('/api/') ||
      path.startsWith('/healthz') ||
      path.startsWith('/readyz') ||
      path.startsWith('/metrics')
        ? path
        : BASE_PATH + path;
    const res = await fetch(baseUrl + url, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    return { status: res.status, headers: res.headers, body: parsed, text };
  }

  return {
    baseUrl,
    tokens,
    call,
    mongo,
    stop: async () => {
      await new Promise((resolve) => server.close(resolve));
      if (!opts.mongo) await mongo.stop();
    },
  };
}
