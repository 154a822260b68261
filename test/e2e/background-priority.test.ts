import { spawn, type ChildProcess } from 'child_process';
import { inBackground, type BackgroundPriority } from '../../cli/embedded/process';
import { SCHED_IDLE, SCHED_OTHER, threadPriorities, until } from '../harness/processes';

/**
 * How `foghorn dev` puts its worker and Temporal in the background (FOGHORN_BACKGROUND_NICE):
 * every thread a process ever starts, not only its first, is under SCHED_IDLE (Temporal's) or at
 * the niceness asked for (the worker's); at niceness 0 the command runs as it is. (The worker and
 * Temporal themselves: test/e2e/dev-worker.test.ts.)
 */
describe('inBackground: the background priority of every thread', () => {
  const children: ChildProcess[] = [];
  afterAll(() => children.forEach((c) => c.kill('SIGKILL')));

  /** A node process that starts two worker threads, then says `ready` and idles; its pid once ready. */
  const threaded = async (priority: BackgroundPriority) => {
    const script =
      "const { Worker } = require('worker_threads'); let online = 0;" +
      "for (let i = 0; i < 2; i++) new Worker('setInterval(() => {}, 1000)', { eval: true })" +
      "  .on('online', () => ++online === 2 && console.log('ready'));" +
      'setInterval(() => {}, 1000);';
    const [command, args] = inBackground(priority, process.execPath, ['-e', script]);
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(child);
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    await until('its worker threads online', () => out.includes('ready'), 20_000);
    return child.pid!;
  };

  it('runs every thread under SCHED_IDLE when asked to be idle', async () => {
    const threads = threadPriorities(await threaded({ nice: 10, idle: true }));
    expect(threads.length).toBeGreaterThan(2);
    expect(new Set(threads.map((t) => t.policy))).toEqual(new Set([SCHED_IDLE]));
  });

  it('runs every thread at the niceness asked for, as a normal thread', async () => {
    const threads = threadPriorities(await threaded({ nice: 7 }));
    expect(threads.length).toBeGreaterThan(2);
    expect(new Set(threads.map((t) => t.nice))).toEqual(new Set([7]));
    expect(new Set(threads.map((t) => t.policy))).toEqual(new Set([SCHED_OTHER]));
  });

  it('leaves the command as it is at niceness 0', () => {
    expect(inBackground({ nice: 0 }, '/bin/true', ['x'])).toEqual(['/bin/true', ['x']]);
    expect(inBackground({ nice: 10, idle: true }, '/bin/true', ['x'])).toEqual([
      '/usr/bin/chrt',
      ['--idle', '0', '/bin/true', 'x'],
    ]);
  });
});
