import { spawn, type ChildProcess, type SpawnOptions } from 'child_process';
import { existsSync } from 'fs';
import { createInterface } from 'readline';

/** A child server process that can be stopped and waited for. */
export interface ServerProcess {
  child: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Spawns a server and resolves once `ready(line)` matches a line of its output. Its stdin is a
 * pipe we never close: servers that watch stdin (our MongoDB launcher) exit when we die.
 */
export function spawnServer(
  name: string,
  command: string,
  args: string[],
  ready: (line: string) => boolean,
  options: SpawnOptions & { timeoutMs?: number; onLine?: (line: string) => void } = {},
): Promise<ServerProcess> {
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], ...options });
  const output: string[] = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => fail(new Error(`${name} did not start within ${options.timeoutMs ?? 60_000} ms:\n${output.join('\n')}`)),
      options.timeoutMs ?? 60_000,
    );
    const fail = (err: Error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(err);
    };
    const onLine = (line: string) => {
      output.push(line);
      if (output.length > 50) output.shift();
      options.onLine?.(line);
      if (ready(line)) {
        clearTimeout(timer);
        resolve({ child, stop: () => stopProcess(child) });
      }
    };
    createInterface({ input: child.stdout! }).on('line', onLine);
    createInterface({ input: child.stderr! }).on('line', onLine);
    child.once('error', (err) => fail(new Error(`${name} could not start: ${err.message}`)));
    child.once('exit', (code, signal) =>
      fail(new Error(`${name} exited (${signal ?? code}) before it was ready:\n${output.join('\n')}`)),
    );
  });
}

/** SIGTERM, then SIGKILL after a grace period; resolves when the process is gone. */
export function stopProcess(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

const SETPRIV = '/usr/bin/setpriv';

/**
 * The command line that runs `binary` so the kernel stops it when we die, even by kill -9
 * (setpriv sets the parent-death signal, then execs it). Servers that do not watch their stdin
 * (the Temporal CLI, the Kubernetes components) would otherwise outlive a killed parent.
 */
export function diesWithParent(binary: string, args: string[]): [string, string[]] {
  return existsSync(SETPRIV) ? [SETPRIV, ['--pdeathsig', 'SIGTERM', '--', binary, ...args]] : [binary, args];
}

/**
 * Spawns a server that announces nothing reliable on its output, and resolves once `probe`
 * answers true (polled). Its output goes to `onLine`; the last lines explain a failed start.
 */
export function spawnProbed(
  name: string,
  command: string,
  args: string[],
  probe: () => Promise<boolean>,
  options: SpawnOptions & { timeoutMs?: number; onLine?: (line: string) => void } = {},
): Promise<ServerProcess> {
  const [cmd, cmdArgs] = diesWithParent(command, args);
  const child = spawn(cmd, cmdArgs, { stdio: ['ignore', 'pipe', 'pipe'], ...options });
  const output: string[] = [];
  const onLine = (line: string) => {
    output.push(line);
    if (output.length > 30) output.shift();
    options.onLine?.(line);
  };
  createInterface({ input: child.stdout! }).on('line', onLine);
  createInterface({ input: child.stderr! }).on('line', onLine);
  const timeoutMs = options.timeoutMs ?? 60_000;
  return new Promise((resolve, reject) => {
    let exited: string | undefined;
    child.once('error', (err) => (exited = `could not start: ${err.message}`));
    child.once('exit', (code, signal) => (exited = `exited (${signal ?? code}) before it was ready`));
    const deadline = Date.now() + timeoutMs;
    const poll = async () => {
      if (exited) return reject(new Error(`${name} ${exited}:\n${output.join('\n')}`));
      if (await probe().catch(() => false)) return resolve({ child, stop: () => stopProcess(child) });
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        return reject(new Error(`${name} was not ready within ${timeoutMs} ms:\n${output.join('\n')}`));
      }
      setTimeout(() => void poll(), 250);
    };
    void poll();
  });
}
