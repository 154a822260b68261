import { spawn } from 'child_process';
import { mkdir } from 'fs/promises';

/** The agent's shell tool (DESIGN §10): one command, bounded in time and output. */
export interface ShellOptions {
  timeoutMs: number;
  /** Created when missing. */
  cwd: string;
  maxOutputBytes?: number;
  env?: NodeJS.ProcessEnv;
}

export interface ShellRun {
  /** null when a signal ended it. */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** stdout and stderr in arrival order, cut at maxOutputBytes with a note. */
  output: string;
  timedOut: boolean;
}

export const DEFAULT_MAX_OUTPUT_BYTES = 16 * 1024;

/**
 * Runs `command` with /bin/sh in its own process group, so a timeout kills everything it
 * started (background jobs, pipelines), not just the shell. Resolves once every holder of its
 * output pipes is gone.
 */
export async function runShell(command: string, opts: ShellOptions): Promise<ShellRun> {
  const max = opts.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  await mkdir(opts.cwd, { recursive: true });
  const child = spawn('/bin/sh', ['-c', command], {
    cwd: opts.cwd,
    env: opts.env ?? process.env,
    detached: true, // a new process group whose id is the shell's pid
    stdio: ['ignore', 'pipe', 'pipe'],
  });

  const chunks: Buffer[] = [];
  let kept = 0;
  let dropped = 0;
  const collect = (chunk: Buffer) => {
    const take = Math.min(max - kept, chunk.length);
    if (take > 0) chunks.push(chunk.subarray(0, take));
    kept += take;
    dropped += chunk.length - take;
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);

  let timedOut = false;
  const killGroup = () => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  };
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup();
    // A process that left the group (setsid) may still hold the pipes: stop waiting for it.
    setTimeout(() => {
      child.stdout.destroy();
      child.stderr.destroy();
    }, 1000).unref();
  }, opts.timeoutMs);

  try {
    const [exitCode, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', (code, sig) => resolve([code, sig]));
    });
    let output = Buffer.concat(chunks).toString('utf8');
    if (dropped > 0) output += `\n[output truncated: ${dropped} more bytes not shown]`;
    return { exitCode, signal, output, timedOut };
  } finally {
    clearTimeout(timer);
  }
}
