/**
 * Memory of the gateway process under bursts of large voice messages. `foghorn dev` runs
 * WITHOUT the webhook (MongoDB-wire server, Temporal, worker, API); `foghorn gateway start`
 * runs as its own process against them, and its VmRSS / VmHWM (/proc/<pid>/status) are
 * sampled every 100 ms while MESSAGES inline-base64 audio messages (random bytes, audio/ogg)
 * are posted at concurrency 1, 5 and 10, then once more at 10. Before that last burst and at the
 * end a full GC is forced through a preloaded hook (node --expose-gc -r, SIGUSR2), to tell
 * uncollected garbage from memory still held. No FOGHORN_STT: the worker answers each accepted
 * message with the "Voice messages are not supported…" error reply, which the bench counts.
 * The audio cap applies to DECODED bytes but the body limit is cap + 1 MiB of the base64 body
 * (4/3 of the audio), so 20 MB of audio needs FOGHORN_GATEWAY_MAX_AUDIO_BYTES raised: the
 * default here is 30 MiB. With the default cap (20 MiB) the largest audio that fits is ~15.7 MB.
 * Usage: npx ts-node --transpile-only bench/gateway-memory.ts [audioMB=20] [capMiB=30] [messagesPerRound=10]
 */
import './compiled';
import { spawn } from 'child_process';
import { randomBytes } from 'crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'fs';
import http from 'http';
import { loadavg, tmpdir } from 'os';
import path from 'path';
import { useCallbackReceiver } from '../test/harness/callback-receiver';
import { devEnv, startDev, stopDev, waitReady } from '../test/harness/dev-process';
import { webhookEnv } from './fixtures';
import { freePort } from '../test/harness/ports';

const AUDIO_BYTES = Math.round(Number(process.argv[2] ?? 20) * 1_000_000);
const CAP_BYTES = Math.round(Number(process.argv[3] ?? 30) * 1024 * 1024);
const MESSAGES = Number(process.argv[4] ?? 10);
const CONCURRENCY = [1, 5, 10];
const SECRET = 'bench-shared-secret-0123456789abcdef';
const CLI = path.join(__dirname, '../bin/foghorn.js');
const REQUEST_TIMEOUT_MS = 120_000;
const SETTLE_MS = 5_000;
const REPLIES_DEADLINE_MS = 60_000;
const MiB = 1024 * 1024;

/** VmRSS and VmHWM in bytes; undefined once the process is gone. */
function memory(pid: number): { rss: number; hwm: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
    return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
  } catch {
    return undefined;
  }
}

/** Resets VmHWM to the current RSS (Linux clear_refs "5"); false when not permitted. */
function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** Samples RSS every 100 ms; `peak()` is the highest sample since the last `reset()`. */
function sampler(pid: number) {
  let peak = 0;
  const timer = setInterval(() => {
    const m = memory(pid);
    if (m && m.rss > peak) peak = m.rss;
  }, 100);
  return {
    peak: () => peak,
    reset: () => {
      peak = memory(pid)?.rss ?? 0;
    },
    stop: () => clearInterval(timer),
  };
}

const mb = (bytes: number) => (bytes / MiB).toFixed(0);

/**
 * Preloaded into the gateway (node --expose-gc -r): on SIGUSR2 it writes process.memoryUsage()
 * before and after a full GC, to tell garbage not yet collected from memory still held.
 */
const GC_HOOK = `process.on('SIGUSR2', () => {
  const before = process.memoryUsage();
  global.gc();
  // Array buffers are swept concurrently and external memory is accounted late: a second GC.
  setTimeout(() => {
    global.gc();
    setTimeout(() => {
      require('fs').writeFileSync(process.env.BENCH_GC_REPORT, JSON.stringify({ before, after: process.memoryUsage() }));
    }, 500);
  }, 1000);
});
`;
type Usage = { rss: number; heapUsed: number; external: number; arrayBuffers: number };

/** Asks the hook for a GC; returns memoryUsage() before and after it. */
async function forceGc(pid: number, report: string): Promise<{ before: Usage; after: Usage } | undefined> {
  rmSync(report, { force: true });
  process.kill(pid, 'SIGUSR2');
  for (let i = 0; i < 50; i++) {
    await new Promise((r) => setTimeout(r, 200));
    try {
      return JSON.parse(readFileSync(report, 'utf8')) as { before: Usage; after: Usage };
    } catch {
      // not written yet
    }
  }
  return undefined;
}
const usage = (u: Usage) =>
  `rss ${mb(u.rss)}, heap used ${mb(u.heapUsed)}, external ${mb(u.external)} (array buffers ${mb(u.arrayBuffers)}) MiB`;

/** POSTs head + audio + tail without building the 27 MB body as one string per request. */
function postAudio(url: URL, chatId: string, audioB64: Buffer): Promise<{ status: number; ms: number; body: string }> {
  const head = Buffer.from(`{"chat_id":${JSON.stringify(chatId)},"audio_mime":"audio/ogg","audio_b64":"`);
  const tail = Buffer.from('"}');
  const started = performance.now();
  return new Promise((resolve) => {
    const req = http.request(
      url,
      {
        method: 'POST',
        agent: false,
        timeout: REQUEST_TIMEOUT_MS,
        headers: {
          'content-type': 'application/json',
          'x-foghorn-secret': SECRET,
          'content-length': head.length + audioB64.length + tail.length,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started, body: text }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (err) => resolve({ status: 0, ms: performance.now() - started, body: String(err) }));
    req.write(head);
    req.write(audioB64);
    req.end(tail);
  });
}

async function main() {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'foghorn-bench-'));
  const receiver = await useCallbackReceiver(SECRET);
  const env: NodeJS.ProcessEnv = {
    ...(await devEnv(dataDir)),
    // No webhook in dev: the gateway runs as its own process; the worker signs and sends the callbacks.
    ...webhookEnv({ secret: SECRET, callbackUrl: receiver.url, addr: '' }),
  };
  const dev = await startDev(env);
  const webhookPort = await freePort();
  let gateway: ReturnType<typeof spawn> | undefined;
  let gatewayOutput = '';
  try {
    await waitReady(dev.api);
    const mongoUri = /MongoDB:\s+(\S+)/.exec(dev.output())![1]!;
    const hook = path.join(dataDir, 'gc-hook.js');
    const gcReport = path.join(dataDir, 'gc-report.json');
    writeFileSync(hook, GC_HOOK);
    gateway = spawn(process.execPath, ['--expose-gc', '-r', hook, CLI, 'gateway', 'start'], {
      env: {
        ...process.env,
        ...env,
        BENCH_GC_REPORT: gcReport,
        FOGHORN_WEBHOOK_ADDR: `127.0.0.1:${webhookPort}`,
        FOGHORN_GATEWAY_MAX_AUDIO_BYTES: String(CAP_BYTES),
        MONGODB_URI: mongoUri,
        TEMPORAL_ADDRESS: `127.0.0.1:${env.FOGHORN_TEMPORAL_PORT}`,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    gateway.stdout!.on('data', (d) => (gatewayOutput += d));
    gateway.stderr!.on('data', (d) => (gatewayOutput += d));
    const pid = gateway.pid!;
    const url = new URL(`http://127.0.0.1:${webhookPort}/inbound`);
    for (let i = 0; ; i++) {
      if (gateway.exitCode !== null) throw new Error(`foghorn gateway start exited:\n${gatewayOutput}`);
      if (i > 300) throw new Error(`foghorn gateway start did not listen:\n${gatewayOutput}`);
      const up = await fetch(url).then(
        (r) => r.status === 405,
        () => false,
      );
      if (up) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    await new Promise((r) => setTimeout(r, 2_000)); // start-up garbage settles
    const audioB64 = Buffer.from(randomBytes(AUDIO_BYTES).toString('base64'));
    const bodyBytes = audioB64.length + 60;
    console.log(
      `${MESSAGES} voice messages per round: ${(AUDIO_BYTES / 1e6).toFixed(1)} MB audio, body ${(bodyBytes / 1e6).toFixed(1)} MB ` +
        `base64; FOGHORN_GATEWAY_MAX_AUDIO_BYTES=${CAP_BYTES} (${mb(CAP_BYTES)} MiB, body limit ${mb(CAP_BYTES + MiB)} MiB)`,
    );
    const canReset = resetPeak(pid);
    const baseline = memory(pid)!;
    console.log(
      `gateway pid ${pid}: baseline RSS ${mb(baseline.rss)} MiB (VmHWM since start ${mb(baseline.hwm)} MiB), load1=${loadavg()[0].toFixed(1)}`,
    );
    const samples = sampler(pid);
    const accepted: string[] = [];
    /** One burst of MESSAGES posts at the given concurrency; prints the RSS figures. */
    const round = async (concurrency: number, label: string) => {
      if (canReset) resetPeak(pid);
      samples.reset();
      const before = memory(pid)!;
      const statuses = new Map<number, number>();
      const times: number[] = [];
      let firstError: string | undefined;
      let next = 0;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next < MESSAGES) {
            const i = next++;
            const r = await postAudio(url, `mem-${label}-${i}`, audioB64);
            times.push(r.ms);
            statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
            if (r.status === 202) accepted.push((JSON.parse(r.body) as { message_id: string }).message_id);
            else firstError ??= `${r.status || 'no answer'}: ${r.body.slice(0, 200)}`;
          }
        }),
      );
      const seconds = (performance.now() - started) / 1000;
      const justAfter = memory(pid)!;
      await new Promise((r) => setTimeout(r, SETTLE_MS));
      const after = memory(pid)!;
      const peak = Math.max(samples.peak(), canReset ? after.hwm : 0);
      const codes = [...statuses].map(([s, n]) => `${s || 'no answer'}×${n}`).join(' ');
      times.sort((x, y) => x - y);
      console.log(
        `concurrency=${label.padEnd(3)} RSS before ${mb(before.rss)} MiB  peak ${mb(peak)} MiB  ` +
          `at end ${mb(justAfter.rss)} MiB  +${SETTLE_MS / 1000}s ${mb(after.rss)} MiB  answers ${codes}  ` +
          `${seconds.toFixed(1)}s (request median ${(times[Math.floor(times.length / 2)]! / 1000).toFixed(1)}s, ` +
          `max ${(times[times.length - 1]! / 1000).toFixed(1)}s)`,
      );
      if (firstError) console.log(`  first non-202: ${firstError}`);
    };
    const collect = async (when: string) => {
      const idle = memory(pid)!;
      const gc = await forceGc(pid, gcReport);
      console.log(`${when}: RSS ${mb(idle.rss)} MiB`);
      if (gc) {
        console.log(`  before a forced full GC: ${usage(gc.before)}`);
        console.log(`  after it:                ${usage(gc.after)}`);
      }
    };

    for (const concurrency of CONCURRENCY) await round(concurrency, String(concurrency));
    // The worker's answers to the accepted messages (no FOGHORN_STT: an error reply each).
    const deadline = Date.now() + REPLIES_DEADLINE_MS;
    const replies = () =>
      receiver
        .delivered()
        .filter((c) => (c.body.kind === 'final' || c.body.kind === 'error') && accepted.includes(c.body.message_id));
    while (replies().length < accepted.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 500));
    const got = replies();
    console.log(
      `replies ${got.length}/${accepted.length} (${got.filter((c) => c.body.kind === 'error').length} error): ` +
        `"${got[0]?.body.text.slice(0, 60) ?? ''}…"`,
    );
    await collect('after the replies');
    // The same burst again: memory that is only kept for reuse does not grow further.
    const last = CONCURRENCY[CONCURRENCY.length - 1]!;
    await round(last, `${last}'`);
    await collect(`after the second burst at ${last}`);
    samples.stop();
  } finally {
    if (gateway && gateway.exitCode === null && gateway.signalCode === null) {
      const exited = new Promise((resolve) => gateway!.once('exit', resolve));
      gateway.kill('SIGINT');
      await exited;
    }
    await stopDev(dev);
    await receiver.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  const logged = gatewayOutput.split('\n').filter((line) => /"level":(40|50|60)/.test(line));
  if (logged.length)
    console.log(`gateway logged ${logged.length} warnings/errors; the first:\n${logged[0]!.slice(0, 600)}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
