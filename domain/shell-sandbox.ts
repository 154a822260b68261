/**
 * The agent shell's sandbox (DESIGN §10, issue 8): pure decisions and the command line; the
 * probing and spawning live in activities/shell.ts.
 *
 * A command runs as an unprivileged user (setpriv: new uid/gid, no supplementary groups, no
 * capabilities, no_new_privs), with resource limits (prlimit), an empty environment, in a
 * directory of its own; with network `none` also in private network, PID and mount namespaces
 * (unshare): only its own loopback (down), only its own processes in /proc, and everything it
 * started dies with it.
 */

export type ShellNetwork = 'none' | 'host';

/** One line of /etc/passwd (or `getent passwd`). */
export interface PasswdEntry {
  name: string;
  uid: number;
  gid: number;
}

export function parsePasswdLine(line: string): PasswdEntry | undefined {
  const [name, , uid, gid] = line.trim().split(':');
  if (!name || !/^\d+$/.test(uid ?? '') || !/^\d+$/.test(gid ?? '')) return undefined;
  return { name, uid: Number(uid), gid: Number(gid) };
}

/** The entry for a user name or numeric uid in a passwd file's text. */
export function findPasswdEntry(passwd: string, user: string): PasswdEntry | undefined {
  const entries = passwd.split('\n').map(parsePasswdLine);
  return (
    entries.find((e) => e?.name === user) ??
    (/^\d+$/.test(user) ? entries.find((e) => e?.uid === Number(user)) : undefined)
  );
}

/** Per-process limits (setrlimit); processes count every process of the shell user at once. */
export interface ShellLimits {
  /** Address space (RLIMIT_AS): a big allocation fails. */
  addressSpaceBytes: number;
  /** Processes and threads of the shell user (RLIMIT_NPROC): a fork bomb stops here. */
  processes: number;
  /** Largest file a command may write (RLIMIT_FSIZE). */
  fileSizeBytes: number;
  openFiles: number;
  /** CPU seconds per process (RLIMIT_CPU, SIGXCPU then SIGKILL a second later). */
  cpuSeconds: number;
}

/** Defaults: room for ordinary tools (python3, jq, curl), not for running a workload. */
export function defaultShellLimits(timeoutMs: number): ShellLimits {
  return {
    addressSpaceBytes: 1024 * 1024 * 1024,
    processes: 128,
    fileSizeBytes: 64 * 1024 * 1024,
    openFiles: 256,
    cpuSeconds: Math.max(1, Math.ceil(timeoutMs / 1000)),
  };
}

/** Absolute paths of the util-linux tools the sandbox needs; undefined when not installed. */
export interface SandboxTools {
  setpriv?: string;
  prlimit?: string;
  unshare?: string;
}

export interface ShellSandbox {
  user: string;
  uid: number;
  gid: number;
  network: ShellNetwork;
  tools: Required<Pick<SandboxTools, 'setpriv' | 'prlimit'>> & Pick<SandboxTools, 'unshare'>;
}

export type ShellAvailability = { available: true; sandbox: ShellSandbox } | { available: false; reason: string };

/**
 * Whether the shell can run, from what the worker found out about itself: its own uid
 * (undefined where there are no Unix users), the configured user's passwd entry, the tools.
 * Never runs anything as Foghorn's own user: not root ⇒ off.
 */
export function decideShellAvailability(facts: {
  enabled: boolean;
  processUid: number | undefined;
  user: string;
  account: PasswdEntry | undefined;
  network: ShellNetwork;
  tools: SandboxTools;
}): ShellAvailability {
  const { user, account, tools, network } = facts;
  const off = (reason: string): ShellAvailability => ({ available: false, reason });
  if (!facts.enabled) return off('FOGHORN_AGENT_SHELL=off');
  if (facts.processUid === undefined) return off('the sandbox needs Linux (setpriv, prlimit, unshare)');
  if (facts.processUid !== 0) {
    return off(
      `Foghorn runs as uid ${facts.processUid}, not root, so it cannot run commands as the unprivileged user ${user} ` +
        '(FOGHORN_AGENT_SHELL_USER); run the worker as root, or set FOGHORN_AGENT_SHELL=off',
    );
  }
  if (!account) return off(`the shell user ${user} (FOGHORN_AGENT_SHELL_USER) does not exist`);
  if (account.uid === 0 || account.gid === 0) {
    return off(`the shell user ${user} has uid or gid 0; set FOGHORN_AGENT_SHELL_USER to an unprivileged user`);
  }
  const needed: Array<keyof SandboxTools> = ['setpriv', 'prlimit', ...(network === 'none' ? ['unshare' as const] : [])];
  const missing = needed.filter((tool) => !tools[tool]);
  if (missing.length > 0) return off(`${missing.join(', ')} (util-linux) not found`);
  return {
    available: true,
    sandbox: {
      user: account.name,
      uid: account.uid,
      gid: account.gid,
      network,
      tools: { setpriv: tools.setpriv!, prlimit: tools.prlimit!, unshare: tools.unshare },
    },
  };
}

/** The only variables a command sees. */
export function sandboxEnv(dir: string): Record<string, string> {
  return { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: dir, LANG: 'C.UTF-8' };
}

/**
 * The command line that runs `command` with /bin/sh inside the sandbox. Every step execs the
 * next, so with network `host` the shell keeps the spawned pid; with `none`, unshare forks the
 * namespace's init (the shell, pid 1) and `--kill-child` takes it down with unshare.
 */
export function sandboxCommand(
  sandbox: ShellSandbox,
  limits: ShellLimits,
  command: string,
): { file: string; args: string[] } {
  const inner = [
    sandbox.tools.setpriv,
    `--reuid=${sandbox.uid}`,
    `--regid=${sandbox.gid}`,
    '--clear-groups',
    '--no-new-privs',
    '--inh-caps=-all',
    '--bounding-set=-all',
    '--',
    sandbox.tools.prlimit,
    `--as=${limits.addressSpaceBytes}`,
    `--nproc=${limits.processes}`,
    `--fsize=${limits.fileSizeBytes}`,
    `--nofile=${limits.openFiles}`,
    `--cpu=${limits.cpuSeconds}:${limits.cpuSeconds + 1}`,
    '--core=0',
    '--',
    '/bin/sh',
    '-c',
    command,
  ];
  if (sandbox.network === 'host') return { file: inner[0]!, args: inner.slice(1) };
  if (!sandbox.tools.unshare) throw new Error('unshare is needed for FOGHORN_AGENT_SHELL_NETWORK=none');
  return {
    file: sandbox.tools.unshare,
    args: ['--net', '--pid', '--fork', '--mount-proc', '--kill-child', '--', ...inner],
  };
}
