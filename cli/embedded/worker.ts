import { fork } from 'child_process';
import path from 'path';
import { SECRET_VARIABLES, type Config } from '../../config/env';
import { REPO_ROOT } from '../paths';
import { stopProcess, type ServerProcess } from './process';

/** What `foghorn worker --supervised` and its parent say over the IPC channel. */
export type WorkerMessage = { type: 'secrets'; env: Record<string, string> } | { type: 'ready' };

/**
 * The configuration's secrets as environment variables (lists comma-separated, as they are read).
 * They travel over the IPC channel, never in the child's environment or command line: the
 * parent's environment no longer holds them (cli/config-loader.ts scrubs it), and a child's
 * /proc/<pid>/environ would show them for its whole life.
 */
export function secretEnv(config: Config): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of SECRET_VARIABLES) {
    if (name === 'FOGHORN_ADMIN_TOKEN') continue; // the API's business, not the worker's
    const value = (config as Record<string, unknown>)[name];
    if (typeof value === 'string' && value) env[name] = value;
    else if (Array.isArray(value) && value.length > 0) env[name] = value.join(',');
  }
  return env;
}

/**
 * Where the environment says nothing: two malloc arenas. glibc gives every thread that allocates
 * its own arena (up to eight per core), and the worker's threads (the SDK core's runtime, libuv's
 * pool, V8's helpers) each kept their own fragments of it: 185–200 MiB of malloc'd memory two
 * minutes into a storm, 135–165 MiB with two (docs/decisions.md, "Performance and capacity").
 */
const WORKER_ENV_DEFAULTS = { MALLOC_ARENA_MAX: '2' };

/**
 * The worker of `foghorn dev` in its own process (issue 14: workflows and activities on one core,
 * the API and the gateway on the other): `bin/foghorn.js worker --supervised`, the production
 * worker command. `env` names the servers (MONGODB_URI, TEMPORAL_ADDRESS, KUBECONFIG); the
 * secrets follow over IPC. Its logs go to our stdout/stderr. It exits when the IPC channel
 * closes, so it never outlives us, even after a kill -9; it ignores the terminal's Ctrl-C and
 * stops on our SIGTERM, in order with the rest. Resolves once it polls its task queue.
 */
export function startWorkerProcess(opts: {
  env: NodeJS.ProcessEnv;
  secrets: Record<string, string>;
  /** V8's heap limit in MiB (FOGHORN_WORKER_HEAP), for its main and workflow threads alike. */
  heapMiB?: number;
  timeoutMs?: number;
}): Promise<ServerProcess> {
  // The same node with the same flags as ours, and the heap limit.
  const execArgv = [...process.execArgv, ...(opts.heapMiB ? [`--max-old-space-size=${opts.heapMiB}`] : [])];
  const child = fork(path.join(REPO_ROOT, 'bin', 'foghorn.js'), ['worker', '--supervised'], {
    env: { ...WORKER_ENV_DEFAULTS, ...opts.env },
    execArgv,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const timeoutMs = opts.timeoutMs ?? 180_000; // bundling the workflows takes a while on a busy host
  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (err: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(err);
    };
    const timer = setTimeout(() => fail(new Error(`the worker did not start within ${timeoutMs} ms`)), timeoutMs);
    child.once('error', (err) => fail(new Error(`the worker could not start: ${err.message}`)));
    child.once('exit', (code, signal) => fail(new Error(`the worker exited (${signal ?? code}) before it was ready`)));
    child.on('message', (message: WorkerMessage) => {
      if (message.type !== 'ready' || settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ child, stop: () => stopProcess(child, 30_000) });
    });
    child.send({ type: 'secrets', env: opts.secrets } satisfies WorkerMessage);
  });
}

/**
 * In the child (`foghorn worker --supervised`): waits for the secrets from the parent and puts
 * them where the configuration is read from (which scrubs them again). From now on a closed IPC
 * channel (the parent is gone, whatever killed it) stops this process: in order once it runs
 * (SIGTERM to itself: the worker command's shutdown), at once before, and within 15 s either way.
 */
export function receiveSecrets(): Promise<void> {
  if (!process.send) return Promise.reject(new Error('--supervised needs the IPC channel of foghorn dev'));
  process.once('disconnect', () => {
    setTimeout(() => process.exit(1), 15_000).unref();
    if (process.listenerCount('SIGTERM') > 0) process.kill(process.pid, 'SIGTERM');
    else process.exit(1);
  });
  return new Promise((resolve) =>
    process.on('message', (message: WorkerMessage) => {
      if (message.type !== 'secrets') return;
      Object.assign(process.env, message.env);
      resolve();
    }),
  );
}

/**
 * In the child, once the worker polls: tells the parent. The terminal's Ctrl-C reaches the whole
 * process group; the parent stops this process in its turn (after the API), so SIGINT is ignored.
 */
export function reportReady(): void {
  process.removeAllListeners('SIGINT');
  process.on('SIGINT', () => undefined);
  process.send?.({ type: 'ready' } satisfies WorkerMessage);
}
