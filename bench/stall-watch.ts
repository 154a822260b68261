import { execFile } from 'child_process';
import { existsSync, mkdirSync, readFileSync, readlinkSync, writeFileSync } from 'fs';
import path from 'path';

/** One stretch of seconds in which `/readyz` did not answer 200. */
export interface Stall {
  /** Seconds since the watch began. */
  from: number;
  to: number;
  /** What the failed polls said, each once: `mongodb: timed out`, `no answer in 2.5 s`, … */
  reasons: Set<string>;
  /** The store's threads at the stall's first failed poll, if it was the store that failed. */
  dump?: string;
}

const POLL_MS = 1_000;
const ANSWER_MS = 2_500;

/** The host's I/O and CPU pressure (the kernel's PSI: `some avg10=…`), '' where there is none. */
function pressure(): string {
  const read = (kind: string) => {
    try {
      return `${kind} ${/some (avg10=\S+)/.exec(readFileSync(`/proc/pressure/${kind}`, 'utf8'))?.[1] ?? '?'}`;
    } catch {
      return '';
    }
  };
  return ['io', 'cpu'].map(read).filter(Boolean).join(', ');
}

/** `jstack` beside the JVM that runs the process, else the one on PATH. */
function jstackFor(pid: number): string {
  try {
    const beside = path.join(path.dirname(readlinkSync(`/proc/${pid}/exe`)), 'jstack');
    if (existsSync(beside)) return beside;
  } catch {
    // the process is gone: PATH's will say so
  }
  return 'jstack';
}

/**
 * Polls a `foghorn dev` stack's `/readyz` every second, the way an orchestrator's probe would, and
 * keeps each stall: when it began and ended, and what the API said (the store or Temporal
 * unreachable, or no answer at all). At a stall's first failed poll that names the store (or
 * gets no answer), it dumps the store's threads with `jstack -l` into `dumpDir`, with the host's
 * pressure at that moment: a rare stall of the store (about 10 s, once in eight storm soaks) is
 * caught while it lasts, not reconstructed afterwards.
 */
export function watchReadiness(api: string, storePid: () => number | undefined, dumpDir: string) {
  const started = Date.now();
  const stalls: Stall[] = [];
  let current: Stall | undefined;
  let stopped = false;
  const seconds = () => Math.round((Date.now() - started) / 1000);

  const dump = (stall: Stall) => {
    const pid = storePid();
    if (!pid) return;
    mkdirSync(dumpDir, { recursive: true });
    const file = path.join(dumpDir, `store-threads-${stall.from}s.txt`);
    stall.dump = file;
    const header = `stall at ${stall.from} s: ${[...stall.reasons].join('; ')}; pressure ${pressure()}\n\n`;
    execFile(jstackFor(pid), ['-l', String(pid)], { timeout: 30_000, maxBuffer: 64 << 20 }, (err, out, errOut) =>
      writeFileSync(file, header + (err ? `jstack failed: ${err.message}\n${errOut}` : out)),
    );
  };

  const readyz = new URL('/readyz', api); // at the root, beside the API's base path
  const poll = async (): Promise<string | undefined> => {
    try {
      const res = await fetch(readyz, { signal: AbortSignal.timeout(ANSWER_MS) });
      if (res.status === 200) return undefined;
      const body = (await res.json()) as { error?: { details?: string } }; // the error envelope
      return body.error?.details ?? `status ${res.status}`;
    } catch {
      return `no answer in ${ANSWER_MS / 1000} s`;
    }
  };

  const loop = (async () => {
    while (!stopped) {
      const due = Date.now() + POLL_MS;
      const failed = await poll();
      if (failed && !current) {
        current = { from: seconds(), to: seconds(), reasons: new Set([failed]) };
        stalls.push(current);
        if (/mongodb|no answer/.test(failed)) dump(current);
      } else if (failed && current) {
        current.reasons.add(failed);
        current.to = seconds();
      } else current = undefined;
      await new Promise((r) => setTimeout(r, Math.max(0, due - Date.now())));
    }
  })();

  return {
    stalls,
    async stop(): Promise<void> {
      stopped = true;
      await loop;
    },
  };
}
