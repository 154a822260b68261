/**
 * Webhook accept path on the embedded stack (`foghorn dev` with FOGHORN_WEBHOOK_ADDR): latency
 * p50/p99 of POST /inbound up to the 202 and accepted messages per second, at 50 and 500
 * concurrent senders (one keep-alive socket each, so N senders means N requests in flight).
 * Text messages (`/help`, the built-in agent) over CHATS chat ids. Each level runs on a fresh
 * private stack. Also printed per level: the cores each process of the stack used during the
 * POSTs; how many final callbacks arrived within a bounded wait (how far the worker got with
 * the backlog); per-chat order violations among them; failed hand-overs to Temporal (from the
 * log: per message before the batched hand-over, per chat attempt since, and how many of those
 * were left to the sweeper); how long `foghorn dev` took to stop with the backlog queued; and
 * the accepting process's event-loop delay and V8 collections during the POSTs (its /metrics).
 * Usage: npx ts-node --transpile-only bench/gateway-accept.ts [requestsPerLevel=2000] [chats=100]
 *          [--levels=50,500] [--warm=N] [--rate=R] [--windows=S] [--js-profile=DIR]
 *   --warm=N  N messages first, on the same stack and not measured: a gateway that has been up a
 *             while (its store's JVM has compiled its hot paths) rather than one just started;
 *             with --rate, at that rate, so the measured seconds continue a steady state.
 *   --rate=R  open loop: request i is due at R per second from the start, taken by the next free
 *             sender; its latency runs from when it was due, so a late sender's wait counts too
 *             (no coordinated omission). Without it each sender posts again as soon as answered
 *             (closed loop: the stack's ceiling, where latency is queueing).
 *   --windows=S  also p50/p99/max per S seconds of the level (by when each request was due):
 *             a stall shows as one window, a slow start as the first few.
 *   --js-profile=DIR  (one level) V8 CPU profiles of the API and the worker, every thread, into
 *             DIR, with the measured POSTs' window; read them with bench/js-profile.ts DIR.
 */
import './compiled';
import { mkdtempSync, readdirSync, rmSync } from 'fs';
import http from 'http';
import { loadavg, tmpdir } from 'os';
import path from 'path';
import { useCallbackReceiver } from '../test/harness/callback-receiver';
import { devEnv, startDev, stopDev, waitReady } from '../test/harness/dev-process';
import { webhookEnv } from './fixtures';
import { freePort } from '../test/harness/ports';
import { jsProfileFlags, monotonicMicros, procStat, writeProfileWindow } from './processes';
import { summary } from './stats';
import { flag, positional } from './args';

const REQUESTS = Number(positional[0] ?? 2000);
const CHATS = Number(positional[1] ?? 100);
const LEVELS = (flag('levels') ?? '50,500').split(',').map(Number);
const WARM = Number(flag('warm') ?? 0);
const RATE = flag('rate') === undefined ? undefined : Number(flag('rate'));
const WINDOW_S = flag('windows') === undefined ? undefined : Number(flag('windows'));
const JS_PROFILE = flag('js-profile');
// One stack's profiles and one window per directory: bench/js-profile.ts reads them as one run.
if (JS_PROFILE && LEVELS.length !== 1) throw new Error('--js-profile profiles one level, e.g. `--levels=50`');
const SECRET = 'bench-shared-secret-0123456789abcdef';
const REQUEST_TIMEOUT_MS = 60_000;
const LEVEL_DEADLINE_MS = 120_000;
const DRAIN_DEADLINE_MS = 60_000;

interface Answer {
  status: number; // 0: no HTTP answer (socket error or timeout)
  ms: number;
  body: string;
}

/** One request on the given agent; never rejects. */
function request(agent: http.Agent, url: URL, method: string, body?: string): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = http.request(
      url,
      {
        agent,
        method,
        headers: {
          'content-type': 'application/json',
          'x-foghorn-secret': SECRET,
          ...(body !== undefined && { 'content-length': Buffer.byteLength(body) }),
        },
        timeout: REQUEST_TIMEOUT_MS,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started, body: text }));
        res.on('error', (err) => resolve({ status: 0, ms: performance.now() - started, body: String(err) }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (err) => resolve({ status: 0, ms: performance.now() - started, body: String(err) }));
    req.end(body);
  });
}

/** CPU seconds (user + system) per process name, for `pid` and all its descendants. */
function cpuByProcess(pid: number): Map<string, number> {
  const procs: { pid: number; ppid: number; name: string; cpu: number }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = procStat(Number(entry)); // undefined: gone meanwhile
    if (stat) procs.push({ pid: Number(entry), ppid: stat.ppid, name: stat.name, cpu: stat.cpuSeconds });
  }
  const mine = new Set([pid]);
  for (let grew = true; grew;) {
    grew = false;
    for (const p of procs)
      if (!mine.has(p.pid) && mine.has(p.ppid)) {
        mine.add(p.pid);
        grew = true;
      }
  }
  const byName = new Map<string, number>();
  for (const p of procs) if (mine.has(p.pid)) byName.set(p.name, (byName.get(p.name) ?? 0) + p.cpu);
  return byName;
}

interface LevelResult {
  senders: number;
  sent: number;
  seconds: number;
  latencies: number[];
  timeline: [number, number][];
  statuses: Map<number, number>;
  firstError?: string;
  accepted: number;
  answered: number;
  drainSeconds: number;
  loadBefore: number;
  /**
   * Per-chat order: message B sent after message A's 202 must not be answered before A. Counts
   * pairs where B's final arrived first, or arrived while A's is still missing.
   */
  outOfOrder: number;
  /** Hand-overs to Temporal that failed (e.g. missed their deadline), from the log. */
  lateHandOvers: number;
  /** Of those, the ones the gateway stopped retrying (left to the sweeper). */
  leftToSweeper: number;
  /** Cores used while the POSTs ran, per process of the stack, and by this benchmark. */
  cores: string;
  /** `foghorn dev` from SIGINT to exit, with the backlog still queued. */
  stopSeconds: number;
  /** The accepting process while the POSTs ran: its event loop's delay and its collections. */
  runtime: string;
}

/**
 * The accepting process's runtime figures from its /metrics (prom-client's defaults): the event
 * loop's delay since the last scrape (each scrape starts it again) and V8's collections so far.
 */
async function runtimeMetrics(api: string): Promise<Map<string, number>> {
  const text = await fetch(new URL('/metrics', api)).then((r) => r.text());
  const values = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m =
      /^(nodejs_eventloop_lag_(?:p99|max)_seconds|nodejs_gc_duration_seconds_(?:sum|count))(?:\{kind="(\w+)"\})? (\S+)$/.exec(
        line,
      );
    if (m) values.set(m[2] ? `${m[1]} ${m[2]}` : m[1], Number(m[3]));
  }
  return values;
}

/** What the process did between two scrapes: its loop's p99 and worst delay, its pauses by kind. */
function runtimeBetween(before: Map<string, number>, after: Map<string, number>): string {
  const ms = (seconds = 0) => (seconds * 1000).toFixed(1);
  const pauses = [...after]
    .filter(([key]) => key.startsWith('nodejs_gc_duration_seconds_count '))
    .map(([key, count]) => {
      const kind = key.split(' ')[1];
      const sum = `nodejs_gc_duration_seconds_sum ${kind}`;
      const n = count - (before.get(key) ?? 0);
      return n > 0 ? `${kind} ${n} (${ms((after.get(sum) ?? 0) - (before.get(sum) ?? 0))} ms)` : '';
    })
    .filter(Boolean)
    .join(', ');
  return (
    `event-loop delay p99 ${ms(after.get('nodejs_eventloop_lag_p99_seconds'))} ms, ` +
    `max ${ms(after.get('nodejs_eventloop_lag_max_seconds'))} ms; collections: ${pauses || 'none'}`
  );
}

/**
 * Open loop (--rate): waits until request `i` of a run started at `start` is due; its due time.
 * Closed loop: now.
 */
async function due(start: number, i: number): Promise<number> {
  if (RATE === undefined) return performance.now();
  const dueAt = start + (i * 1000) / RATE;
  const early = dueAt - performance.now();
  if (early > 0) await new Promise((r) => setTimeout(r, early));
  return dueAt;
}

/** One concurrency level on a fresh private stack, so each level starts with an idle worker. */
async function runLevel(senders: number): Promise<LevelResult> {
  let result: Omit<LevelResult, 'lateHandOvers' | 'leftToSweeper' | 'stopSeconds'>;
  interface Sent {
    chatId: string;
    messageId: string;
    sentAt: number;
    answeredAt: number;
  }
  let stopSeconds = 0;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'foghorn-bench-'));
  const receiver = await useCallbackReceiver(SECRET);
  const webhookPort = await freePort();
  const dev = await startDev(
    {
      ...(await devEnv(dataDir)),
      ...webhookEnv({ secret: SECRET, callbackUrl: receiver.url, addr: `127.0.0.1:${webhookPort}` }),
    },
    [],
    jsProfileFlags(JS_PROFILE),
  );
  const agent = new http.Agent({ keepAlive: true, maxSockets: senders, maxFreeSockets: senders });
  try {
    await waitReady(dev.api);
    const url = new URL(`http://127.0.0.1:${webhookPort}/inbound`);
    // Open the sockets first (a GET is a 405 and stores nothing): connection set-up is not measured.
    await Promise.all(Array.from({ length: senders }, () => request(agent, url, 'GET')));
    // Open loop, the warm-up keeps the measured rate: posted faster, it would leave a hand-over
    // backlog that lands in the first measured seconds.
    let warmed = 0;
    const warmStarted = performance.now();
    await Promise.all(
      Array.from({ length: senders }, async () => {
        while (warmed < WARM) {
          const i = warmed++;
          await due(warmStarted, i);
          await request(
            agent,
            url,
            'POST',
            JSON.stringify({ chat_id: `warm-${i % CHATS}`, user_id: 'bench', text: '/help' }),
          );
        }
      }),
    );
    const loadBefore = loadavg()[0];

    const statuses = new Map<number, number>();
    const accepted = new Set<string>();
    const latencies: number[] = [];
    /** Per request: when it was due (ms from the level's start) and its latency. */
    const timeline: [number, number][] = [];
    const sent: Sent[] = [];
    let firstError: string | undefined;
    let next = 0;
    const runtimeBefore = await runtimeMetrics(dev.api);
    const cpuBefore = cpuByProcess(dev.child.pid!);
    const benchCpuBefore = process.cpuUsage();
    const started = performance.now();
    const profileFrom = monotonicMicros();
    const deadline = Date.now() + LEVEL_DEADLINE_MS;
    await Promise.all(
      Array.from({ length: senders }, async () => {
        while (next < REQUESTS && Date.now() < deadline) {
          const i = next++;
          const chatId = `bench-${i % CHATS}`;
          const body = JSON.stringify({ chat_id: chatId, user_id: 'bench', text: '/help' });
          const dueAt = await due(started, i);
          const sentAt = performance.now();
          const answer = await request(agent, url, 'POST', body);
          latencies.push(sentAt + answer.ms - Math.min(dueAt, sentAt));
          timeline.push([Math.min(dueAt, sentAt) - started, latencies[latencies.length - 1]]);
          statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
          if (answer.status === 202) {
            const messageId = (JSON.parse(answer.body) as { message_id: string }).message_id;
            accepted.add(messageId);
            sent.push({ chatId, messageId, sentAt, answeredAt: sentAt + answer.ms });
          } else firstError ??= `${answer.status || 'no answer'}: ${answer.body.slice(0, 200)}`;
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    if (JS_PROFILE) writeProfileWindow(JS_PROFILE, dev.child.pid!, profileFrom, monotonicMicros());
    const benchCpu = process.cpuUsage(benchCpuBefore);
    const cores = [...cpuByProcess(dev.child.pid!)]
      .map(([name, cpu]) => [name, (cpu - (cpuBefore.get(name) ?? 0)) / seconds] as const)
      .concat([['bench', (benchCpu.user + benchCpu.system) / 1e6 / seconds]])
      .filter(([, c]) => c >= 0.05)
      .map(([name, c]) => `${name} ${c.toFixed(2)}`)
      .join(', ');
    const runtime = runtimeBetween(runtimeBefore, await runtimeMetrics(dev.api));

    // Then the worker's side: final callbacks of the accepted messages, waited for a bounded time.
    const drainDeadline = Date.now() + DRAIN_DEADLINE_MS;
    let answered = 0;
    for (;;) {
      answered = new Set(
        receiver
          .delivered()
          .filter((c) => (c.body.kind === 'final' || c.body.kind === 'error') && accepted.has(c.body.message_id))
          .map((c) => c.body.message_id),
      ).size;
      if (answered >= accepted.size || Date.now() > drainDeadline) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    const drainSeconds = (performance.now() - started) / 1000;

    const finalAt = new Map<string, number>(); // message id → position among the final callbacks
    receiver.delivered().forEach((c, at) => {
      if (c.body.kind === 'final' || c.body.kind === 'error') finalAt.set(c.body.message_id, at);
    });
    let outOfOrder = 0;
    for (const a of sent)
      for (const b of sent) {
        if (b.chatId !== a.chatId || b.sentAt <= a.answeredAt || !finalAt.has(b.messageId)) continue;
        if (!finalAt.has(a.messageId) || finalAt.get(a.messageId)! > finalAt.get(b.messageId)!) outOfOrder++;
      }
    result = {
      senders,
      sent: latencies.length,
      seconds,
      latencies,
      timeline,
      statuses,
      ...(firstError && { firstError }),
      accepted: accepted.size,
      answered,
      drainSeconds,
      loadBefore,
      outOfOrder,
      cores,
      runtime,
    };
  } finally {
    agent.destroy();
    const stopping = performance.now();
    await stopDev(dev);
    stopSeconds = (performance.now() - stopping) / 1000;
    await receiver.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  const failures = dev
    .output()
    .split('\n')
    .filter((line) => line.includes('not yet dispatched'));
  const lateHandOvers = failures.length;
  const leftToSweeper = failures.filter((line) => line.includes('left to the sweeper')).length;
  return { ...result, lateHandOvers, leftToSweeper, stopSeconds };
}

async function main() {
  console.log(
    `${REQUESTS} POST /inbound per level, text "/help" over ${CHATS} chats, a fresh \`foghorn dev\` per level` +
      `${WARM ? ` warmed by ${WARM} unmeasured messages` : ''}, ` +
      `${RATE === undefined ? 'closed loop' : `open loop at ${RATE} msg/s (latency from when each was due)`}; ` +
      `finals waited for up to ${DRAIN_DEADLINE_MS / 1000} s`,
  );
  for (const senders of LEVELS) {
    const r = await runLevel(senders);
    const l = summary(r.latencies);
    const non202 = r.sent - (r.statuses.get(202) ?? 0);
    const codes = [...r.statuses].map(([s, n]) => `${s || 'no answer'}×${n}`).join(' ');
    console.log(
      `senders=${String(senders).padStart(3)}  sent=${r.sent}  ${(r.sent / r.seconds).toFixed(1).padStart(6)} msg/s  ` +
        `p50=${l.p50.toFixed(1)}ms p99=${l.p99.toFixed(1)}ms max=${Math.max(...r.latencies).toFixed(1)}ms  ` +
        `non-202=${non202} (${codes})  finals=${r.answered}/${r.accepted} after ${r.drainSeconds.toFixed(1)}s ` +
        `(${(r.answered / r.drainSeconds).toFixed(1)} turns/s)  out of order=${r.outOfOrder}  failed hand-overs=${r.lateHandOvers} (left to the sweeper ${r.leftToSweeper})  ` +
        `stop=${r.stopSeconds.toFixed(1)}s  load1=${r.loadBefore.toFixed(1)}`,
    );
    console.log(`  cores busy during the POSTs: ${r.cores}`);
    console.log(`  the accepting process during the POSTs: ${r.runtime}`);
    if (r.firstError) console.log(`  first non-202: ${r.firstError}`);
    if (WINDOW_S) printWindows(r.timeline, WINDOW_S);
  }
}

/** p50/p99/max of the requests due in each `seconds`-long window of a level. */
function printWindows(timeline: [number, number][], seconds: number) {
  const windows = new Map<number, number[]>();
  for (const [due, latency] of timeline) {
    const w = Math.floor(due / 1000 / seconds);
    windows.set(w, [...(windows.get(w) ?? []), latency]);
  }
  for (const [w, l] of [...windows].sort(([a], [b]) => a - b)) {
    const { p50, p99 } = summary(l);
    console.log(
      `  ${`${w * seconds}–${(w + 1) * seconds} s`.padStart(11)}  n=${String(l.length).padStart(5)}  ` +
        `p50=${p50.toFixed(1)}ms p99=${p99.toFixed(1)}ms max=${Math.max(...l).toFixed(1)}ms`,
    );
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
