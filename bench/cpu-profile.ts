/**
 * Where a stack's CPU goes, function by function, from a system-wide `perf` recording: every
 * process's share of the samples, then each large one's hottest functions, by self time and by
 * inclusive time. Go frames (the Temporal CLI ships stripped of its symbol table) are named from
 * the binary's own line table with `go tool addr2line`; Node's and Java's compiled frames by perf
 * itself, from the `/tmp/perf-<pid>.map` files Node writes with `--perf-basic-prof` and the JVM
 * with `-XX:+DumpPerfMapAtExit` (as it exits: read the recording after the stack has stopped).
 * A diagnostic, not a test.
 *
 *   export NODE_OPTIONS=--perf-basic-prof JAVA_TOOL_OPTIONS='-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit'
 *   npx ts-node --transpile-only bench/remediation.ts burst 50 2 50 &
 *   sleep 14; perf record -a -g -F 299 -o /tmp/burst.perf -- sleep 22
 *   npx ts-node --transpile-only bench/cpu-profile.ts /tmp/burst.perf [--time=START,END] [--top=25] [--min=5]
 *
 *   --time=START,END  only samples in that window (perf's clock, as `perf script` prints it)
 *   --top=N           functions listed per process (25)
 *   --min=P           list processes with at least P% of all samples (5)
 *   --grep=REGEX      inclusive time of matching functions only (e.g. `visibility|sqlite`), where
 *                     the whole list starts with the event loop's and the goroutines' roots
 */
import { spawn, spawnSync } from 'child_process';
import { closeSync, openSync, readSync } from 'fs';
import { createInterface } from 'readline';
import { flag, positional } from './args';

const FILE = positional[0];
const TOP = Number(flag('top') ?? 25);
const MIN_PERCENT = Number(flag('min') ?? 5);
const TIME = flag('time');
const GREP = flag('grep') === undefined ? undefined : new RegExp(flag('grep')!);

interface Frame {
  ip: bigint;
  sym: string;
  dso: string;
}
interface Sample {
  pid: number;
  comm: string;
  frames: Frame[]; // leaf first
}

/** Samples as `perf script` prints them: a header line, then one indented line per frame. */
async function readSamples(file: string): Promise<Sample[]> {
  const args = ['script', '-i', file, '-F', 'pid,tid,comm,ip,sym,dso', ...(TIME ? ['--time', TIME] : [])];
  const perf = spawn('perf', args, { stdio: ['ignore', 'pipe', 'ignore'] });
  const samples: Sample[] = [];
  let current: Sample | undefined;
  for await (const line of createInterface({ input: perf.stdout })) {
    const frame = /^\s+([0-9a-f]+)\s+(.*?)\s+\((.*)\)$/.exec(line);
    if (frame && current) current.frames.push({ ip: BigInt(`0x${frame[1]}`), sym: frame[2], dso: frame[3] });
    else {
      const header = /^(.*?)\s+(\d+)\/\d+\s/.exec(line);
      if (header) samples.push((current = { comm: header[1].trim(), pid: Number(header[2]), frames: [] }));
    }
  }
  return samples;
}

/**
 * The virtual address of a non-PIE executable's first segment (0 for a shared object or a PIE):
 * perf prints an unresolved frame as an offset into its file's mapping.
 */
function loadAddress(path: string): bigint | undefined {
  const header = Buffer.alloc(64);
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return undefined; // gone (a JIT's map file, a deleted binary)
  }
  try {
    readSync(fd, header, 0, 64, 0);
    if (header.readUInt32BE(0) !== 0x7f454c46 || header[4] !== 2 || header.readUInt16LE(16) !== 2) return 0n; // ELF64 EXEC
    const phoff = Number(header.readBigUInt64LE(32));
    const [size, count] = [header.readUInt16LE(54), header.readUInt16LE(56)];
    const table = Buffer.alloc(size * count);
    readSync(fd, table, 0, table.length, phoff);
    for (let i = 0; i < count; i++) {
      const entry = table.subarray(i * size);
      if (entry.readUInt32LE(0) === 1 && entry.readBigUInt64LE(8) === 0n) return entry.readBigUInt64LE(16); // PT_LOAD at offset 0
    }
    return 0n;
  } finally {
    closeSync(fd);
  }
}

/** Names the unresolved frames of Go executables in place; others keep `[unknown]`. */
function nameGoFrames(samples: Sample[]): void {
  const byDso = new Map<string, Set<bigint>>();
  for (const s of samples)
    for (const f of s.frames)
      if (f.sym === '[unknown]' && f.dso.startsWith('/'))
        (byDso.get(f.dso) ?? byDso.set(f.dso, new Set()).get(f.dso)!).add(f.ip);
  for (const [dso, ips] of byDso) {
    const base = loadAddress(dso);
    if (base === undefined) continue;
    const list = [...ips];
    const input = list.map((ip) => `0x${(ip + base).toString(16)}`).join('\n') + '\n';
    const out = spawnSync('go', ['tool', 'addr2line', dso], { input, encoding: 'utf8', maxBuffer: 1 << 28 });
    if (out.status !== 0) continue; // not a Go binary, or no Go toolchain: the frames stay unnamed
    const lines = out.stdout.split('\n');
    const names = new Map(list.map((ip, i) => [ip, lines[2 * i]]));
    for (const s of samples)
      for (const f of s.frames) if (f.dso === dso && f.sym === '[unknown]') f.sym = names.get(f.ip) ?? f.sym;
  }
}

/** A frame's name without the JIT tier marker (`JS:*` optimized, `^` baseline, `~` interpreted). */
const label = (f: Frame) => (f.dso.includes('kernel') ? '[kernel]' : f.sym.replace(/^JS:[*^~]?/, 'JS:'));

function report(samples: Sample[]): void {
  const total = samples.length;
  const pct = (n: number, of = total) => `${((100 * n) / of).toFixed(1).padStart(5)}%`;
  const byPid = new Map<number, Sample[]>();
  for (const s of samples) (byPid.get(s.pid) ?? byPid.set(s.pid, []).get(s.pid)!).push(s);
  const processes = [...byPid].sort((a, b) => b[1].length - a[1].length);
  const name = (list: Sample[]) => {
    const comms = new Map<string, number>();
    for (const s of list) comms.set(s.comm, (comms.get(s.comm) ?? 0) + 1);
    return [...comms]
      .sort((a, b) => b[1] - a[1])
      .map(([c, n]) => `${c} ${pct(n, list.length).trim()}`)
      .join(', ');
  };
  console.log(`${total} samples${TIME ? ` in ${TIME}` : ''}; by process (threads by name):`);
  for (const [pid, list] of processes.slice(0, 12)) console.log(`  ${pct(list.length)}  pid ${pid}: ${name(list)}`);
  for (const [pid, list] of processes) {
    if ((100 * list.length) / total < MIN_PERCENT) break;
    const self = new Map<string, number>();
    const inclusive = new Map<string, number>();
    for (const s of list) {
      const leaf = s.frames[0] ? label(s.frames[0]) : '?';
      self.set(leaf, (self.get(leaf) ?? 0) + 1);
      for (const l of new Set(s.frames.map(label)))
        if (l !== '[unknown]' && (!GREP || GREP.test(l))) inclusive.set(l, (inclusive.get(l) ?? 0) + 1);
    }
    const top = (m: Map<string, number>) =>
      [...m]
        .sort((a, b) => b[1] - a[1])
        .slice(0, TOP)
        .map(([l, n]) => `    ${pct(n, list.length)}  ${l.slice(0, 160)}`)
        .join('\n');
    console.log(`\npid ${pid} (${pct(list.length).trim()} of all samples), self:\n${top(self)}`);
    console.log(`pid ${pid}, inclusive${GREP ? ` (matching ${GREP.source})` : ''}:\n${top(inclusive)}`);
  }
}

async function main() {
  if (!FILE)
    throw new Error('usage: bench/cpu-profile.ts <perf.data> [--time=START,END] [--top=N] [--min=P] [--grep=REGEX]');
  if (spawnSync('perf', ['--version']).error) throw new Error('perf is not installed (Debian: apt install linux-perf)');
  const samples = await readSamples(FILE);
  if (samples.length === 0) throw new Error(`no samples in ${FILE}${TIME ? ` within ${TIME}` : ''}`);
  nameGoFrames(samples);
  report(samples);
}

main().catch((err: Error) => {
  console.error(err.message);
  process.exit(1);
});
