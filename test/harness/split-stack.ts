import path from 'path';
import { startEmbeddedMongo } from '../../cli/embedded/mongo';
import type { ServerProcess } from '../../cli/embedded/process';
import { startEmbeddedTemporal } from '../../cli/embedded/temporal';
import { freePort } from './ports';
import { spawnCli, until, waitPolling, type CliProcess } from './processes';

/**
 * The servers `foghorn dev` embeds (MongoDB-wire and the Temporal dev server, real time) with
 * `foghorn api` and `foghorn worker` as separate processes over them, so a test can kill -9 the
 * worker alone and start another one (test/harness/chaos.ts's `worker` target, without its load).
 */
export interface SplitStack {
  /** API base URL, e.g. http://127.0.0.1:41234/api/v1 */
  api: string;
  token: string;
  temporalAddress: string;
  /** The MongoDB-wire server the processes share (a test may seed it directly). */
  mongoUri: string;
  /** The running worker (undefined between crashWorker and startWorker). */
  worker(): CliProcess | undefined;
  /** kill -9 of the worker's process group; resolves once it is gone. */
  crashWorker(): Promise<void>;
  /** A new worker; resolves once it polls the task queue. */
  startWorker(): Promise<void>;
  /** An API call as the admin: status and JSON body. */
  call<T = any>(method: string, p: string, body?: unknown): Promise<{ status: number; body: T }>; // eslint-disable-line @typescript-eslint/no-explicit-any
  /** What the processes printed (for failure messages). */
  output(): string;
  stop(): Promise<void>;
}

const TASK_QUEUE = 'foghorn';

/** The servers `foghorn dev` embeds, on free ports, their files in `dataDir`; `servers` to stop. */
export async function startEmbeddedServers(dataDir: string) {
  const mongo = await startEmbeddedMongo({ port: await freePort(), h2File: path.join(dataDir, 'mongo.h2') });
  const temporal = await startEmbeddedTemporal({ port: await freePort(), dbFile: path.join(dataDir, 'temporal.db') });
  return { mongo, temporal, servers: [mongo, temporal] as ServerProcess[] };
}

export async function useSplitStack(dataDir: string, extraEnv: NodeJS.ProcessEnv): Promise<SplitStack> {
  const { mongo, temporal, servers } = await startEmbeddedServers(dataDir);
  const env: NodeJS.ProcessEnv = {
    FOGHORN_LOG_LEVEL: 'warn',
    ...extraEnv,
    FOGHORN_DATA_DIR: dataDir,
    MONGODB_URI: mongo.uri,
    TEMPORAL_ADDRESS: temporal.address,
    FOGHORN_API_ADDR: `127.0.0.1:${await freePort()}`,
    FOGHORN_ADMIN_TOKEN: 'fh_split-admin-token-0123456789abcdefghijklmnop',
  };
  const api = `http://${env.FOGHORN_API_ADDR}/api/v1`;
  const token = env.FOGHORN_ADMIN_TOKEN!;
  let worker: CliProcess | undefined;
  const retired: CliProcess[] = [];
  const startWorker = async () => {
    worker = spawnCli(['worker'], env);
    await waitPolling(temporal.address, TASK_QUEUE, worker);
  };
  await startWorker();
  const apiProc = spawnCli(['api'], env);
  const output = () =>
    [...retired, worker, apiProc]
      .filter((p): p is CliProcess => p !== undefined)
      .map((p) => `--- ${p.pid} ---\n${p.output().slice(-3000)}`)
      .join('\n');
  await until(
    `${api} ready`,
    () =>
      fetch(new URL('/readyz', api)).then(
        (r) => r.status === 200,
        () => false,
      ),
    180_000,
    output,
  );

  return {
    api,
    token,
    temporalAddress: temporal.address,
    mongoUri: mongo.uri,
    worker: () => worker,
    crashWorker: async () => {
      const dying = worker;
      worker = undefined;
      if (!dying) return;
      retired.push(dying);
      await dying.crash();
    },
    startWorker,
    call: async (method, p, body) => {
      const res = await fetch(api + p, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    },
    output,
    stop: async () => {
      await Promise.all([apiProc.stop(), worker?.stop()]);
      for (const s of servers.reverse()) await s.stop();
    },
  };
}
