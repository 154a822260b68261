import { spawn, type ChildProcess } from 'child_process';
import { randomBytes } from 'crypto';
import { readFileSync } from 'fs';
import { chmod, lstat, mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from 'fs/promises';
import { createServer, type Server } from 'net';
import { tmpdir } from 'os';
import path from 'path';
import { prepareShellDir, probeShell, runShell, type ShellOptions } from '../../activities/shell';
import type { ShellNetwork, ShellSandbox } from '../../domain/shell-sandbox';

/** Alive and not a zombie (a container's PID 1 may never reap orphans). Linux /proc. */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

const NOBODY = 65534;
const SECRET = `do-not-leak-${randomBytes(12).toString('hex')}`;

function sandboxFor(network: ShellNetwork): ShellSandbox {
  const shell = probeShell({ enabled: true, user: 'nobody', network });
  if (!shell.available) throw new Error(`the shell sandbox is not available on this machine: ${shell.reason}`);
  return shell.sandbox;
}

/** The agent's shell against the real /bin/sh, setpriv, prlimit and unshare (the suite runs as root). */
describe('runShell in the sandbox', () => {
  let dir: string;
  let decoy: ChildProcess;
  let listener: Server;
  let listenerPort: number;
  beforeAll(async () => {
    dir = await realpath(await mkdtemp(path.join(tmpdir(), 'foghorn-shell-test-')));
    await chmod(dir, 0o755); // the tests below must not pass merely because nobody cannot reach `dir`
    // A root process whose environment (as the kernel keeps it) holds a secret, like Foghorn's.
    decoy = spawn('sleep', ['600'], { env: { PATH: '/usr/bin:/bin', FOGHORN_ADMIN_TOKEN: SECRET }, stdio: 'ignore' });
    process.env.FOGHORN_TEST_API_KEY = SECRET; // would reach a shell that inherited the worker's environment
    listener = createServer((socket) => socket.end('hello\n'));
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    listenerPort = (listener.address() as { port: number }).port;
  });
  afterAll(async () => {
    delete process.env.FOGHORN_TEST_API_KEY;
    decoy?.kill('SIGKILL');
    await new Promise((resolve) => listener?.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  describe.each<ShellNetwork>(['none', 'host'])('network %s', (network) => {
    let cwd: string;
    beforeAll(() => {
      cwd = path.join(dir, `work-${network}`);
    });
    const opts = (more: Partial<ShellOptions> = {}): ShellOptions => ({
      timeoutMs: 20_000,
      cwd,
      sandbox: sandboxFor(network),
      ...more,
    });

    it('returns stdout and stderr interleaved, and the exit code', async () => {
      const run = await runShell('echo one; sleep 0.1; echo two >&2; sleep 0.1; echo three; exit 3', opts());
      expect(run).toEqual({ exitCode: 3, signal: null, output: 'one\ntwo\nthree\n', timedOut: false });
    });

    it('runs ordinary commands: pipelines, uname, ls, files in its own directory', async () => {
      const run = await runShell(
        'echo hello | tr a-z A-Z; uname -s; ls / | grep -c . >/dev/null && echo listed; echo kept > f; cat f; false',
        opts(),
      );
      expect(run.output).toBe('HELLO\nLinux\nlisted\nkept\n');
      expect(run.exitCode).toBe(1);
    });

    it('runs as the unprivileged user without capabilities, in a directory it owns (mode 700)', async () => {
      const run = await runShell(
        'id -u; id -g; id -G; pwd; grep -E "^(CapEff|CapPrm|CapBnd|NoNewPrivs):" /proc/self/status',
        opts(),
      );
      expect(run.output).toBe(
        `${NOBODY}\n${NOBODY}\n${NOBODY}\n${cwd}\nCapPrm:\t0000000000000000\nCapEff:\t0000000000000000\nCapBnd:\t0000000000000000\nNoNewPrivs:\t1\n`,
      );
      const stat = await lstat(cwd);
      expect({ uid: stat.uid, gid: stat.gid, mode: stat.mode & 0o777 }).toEqual({
        uid: NOBODY,
        gid: NOBODY,
        mode: 0o700,
      });
    });

    it('starts with an empty environment: a minimal PATH, HOME = its directory, LANG', async () => {
      expect(process.env.FOGHORN_TEST_API_KEY).toBe(SECRET);
      const run = await runShell('env | sort', opts());
      expect(run.output).toBe(`HOME=${cwd}\nLANG=C.UTF-8\nPATH=/usr/local/bin:/usr/bin:/bin\nPWD=${cwd}\n`);
    });

    it("cannot read its parent's or any other process's environment", async () => {
      // The secret is there to be found by root: the attempts below fail because of the sandbox.
      expect(readFileSync(`/proc/${decoy.pid}/environ`, 'utf8')).toContain(SECRET);
      const parent = await runShell('tr "\\0" "\\n" < /proc/$PPID/environ', opts());
      expect(parent.exitCode).not.toBe(0);
      expect(parent.output).toMatch(network === 'host' ? /Permission denied/ : /No such file/);
      const other = await runShell(`cat /proc/${decoy.pid}/environ`, opts());
      expect(other.exitCode).not.toBe(0);
      const all = await runShell('cat /proc/*/environ | tr "\\0" "\\n"', opts());
      for (const run of [parent, other, all]) {
        expect(run.output).not.toContain(SECRET);
        expect(run.output).not.toContain('FOGHORN_');
      }
    });

    it(
      network === 'none'
        ? 'cannot connect to a server on the host (its own network namespace)'
        : 'reaches servers on the host (the documented trade-off of FOGHORN_AGENT_SHELL_NETWORK=host)',
      async () => {
        const run = await runShell(
          `python3 -c "import socket; s = socket.create_connection(('127.0.0.1', ${listenerPort}), 2); print(s.recv(10).decode().strip())"`,
          opts(),
        );
        if (network === 'none') {
          expect(run.exitCode).toBe(1);
          expect(run.output).toMatch(/Network is unreachable/);
          expect(run.output).not.toContain('hello');
        } else {
          expect(run).toMatchObject({ exitCode: 0, output: 'hello\n' });
        }
      },
    );

    it('cuts the output at the cap and says how much was left out', async () => {
      const run = await runShell(
        'head -c 5000 /dev/zero | tr "\\0" a; echo; echo done',
        opts({ maxOutputBytes: 1000 }),
      );
      expect(run.exitCode).toBe(0);
      const [kept, note] = run.output.split('\n[output truncated: ');
      expect(kept).toBe('a'.repeat(1000));
      expect(note).toBe('4006 more bytes not shown]');
    });

    it('kills the whole process group on timeout, background jobs included', async () => {
      const run = await runShell('echo started; sleep 30 & sleep 30; echo never', opts({ timeoutMs: 500 }));
      expect(run).toMatchObject({ timedOut: true, exitCode: null, signal: 'SIGKILL', output: 'started\n' });
    });

    it('refuses a big allocation (address space limit)', async () => {
      const run = await runShell('python3 -c "x = bytearray(2 * 1024 ** 3)"', opts());
      expect(run.exitCode).toBe(1);
      expect(run.output).toContain('MemoryError');
    });

    it('stops writing at the file size limit', async () => {
      const run = await runShell(
        'head -c 2097152 /dev/zero > big; echo "exit $?"; wc -c < big',
        opts({ limits: { fileSizeBytes: 1024 * 1024 } }),
      );
      // The write failed and the file stopped at the limit. (The shell's own note on stderr,
      // 'File size limit exceeded', may arrive before or after stdout: its order is not checked.)
      expect(run.output).toMatch(/^exit [1-9]\d*$/m);
      expect(run.output).toMatch(/^1048576$/m);
    });
  });

  it('without network, background jobs end with the shell (its PID namespace)', async () => {
    const run = await runShell('sleep 30 & echo "bg $! of $$"', {
      timeoutMs: 20_000,
      cwd: path.join(dir, 'work-none'),
      sandbox: sandboxFor('none'),
    });
    // The shell is the namespace's init (pid 1): when it exits, the sleep holding the output dies too.
    expect(run).toMatchObject({ timedOut: false, exitCode: 0, output: expect.stringMatching(/^bg \d+ of 1\n$/) });
  });

  it('with the host network, stops at the timeout when a background job keeps the output open', async () => {
    const cwd = path.join(dir, 'work-host');
    const sandbox = sandboxFor('host');
    const run = await runShell('sleep 30 & echo $! > bg.pid; echo bye', { timeoutMs: 500, cwd, sandbox });
    expect(run.timedOut).toBe(true);
    expect(run.output).toBe('bye\n');
    const pid = Number(await readFile(path.join(cwd, 'bg.pid'), 'utf8'));
    // The group kill took the background sleep too. SIGKILL is sent, not awaited: on a busy
    // machine the sleep may take a moment to die, so wait for it (bounded) rather than sample once.
    const deadline = Date.now() + 10_000;
    while (running(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(running(pid)).toBe(false);
  });

  it('stops a fork bomb at the process limit', async () => {
    const run = await runShell(
      'echo 0 > forked; n=0; while [ $n -lt 200 ]; do sleep 30 & n=$((n+1)); echo $n > forked; done; echo "all $n"',
      { timeoutMs: 20_000, cwd: path.join(dir, 'work-none'), sandbox: sandboxFor('none'), limits: { processes: 16 } },
    );
    expect(run.output).toMatch(/Cannot fork/);
    expect(run.output).not.toContain('all 200');
    expect(Number(await readFile(path.join(dir, 'work-none', 'forked'), 'utf8'))).toBeLessThan(16);
  });
});

describe('the shell directory', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await realpath(await mkdtemp(path.join(tmpdir(), 'foghorn-shell-dir-')));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('is created when missing and handed to the shell user, mode 700; an existing one is tightened', async () => {
    const created = path.join(dir, 'a', 'b');
    await prepareShellDir(created, NOBODY, NOBODY);
    const stat = await lstat(created);
    expect({ uid: stat.uid, mode: stat.mode & 0o777 }).toEqual({ uid: NOBODY, mode: 0o700 });
    await chmod(created, 0o777);
    await prepareShellDir(created, NOBODY, NOBODY);
    expect((await lstat(created)).mode & 0o777).toBe(0o700);
  });

  it("takes over an empty directory, but never someone else's files or a symlink", async () => {
    const empty = path.join(dir, 'empty');
    await mkdir(empty);
    await prepareShellDir(empty, NOBODY, NOBODY);
    expect((await lstat(empty)).uid).toBe(NOBODY);

    const full = path.join(dir, 'full');
    await mkdir(full);
    await writeFile(path.join(full, 'admin-token'), 'x');
    await expect(prepareShellDir(full, NOBODY, NOBODY)).rejects.toThrow(/belongs to uid 0 and is not empty/);
    expect((await lstat(full)).uid).toBe(0);

    const link = path.join(dir, 'link');
    await symlink(full, link);
    await expect(prepareShellDir(link, NOBODY, NOBODY)).rejects.toThrow(/is not a plain directory/);
    expect((await lstat(full)).uid).toBe(0);
  });
});

describe('probeShell', () => {
  it('finds the sandbox working for the default user, with and without network', () => {
    for (const network of ['none', 'host'] as const) {
      expect(probeShell({ enabled: true, user: 'nobody', network })).toMatchObject({
        available: true,
        sandbox: { user: 'nobody', uid: NOBODY, gid: NOBODY, network },
      });
    }
  });

  it('is off, with the reason, for a user that does not exist', () => {
    expect(probeShell({ enabled: true, user: 'no-such-user-fh', network: 'none' })).toEqual({
      available: false,
      reason: 'the shell user no-such-user-fh (FOGHORN_AGENT_SHELL_USER) does not exist',
    });
  });
});
