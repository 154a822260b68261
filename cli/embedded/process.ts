import { spawn, type ChildProcess, type SpawnOptions } from 'child_process';
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
