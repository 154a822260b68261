import { mkdirSync, readFileSync, writeFileSync } from 'fs';
import path from 'path';
import { descendants } from '../test/harness/dev-process';

/** A file of /proc/<pid>/, or '' once the process is gone. */
const proc = (pid: number, file: string) => {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return '';
  }
};

/** A process's command name, parent and CPU time (user + system, seconds); undefined once it is gone. */
export function procStat(pid: number): { name: string; ppid: number; cpuSeconds: number } | undefined {
  const stat = proc(pid, 'stat');
  if (!stat) return undefined;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return {
    name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
    ppid: Number(fields[1]),
    cpuSeconds: (Number(fields[11]) + Number(fields[12])) / 100, // utime, stime in USER_HZ (100)
  };
}

/** CPU time (user + system) a process has used, in seconds (0 once it is gone). */
export const cpuSeconds = (pid: number) => procStat(pid)?.cpuSeconds ?? 0;

/** Resident memory of a process, in MiB (0 once it is gone). */
export const rssMiB = (pid: number) => Math.round(Number(/VmRSS:\s+(\d+)/.exec(proc(pid, 'status'))?.[1] ?? 0) / 1024);

/**
 * The processes of a `foghorn dev` stack, each named: `api` (the dev process itself: API and
 * gateway), `worker`, `mongo-java`, `temporal`; anything else beneath it is left out.
 */
export function stackProcesses(devPid: number): { pid: number; name: string }[] {
  const named = (pid: number) => {
    if (pid === devPid) return 'api';
    const args = proc(pid, 'cmdline').split('\0').join(' ');
    if (args.includes('MongoLauncher')) return 'mongo-java';
    if (args.includes('start-dev')) return 'temporal';
    if (args.includes('worker --supervised')) return 'worker';
    return '';
  };
  return [devPid, ...descendants(devPid)].map((pid) => ({ pid, name: named(pid) })).filter((p) => p.name !== '');
}

/** CPU seconds each process of a `foghorn dev` stack (stackProcesses) has used so far, by name. */
export function stackCpu(devPid: number): () => Map<string, number> {
  const procs = stackProcesses(devPid);
  return () => new Map(procs.map((p) => [p.name, cpuSeconds(p.pid)]));
}

/** Per process, `after` less `before` (two stackCpu readings). */
export const cpuBetween = (before: Map<string, number>, after: Map<string, number>) =>
  new Map([...after].map(([name, seconds]) => [name, seconds - (before.get(name) ?? 0)]));

export const cpuTotal = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);

/** `api 0.7, worker 5.8, …; total 14.8` */
export const showCpu = (m: Map<string, number>) =>
  `${[...m].map(([name, seconds]) => `${name} ${seconds.toFixed(1)}`).join(', ')}; total ${cpuTotal(m).toFixed(1)}`;

/**
 * `--js-profile=DIR`: the Node flags that have a `foghorn dev` stack's Node processes write V8 CPU
 * profiles of every thread into DIR as they exit (none without a DIR). bench/js-profile.ts reads
 * them with the window writeProfileWindow leaves beside them.
 */
export function jsProfileFlags(dir: string | undefined): string[] {
  if (!dir) return [];
  mkdirSync(dir, { recursive: true });
  return ['--cpu-prof', `--cpu-prof-dir=${path.resolve(dir)}`];
}

/** The clock V8's CPU profiles keep (CLOCK_MONOTONIC, in microseconds). */
export const monotonicMicros = () => Number(process.hrtime.bigint() / 1000n);

/** What bench/js-profile.ts needs beside the profiles: the measured window, and whose each pid is. */
export function writeProfileWindow(dir: string, devPid: number, from: number, to: number): void {
  const processes = Object.fromEntries(stackProcesses(devPid).map((p) => [p.pid, p.name]));
  writeFileSync(path.join(dir, 'window.json'), JSON.stringify({ from, to, processes }));
}
