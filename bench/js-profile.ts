/**
 * Where the Node processes' CPU goes, by package and by function, from the V8 CPU profiles that
 * `bench/remediation.ts burst … --js-profile=DIR` or `bench/gateway-accept.ts … --js-profile=DIR`
 * has the API and the worker write (every thread: the worker's workflows run in a thread of their
 * own). Only samples in the measured window (the burst, or the level's POSTs) count
 * (DIR/window.json; the whole profile without it). Self time only: V8 does not
 * carry a call stack across an await, so inclusive time under-counts async code. What perf
 * cannot say (bench/cpu-profile.ts): which library a JavaScript function belongs to. A
 * diagnostic, not a test.
 *
 *   npx ts-node --transpile-only bench/remediation.ts burst 50 2 50 --js-profile=/tmp/js
 *   npx ts-node --transpile-only bench/gateway-accept.ts 8000 100 --levels=50 --rate=400 --js-profile=/tmp/js
 *   npx ts-node --transpile-only bench/js-profile.ts /tmp/js [--top=20] [--min=5]
 *
 *   --top=N  packages and functions listed per thread (20)
 *   --min=P  list threads with at least P% of all samples in the window (5)
 */
import { existsSync, readdirSync, readFileSync } from 'fs';
import path from 'path';
import { flag, positional } from './args';

const DIR = positional[0];
const TOP = Number(flag('top') ?? 20);
const MIN_PERCENT = Number(flag('min') ?? 5);

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface Profile {
  nodes: { id: number; callFrame: CallFrame }[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}
interface Window {
  from: number;
  to: number;
  processes: Record<string, string>;
}

/** The library a frame's code comes from: an npm package, Node's own, ours by folder, or V8's. */
function packageOf(frame: CallFrame): string {
  if (!frame.url) return frame.functionName.startsWith('(') ? frame.functionName : '(native)';
  const npm = /node_modules\/((@[^/]+\/)?[^/]+)/.exec(frame.url);
  if (npm) return npm[1];
  if (frame.url.startsWith('node:')) return `node:${frame.url.slice(5).split('/')[0]}`;
  const ours = /\/(?:dist\/)?(activities|api|cli|domain|gateway|operations|store|workflows|worker)\//.exec(frame.url);
  return ours ? `foghorn ${ours[1]}/` : frame.url.slice(-48);
}

const functionOf = (frame: CallFrame) =>
  `${frame.functionName || '(anonymous)'} ${packageOf(frame)} ${path.basename(frame.url)}:${frame.lineNumber + 1}`;

/** Self samples in the window, by package and by function. */
function tally(profile: Profile, window?: Window) {
  const frames = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const byPackage = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let at = profile.startTime;
  let samples = 0;
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas[i];
    const frame = frames.get(id)!;
    if (frame.functionName === '(idle)' || (window && (at < window.from || at > window.to))) return;
    samples++;
    const add = (m: Map<string, number>, key: string) => m.set(key, (m.get(key) ?? 0) + 1);
    add(byPackage, packageOf(frame));
    add(byFunction, functionOf(frame));
  });
  return { samples, byPackage, byFunction };
}

function main() {
  if (!DIR) throw new Error('usage: bench/js-profile.ts DIR [--top=N] [--min=P]');
  const windowFile = path.join(DIR, 'window.json');
  const window = existsSync(windowFile) ? (JSON.parse(readFileSync(windowFile, 'utf8')) as Window) : undefined;
  // CPU.<date>.<time>.<pid>.<thread>.<sequence>.cpuprofile
  const threads = readdirSync(DIR)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => {
      const [, , , pid, thread] = f.split('.');
      const name = `${window?.processes[pid] ?? `pid ${pid}`} ${thread === '0' ? 'main thread' : `thread ${thread}`}`;
      return { name, ...tally(JSON.parse(readFileSync(path.join(DIR, f), 'utf8')) as Profile, window) };
    });
  const all = threads.reduce((sum, t) => sum + t.samples, 0);
  console.log(
    window
      ? `samples in the measured window (${((window.to - window.from) / 1e6).toFixed(1)} s): ${all}`
      : `no window.json: every sample counts (${all})`,
  );
  const share = (n: number, of: number) => `${((100 * n) / of).toFixed(1)}%`;
  const top = (m: Map<string, number>, of: number) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, TOP)
      .map(([key, n]) => `| ${share(n, of)} | ${key} |`)
      .join('\n');
  for (const t of threads.sort((a, b) => b.samples - a.samples)) {
    if (t.samples === 0 || (100 * t.samples) / all < MIN_PERCENT) continue;
    console.log(`\n${t.name}: ${share(t.samples, all)} of the samples\n\n| self | package |\n|---|---|`);
    console.log(top(t.byPackage, t.samples));
    console.log(`\n| self | function |\n|---|---|\n${top(t.byFunction, t.samples)}`);
  }
}

main();
