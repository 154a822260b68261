import { readFileSync } from 'fs';
import { mkdtemp, realpath, rm } from 'fs/promises';
import { tmpdir } from 'os';
import path from 'path';
import { runShell } from '../../activities/shell';

/** Alive and not a zombie (a container's PID 1 may never reap orphans). Linux /proc. */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** The agent's shell tool against the real /bin/sh. */
describe('runShell', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await realpath(await mkdtemp(path.join(tmpdir(), 'foghorn-shell-')));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));
  const opts = () => ({ timeoutMs: 10_000, cwd: dir });

  it('returns stdout and stderr interleaved, and the exit code', async () => {
    const run = await runShell('echo one; sleep 0.1; echo two >&2; sleep 0.1; echo three; exit 3', opts());
    expect(run).toEqual({ exitCode: 3, signal: null, output: 'one\ntwo\nthree\n', timedOut: false });
  });

  it('runs in the given directory, creating it when missing', async () => {
    const cwd = path.join(dir, 'a', 'b');
    const run = await runShell('pwd', { ...opts(), cwd });
    expect(run.output).toBe(`${cwd}\n`);
    expect(run.exitCode).toBe(0);
  });

  it('passes the given environment only', async () => {
    const run = await runShell('echo "[$ONLY_THIS][$HOME]"', {
      ...opts(),
      env: { ONLY_THIS: 'x', PATH: '/usr/bin:/bin' },
    });
    expect(run.output).toBe('[x][]\n');
  });

  it('cuts the output at the cap and says how much was left out', async () => {
    const run = await runShell('head -c 5000 /dev/zero | tr "\\0" a; echo; echo done', {
      ...opts(),
      maxOutputBytes: 1000,
    });
    expect(run.exitCode).toBe(0);
    const [kept, note] = run.output.split('\n[output truncated: ');
    expect(kept).toBe('a'.repeat(1000));
    expect(note).toBe('4006 more bytes not shown]');
  });

  it('kills the whole process group on timeout, background jobs included', async () => {
    const started = Date.now();
    const run = await runShell('echo started; sleep 30 & sleep 30; echo never', { ...opts(), timeoutMs: 500 });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(run).toMatchObject({ timedOut: true, exitCode: null, signal: 'SIGKILL', output: 'started\n' });
  });

  it('stops at the timeout when a background job keeps the output open after the shell exits', async () => {
    const run = await runShell(`sleep 30 & echo $! > ${dir}/bg.pid; echo bye`, { ...opts(), timeoutMs: 500 });
    expect(run.timedOut).toBe(true);
    expect(run.output).toBe('bye\n');
    const pid = Number((await runShell(`cat ${dir}/bg.pid`, opts())).output);
    expect(running(pid)).toBe(false); // the group kill took the background sleep too
  });
});
