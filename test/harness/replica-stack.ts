import { appendFileSync, mkdirSync } from 'fs';
import { freePort } from './ports';
import { spawnCli, until, waitListening, waitPolling, type CliProcess } from './processes';
import { startEmbeddedServers } from './split-stack';

/**
 * Foghorn as production runs it (docs/design.md §3): several `foghorn api` and `foghorn worker`
 * processes, and `foghorn gateway start`, each a process of its own, over one Temporal and one
 * MongoDB-wire server (the ones `foghorn dev` embeds, real time, H2 file). A test kills any of
 * them with -9 (crashApi, crashWorker) and the others carry on; a load balancer in front of the
 * APIs is `liveApis()`. Used by test/e2e/replicas.test.ts and bench/replicas.ts.
 */
export interface ReplicaStackOptions {
  apis?: number;
  workers?: number;
  /** Also `foghorn gateway start` (FOGHORN_WEBHOOK_ADDR is set for it). */
  gateway?: boolean;
  /** On top of the stack's own environment, for every process. */
  env?: NodeJS.ProcessEnv;
  /** Where each Foghorn process's output is appended as it exits (none: not kept). */
  logFile?: string;
}

export interface ReplicaStack {
  /** Every API's base URL (`http://127.0.0.1:<port>/api/v1`), by replica, killed ones too. */
  apis: string[];
  /** The APIs not killed: what a load balancer in front of them would send to. */
  liveApis(): string[];
  /** The gateway's webhook URL (with `gateway`). */
  webhook: string;
  token: string;
  temporalAddress: string;
  mongoUri: string;
  /** The environment every process got (a test may start one more like them). */
  env: NodeJS.ProcessEnv;
  /** The worker processes by replica (undefined once killed). */
  workers(): (CliProcess | undefined)[];
  /** kill -9 of an API's or a worker's process group; resolves once it is gone. */
  crashApi(replica: number): Promise<void>;
  crashWorker(replica: number): Promise<void>;
  /** Every running process of the stack, named (`api-0`, `worker-1`, `gateway`, `mongo-java`, `temporal`). */
  processes(): { name: string; pid: number }[];
  /** What the Foghorn processes printed (for failure messages), the last lines of each. */
  output(): string;
  shutdown(): Promise<void>;
}

export const TASK_QUEUE = 'foghorn';

async function waitReady(api: string, proc: CliProcess, timeoutMs = 180_000): Promise<void> {
  await until(
    `${api} ready`,
    async () => {
      if (proc.child.exitCode !== null) throw new Error(`the API exited:\n${proc.output()}`);
      return fetch(new URL('/readyz', api)).then(
        (r) => r.status === 200,
        () => false,
      );
    },
    timeoutMs,
    proc.output,
  );
}

export async function useReplicaStack(dataDir: string, opts: ReplicaStackOptions = {}): Promise<ReplicaStack> {
  mkdirSync(dataDir, { recursive: true });
  const { mongo, temporal, servers } = await startEmbeddedServers(dataDir);
  const env: NodeJS.ProcessEnv = {
    FOGHORN_LOG_LEVEL: 'warn',
    ...opts.env,
    FOGHORN_DATA_DIR: dataDir, // one audit key and one secret key for all: the first process writes them
    MONGODB_URI: mongo.uri,
    TEMPORAL_ADDRESS: temporal.address,
    FOGHORN_ADMIN_TOKEN: 'fh_replica-admin-token-0123456789abcdefghijklmnop',
    ...(opts.gateway && { FOGHORN_WEBHOOK_ADDR: `127.0.0.1:${await freePort()}` }),
  };
  const keep = (proc: CliProcess) => {
    if (opts.logFile) void proc.exited.then(() => appendFileSync(opts.logFile!, proc.output()));
    return proc;
  };
  const all: { name: string; proc: CliProcess }[] = [];
  const workers: (CliProcess | undefined)[] = [];
  const apiProcs: (CliProcess | undefined)[] = [];
  const output = () =>
    all.map(({ name, proc }) => `--- ${name} (${proc.pid}) ---\n${proc.output().slice(-3000)}`).join('\n');

  // The workers first, together: each bundles the workflows at start.
  for (let i = 0; i < (opts.workers ?? 2); i++) {
    const proc = keep(spawnCli(['worker'], env));
    workers.push(proc);
    all.push({ name: `worker-${i}`, proc });
  }
  await Promise.all(workers.map((w) => waitPolling(temporal.address, TASK_QUEUE, w!)));
  const apis: string[] = [];
  for (let i = 0; i < (opts.apis ?? 2); i++) {
    const addr = `127.0.0.1:${await freePort()}`;
    const proc = keep(spawnCli(['api'], { ...env, FOGHORN_API_ADDR: addr }));
    apis.push(`http://${addr}/api/v1`);
    apiProcs.push(proc);
    all.push({ name: `api-${i}`, proc });
  }
  await Promise.all(apis.map((api, i) => waitReady(api, apiProcs[i]!)));
  const webhook = opts.gateway ? `http://${env.FOGHORN_WEBHOOK_ADDR}/inbound` : '';
  let gateway: CliProcess | undefined;
  if (opts.gateway) {
    gateway = keep(spawnCli(['gateway', 'start'], env));
    all.push({ name: 'gateway', proc: gateway });
    await waitListening(webhook, gateway);
  }

  const crash = async (list: (CliProcess | undefined)[], replica: number) => {
    const dying = list[replica];
    list[replica] = undefined;
    await dying?.crash();
  };
  return {
    apis,
    liveApis: () => apis.filter((_, i) => apiProcs[i] !== undefined),
    webhook,
    token: env.FOGHORN_ADMIN_TOKEN!,
    temporalAddress: temporal.address,
    mongoUri: mongo.uri,
    env,
    workers: () => [...workers],
    crashApi: (replica) => crash(apiProcs, replica),
    crashWorker: (replica) => crash(workers, replica),
    processes: () => [
      ...all
        .filter(({ proc }) => [...workers, ...apiProcs, gateway].includes(proc))
        .map(({ name, proc }) => ({ name, pid: proc.pid })),
      { name: 'mongo-java', pid: mongo.child.pid! },
      { name: 'temporal', pid: temporal.child.pid! },
    ],
    output,
    shutdown: async () => {
      await Promise.all([gateway, ...apiProcs, ...workers].map((p) => p?.stop()));
      for (const s of servers.reverse()) await s.stop();
    },
  };
}
