import { spawn, spawnSync } from 'child_process';
import { constants, existsSync, readFileSync } from 'fs';
import { mkdir, open, readdir } from 'fs/promises';
import os from 'os';
import path from 'path';
import {
  decideShellAvailability,
  defaultShellLimits,
  findPasswdEntry,
  parsePasswdLine,
  sandboxCommand,
  sandboxEnv,
  type PasswdEntry,
  type SandboxTools,
  type ShellAvailability,
  type ShellLimits,
  type ShellNetwork,
  type ShellSandbox,
} from '../domain/shell-sandbox';

/**
 * The agent's shell tool (DESIGN §10): one command, in the sandbox of domain/shell-sandbox.ts
 * (unprivileged user, empty environment, its own directory, resource limits, no network by
 * default), bounded in time and output.
 */
export interface ShellOptions {
  timeoutMs: number;
  /** The command's working directory and HOME: created when missing, owned by the shell user, mode 700. */
  cwd: string;
  sandbox: ShellSandbox;
  /** Overrides of defaultShellLimits(timeoutMs). */
  limits?: Partial<ShellLimits>;
  maxOutputBytes?: number;
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

/** The default working directory: a dedicated one, never Foghorn's own. */
export const DEFAULT_SHELL_DIR = path.join(os.tmpdir(), 'foghorn-shell');

/** A working directory the shell may not use (a symlink, or someone else's files). */
export class ShellDirError extends Error {}

/**
 * Makes `dir` the shell user's own: created when missing; an existing directory is taken over
 * only when it is empty or already the user's (so a mistyped FOGHORN_AGENT_SHELL_DIR never hands
 * Foghorn's files to it). Changed through a descriptor opened without following symlinks.
 */
export async function prepareShellDir(dir: string, uid: number, gid: number): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  let handle;
  try {
    handle = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (err) {
    throw new ShellDirError(
      `the shell directory ${dir} is not a plain directory (${(err as NodeJS.ErrnoException).code})`,
    );
  }
  try {
    const stat = await handle.stat();
    if (stat.uid !== uid || stat.gid !== gid) {
      if (stat.uid !== uid && (await readdir(dir)).length > 0) {
        throw new ShellDirError(
          `the shell directory ${dir} belongs to uid ${stat.uid} and is not empty; choose an empty or new FOGHORN_AGENT_SHELL_DIR`,
        );
      }
      await handle.chown(uid, gid);
    }
    if ((stat.mode & 0o7777) !== 0o700) await handle.chmod(0o700);
  } finally {
    await handle.close();
  }
}

/**
 * Runs `command` with /bin/sh in the sandbox, in its own process group, so a timeout kills
 * everything it started (background jobs, pipelines), not just the shell. Resolves once every
 * holder of its output pipes is gone.
 */
export async function runShell(command: string, opts: ShellOptions): Promise<ShellRun> {
  const max = opts.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  const { sandbox } = opts;
  await prepareShellDir(opts.cwd, sandbox.uid, sandbox.gid);
  const { file, args } = sandboxCommand(sandbox, { ...defaultShellLimits(opts.timeoutMs), ...opts.limits }, command);
  const child = spawn(file, args, {
    cwd: opts.cwd,
    env: sandboxEnv(opts.cwd),
    detached: true, // a new process group whose id is the first process's pid
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

const TOOL_DIRS = ['/usr/bin', '/bin', '/usr/sbin', '/sbin', '/usr/local/bin'];

/** util-linux tools by absolute path (never through a PATH someone else controls). */
function findTools(): SandboxTools {
  const find = (name: string) => TOOL_DIRS.map((d) => path.join(d, name)).find((p) => existsSync(p));
  return { setpriv: find('setpriv'), prlimit: find('prlimit'), unshare: find('unshare') };
}

/** The user's passwd entry through NSS (`getent`), else /etc/passwd. */
export function lookupUser(user: string): PasswdEntry | undefined {
  const getent = spawnSync('getent', ['passwd', user], { encoding: 'utf8', timeout: 5_000 });
  if (!getent.error) return getent.status === 0 ? parsePasswdLine(getent.stdout.split('\n')[0] ?? '') : undefined;
  try {
    return findPasswdEntry(readFileSync('/etc/passwd', 'utf8'), user);
  } catch {
    return undefined;
  }
}

const probes = new Map<string, ShellAvailability>();

/**
 * Whether the shell can run here (decideShellAvailability), then one real run of the whole
 * chain (`true` in the sandbox): a container without CAP_SETUID or CAP_SYS_ADMIN fails here, once,
 * instead of on every command. Cached per user and network.
 */
export function probeShell(opts: { enabled: boolean; user: string; network: ShellNetwork }): ShellAvailability {
  const key = `${opts.enabled}|${opts.user}|${opts.network}`;
  const cached = probes.get(key);
  if (cached) return cached;
  const decided = decideShellAvailability({
    enabled: opts.enabled,
    processUid: process.getuid?.(),
    user: opts.user,
    account: opts.enabled && process.getuid?.() === 0 ? lookupUser(opts.user) : undefined,
    network: opts.network,
    tools: findTools(),
  });
  let result = decided;
  if (decided.available) {
    const { file, args } = sandboxCommand(decided.sandbox, defaultShellLimits(5_000), 'true');
    const run = spawnSync(file, args, { cwd: '/', env: sandboxEnv('/'), encoding: 'utf8', timeout: 10_000 });
    if (run.error || run.status !== 0) {
      const why = (run.error?.message ?? run.stderr.trim().split('\n')[0]) || `exit code ${run.status}`;
      result = {
        available: false,
        reason:
          `the sandbox does not work here (${why})` +
          (opts.network === 'none'
            ? '; a private network namespace needs CAP_SYS_ADMIN: grant it, or set FOGHORN_AGENT_SHELL_NETWORK=host'
            : ''),
      };
    }
  }
  probes.set(key, result);
  return result;
}

/**
 * The sandbox and working directory configured for shell commands (FOGHORN_AGENT_SHELL_USER,
 * _NETWORK, _DIR): the chat agent's /sh and runbook RunScript steps run the same way.
 */
export function configuredShell(config: {
  FOGHORN_AGENT_SHELL_USER: string;
  FOGHORN_AGENT_SHELL_NETWORK: ShellNetwork;
  FOGHORN_AGENT_SHELL_DIR?: string;
}): { shell: ShellAvailability; cwd: string } {
  return {
    shell: probeShell({
      enabled: true,
      user: config.FOGHORN_AGENT_SHELL_USER,
      network: config.FOGHORN_AGENT_SHELL_NETWORK,
    }),
    cwd: path.resolve(config.FOGHORN_AGENT_SHELL_DIR ?? DEFAULT_SHELL_DIR),
  };
}
