import { Connection } from '@temporalio/client';
import { spawn, type ChildProcess } from 'child_process';
import path from 'path';

/**
 * Foghorn's own processes (`foghorn worker`, `foghorn gateway start`, …) as children of a test,
 * each in its own process group, so a test can kill -9 one of them as a crash would, and
 * afterAll can make sure nothing is left behind.
 */
const CLI = path.join(__dirname, '../../bin/foghorn.js');

export interface CliProcess {
  child: ChildProcess;
  pid: number;
  /** Everything it printed so far (stdout and stderr interleaved). */
  output(): string;
  /** Resolves with the exit code (or the signal name) once it is gone. */
  exited: Promise<number | string>;
  /** kill -9 of its whole process group, as a crash would; resolves when it is gone. */
  crash(): Promise<void>;
  /** SIGTERM (a graceful stop), SIGKILL to the group after a grace period. */
  stop(graceMs?: number): Promise<void>;
}

const running = new Set<CliProcess>();
const spawned: number[] = [];

const gone = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null;

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is empty already
  }
}

/** Spawns `node bin/foghorn.js ...args` with `env` on top of this process's environment. */
export function spawnCli(args: string[], env: NodeJS.ProcessEnv): CliProcess {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // its own process group: crash() takes anything it started with it
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => {
      running.delete(proc);
      resolve(code ?? signal ?? 'unknown');
    }),
  );
  const proc: CliProcess = {
    child,
    pid: child.pid!,
    output: () => output,
    exited,
    crash: async () => {
      signalGroup(child.pid!, 'SIGKILL');
      await exited;
    },
    stop: async (graceMs = 15_000) => {
      if (!gone(child)) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => signalGroup(child.pid!, 'SIGKILL'), graceMs);
        await exited;
        clearTimeout(timer);
      }
      signalGroup(child.pid!, 'SIGKILL'); // anything it left in its group
    },
  };
  running.add(proc);
  spawned.push(proc.pid);
  return proc;
}

/** Runs a one-shot command (e.g. `gateway status`) to completion. */
export async function runCli(
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs = 60_000,
): Promise<{ code: number | string; output: string }> {
  const proc = spawnCli(args, env);
  const timer = setTimeout(() => signalGroup(proc.pid, 'SIGKILL'), timeoutMs);
  const code = await proc.exited;
  clearTimeout(timer);
  return { code, output: proc.output() };
}

/** kill -9 of every process spawnCli started that is still running (afterAll). */
export async function killAll(): Promise<void> {
  await Promise.all([...running].map((p) => p.crash()));
}

/**
 * The process groups spawnCli started that still have a live member after `graceMs` (afterAll:
 * expect none). A group just killed is not gone at once: on a busy machine its members (a forked
 * worker, a JVM) are reaped a moment after the leader, and a zombie still answers kill(pid, 0).
 */
export async function survivors(graceMs = 10_000): Promise<number[]> {
  const live = () => spawned.filter((pid) => alive(-pid));
  await until('every process group gone', () => live().length === 0, graceMs).catch(() => undefined);
  return live();
}

/** True while the process (or, for -pid, any process of the group) exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Polls `check` until it returns true; the error names what was awaited and the last output. */
export async function until(
  what: string,
  check: () => Promise<boolean> | boolean,
  timeoutMs: number,
  context: () => string = () => '',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms\n${context()}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Resolves once the gateway's webhook listener answers HTTP (GET ⇒ 405). */
export async function waitListening(url: string, proc: CliProcess, timeoutMs = 60_000): Promise<void> {
  await until(
    `gateway listening on ${url}`,
    async () => {
      if (gone(proc.child)) throw new Error(`the gateway exited (${await proc.exited}):\n${proc.output()}`);
      return fetch(url).then(
        (r) => r.status === 405,
        () => false,
      );
    },
    timeoutMs,
    proc.output,
  );
}

/**
 * Resolves once the worker process polls the task queue. The SDK's default worker identity is
 * `<pid>@<host>`, which tells a new worker from the poller a killed one leaves listed for a while.
 */
export async function waitPolling(
  temporalAddress: string,
  taskQueue: string,
  proc: CliProcess,
  timeoutMs = 120_000,
): Promise<void> {
  const connection = await Connection.connect({ address: temporalAddress });
  try {
    await until(
      `worker ${proc.pid} polling ${taskQueue}`,
      async () => {
        if (gone(proc.child)) throw new Error(`the worker exited (${await proc.exited}):\n${proc.output()}`);
        const { pollers } = await connection.workflowService.describeTaskQueue({
          namespace: 'default',
          taskQueue: { name: taskQueue },
          taskQueueType: 1, // TASK_QUEUE_TYPE_WORKFLOW
        });
        return (pollers ?? []).some((p) => p.identity?.startsWith(`${proc.pid}@`));
      },
      timeoutMs,
      proc.output,
    );
  } finally {
    await connection.close();
  }
}
