import { execFileSync, spawn, type ChildProcess } from 'child_process';
import path from 'path';
import { freePort } from './ports';

/** `foghorn dev` as a child process (what `npm start` runs), for e2e tests and benchmarks. */
const CLI = path.join(__dirname, '../../bin/foghorn.js');

export interface DevProcess {
  child: ChildProcess;
  output: () => string;
  token: string;
  /** The API base URL it printed, e.g. http://127.0.0.1:41234/api/v1 */
  api: string;
}

/** Environment for a private stack: free ports and the given data directory. */
export async function devEnv(dataDir: string): Promise<NodeJS.ProcessEnv> {
  return {
    FOGHORN_DATA_DIR: dataDir,
    FOGHORN_API_ADDR: `127.0.0.1:${await freePort()}`,
    FOGHORN_TEMPORAL_PORT: String(await freePort()),
    FOGHORN_TEMPORAL_UI_PORT: String(await freePort()),
    FOGHORN_MONGO_PORT: String(await freePort()),
    FOGHORN_LOG_LEVEL: 'warn',
    FOGHORN_ADMIN_TOKEN: '',
    MONGODB_URI: '',
    TEMPORAL_ADDRESS: '',
  };
}

/**
 * Starts `foghorn dev` and resolves once it printed its banner (URLs and admin token). `nodeFlags`
 * go to its node, and so to its worker's (which runs with the same flags).
 */
export async function startDev(
  env: NodeJS.ProcessEnv,
  args: string[] = [],
  nodeFlags: string[] = [],
): Promise<DevProcess> {
  const child = spawn(process.execPath, [...nodeFlags, CLI, 'dev', ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const deadline = Date.now() + 120_000;
  while (!/Admin token:\s+(\S+)/.test(output)) {
    if (child.exitCode !== null) throw new Error(`foghorn dev exited early:\n${output}`);
    if (Date.now() > deadline) throw new Error(`foghorn dev did not start:\n${output}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    child,
    output: () => output,
    token: /Admin token:\s+(\S+)/.exec(output)![1],
    api: /API:\s+(\S+)/.exec(output)![1],
  };
}

/** Resolves when /readyz answers 200 (MongoDB and Temporal reachable). */
export async function waitReady(api: string): Promise<void> {
  const readyz = new URL('/readyz', api).toString();
  for (let i = 0; i < 240; i++) {
    const status = await fetch(readyz).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error('readyz never returned 200');
}

/** SIGINT, as Ctrl-C does; resolves when the process has exited. */
export async function stopDev(dev: DevProcess): Promise<void> {
  const exited = new Promise((resolve) => dev.child.once('exit', resolve));
  dev.child.kill('SIGINT');
  await exited;
}

/** Every process below `pid` (to check that none outlives a stop). */
export function descendants(pid: number): number[] {
  const out = execFileSync('ps', ['-e', '-o', 'pid=,ppid='], { encoding: 'utf8' });
  const children = new Map<number, number[]>();
  for (const line of out.trim().split('\n')) {
    const [p, pp] = line.trim().split(/\s+/).map(Number);
    children.set(pp, [...(children.get(pp) ?? []), p]);
  }
  const found: number[] = [];
  const walk = (p: number) => (children.get(p) ?? []).forEach((c) => (found.push(c), walk(c)));
  walk(pid);
  return found;
}
