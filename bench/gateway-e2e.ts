/**
 * Webhook end to end on the embedded stack (`foghorn dev` with FOGHORN_WEBHOOK_ADDR) and the
 * built-in ChatOps agent: time from the POST to the 202, and from the POST to the final
 * callback at a local receiver, for `/help` (no tool) and `/incidents` (one tool activity that
 * reads MongoDB). Sequential in one chat, then CHATS chats in parallel (each chat sends its next
 * message when the previous final arrived). 20 incidents are ingested first so `/incidents` has
 * something to list. `--trace` adds where the sequential turns spent their time, step by step,
 * from Temporal's own event times (the chat workflow's signal and task, the turn's start, its
 * tasks, local calls and activities).
 * Usage: npx ts-node --transpile-only bench/gateway-e2e.ts [sequentialPerCommand=30] [chats=20] [perChat=4] [--trace]
 */
import './compiled';
import { Client, Connection } from '@temporalio/client';
import { tsToMs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { mkdtempSync, rmSync } from 'fs';
import { loadavg, tmpdir } from 'os';
import path from 'path';
import { useCallbackReceiver } from '../test/harness/callback-receiver';
import { devEnv, startDev, stopDev, waitReady } from '../test/harness/dev-process';
import { firingAlert, webhookEnv } from './fixtures';
import { freePort } from '../test/harness/ports';
import { percentile } from './stats';
import { chatWorkflowId } from '../workflows/chat-messages';
import { positional } from './args';

const SEQUENTIAL = Number(positional[0] ?? 30);
const CHATS = Number(positional[1] ?? 20);
const PER_CHAT = Number(positional[2] ?? 4);
const TRACE = process.argv.includes('--trace');
const COMMANDS = ['/help', '/incidents'] as const;
const SECRET = 'bench-shared-secret-0123456789abcdef';
const FINAL_TIMEOUT_MS = 60_000;
const INCIDENTS = 20;

type Command = (typeof COMMANDS)[number];
interface Sample {
  command: Command;
  messageId: string;
  sentAt: number;
  acceptMs: number;
  /** From the POST to the start of the message's agent-turn workflow (its id is the message id). */
  turnStartMs?: number;
  finalMs: number;
  /** Callbacks before the final one (the 'working on it' notice, progress). */
  before: number;
  kind: string;
}

async function main() {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'foghorn-bench-'));
  const receiver = await useCallbackReceiver(SECRET);
  const webhookPort = await freePort();
  const env = await devEnv(dataDir);
  const dev = await startDev({
    ...env,
    FOGHORN_RATE_LIMIT: '1000000',
    ...webhookEnv({ secret: SECRET, callbackUrl: receiver.url, addr: `127.0.0.1:${webhookPort}` }),
  });
  const inbound = `http://127.0.0.1:${webhookPort}/inbound`;

  /** POST, then wait for the message's final (or error) callback; times measured from the POST. */
  async function turn(chatId: string, command: Command): Promise<Sample> {
    const sentAt = Date.now();
    const res = await fetch(inbound, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-foghorn-secret': SECRET },
      body: JSON.stringify({ chat_id: chatId, user_id: 'bench', text: command }),
    });
    const acceptMs = Date.now() - sentAt;
    const text = await res.text();
    if (res.status !== 202) throw new Error(`HTTP ${res.status}: ${text}`);
    const { message_id: messageId } = JSON.parse(text) as { message_id: string };
    const final = await receiver.waitFor(
      (c) => c.body.message_id === messageId && (c.body.kind === 'final' || c.body.kind === 'error'),
      FINAL_TIMEOUT_MS,
    );
    return {
      command,
      messageId,
      sentAt,
      acceptMs,
      finalMs: final.at - sentAt, // `at` is stamped by the receiver on arrival, not when polled
      before: receiver.of(messageId).length - 1,
      kind: final.body.kind,
    };
  }

  /** Start times of the agent-turn workflows, from Temporal. */
  async function addTurnStarts(samples: Sample[]) {
    const connection = await Connection.connect({ address: `127.0.0.1:${env.FOGHORN_TEMPORAL_PORT}` });
    try {
      const client = new Client({ connection });
      for (const s of samples) {
        const { startTime } = await client.workflow.getHandle(s.messageId).describe();
        s.turnStartMs = startTime.getTime() - s.sentAt;
      }
    } finally {
      await connection.close();
    }
  }

  /**
   * Per command, the median offset from the POST of each step the turns took, as Temporal
   * recorded it (`chat:` the chat workflow's events for the message, `turn:` the turn's own).
   */
  async function trace(chatId: string, samples: Sample[]) {
    const EventType = temporal.api.enums.v1.EventType;
    type Event = temporal.api.history.v1.IHistoryEvent;
    const at = (e: Event) => tsToMs(e.eventTime);
    const name = (e: Event) => EventType[e.eventType!].replace(/^EVENT_TYPE_/, '').toLowerCase();
    const connection = await Connection.connect({ address: `127.0.0.1:${env.FOGHORN_TEMPORAL_PORT}` });
    try {
      const client = new Client({ connection });
      const chat = (await client.workflow.getHandle(chatWorkflowId(chatId)).fetchHistory()).events ?? [];
      for (const command of COMMANDS) {
        const steps = new Map<string, number[]>();
        const note = (step: string, e: Event | undefined, s: Sample) => {
          if (e) steps.set(step, [...(steps.get(step) ?? []), at(e) - s.sentAt]);
        };
        for (const s of samples.filter((x) => x.command === command)) {
          const signal = chat.findIndex((e) =>
            Buffer.from(e.workflowExecutionSignaledEventAttributes?.input?.payloads?.[0]?.data ?? []).includes(
              s.messageId,
            ),
          );
          const after = chat.slice(signal);
          note('chat: signalled', after[0], s);
          note(
            'chat: workflow task started',
            after.find((e) => e.workflowTaskStartedEventAttributes),
            s,
          );
          note(
            'chat: start child initiated',
            after.find((e) => e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId === s.messageId),
            s,
          );
          const seen = new Set<string>();
          for (const e of (await client.workflow.getHandle(s.messageId).fetchHistory()).events ?? []) {
            const label = [
              name(e),
              e.markerRecordedEventAttributes?.markerName,
              e.activityTaskScheduledEventAttributes?.activityType?.name,
            ]
              .filter(Boolean)
              .join(' ');
            const step = `turn: ${label}${seen.has(label) ? ' (again)' : ''}`;
            seen.add(label);
            note(step, e, s);
          }
          steps.set('final callback arrived', [...(steps.get('final callback arrived') ?? []), s.finalMs]);
        }
        const rows = [...steps.entries()]
          .map(([step, offsets]) => ({
            step,
            n: offsets.length,
            p50: percentile(
              offsets.sort((a, b) => a - b),
              50,
            ),
          }))
          .sort((a, b) => a.p50 - b.p50);
        console.log(`\n${command}, sequential: median ms after the POST\n| step | p50 ms | n |\n|---|---|---|`);
        for (const r of rows) console.log(`| ${r.step} | ${r.p50} | ${r.n} |`);
      }
    } finally {
      await connection.close();
    }
  }

  function print(mode: string, samples: Sample[], seconds: number, load: number) {
    for (const command of COMMANDS) {
      const of = samples.filter((s) => s.command === command);
      const accept = of.map((s) => s.acceptMs).sort((a, b) => a - b);
      const final = of.map((s) => s.finalMs).sort((a, b) => a - b);
      const turnStart = of.map((s) => s.turnStartMs ?? NaN).sort((a, b) => a - b);
      const errors = of.filter((s) => s.kind !== 'final').length;
      const extra = of.reduce((n, s) => n + s.before, 0);
      console.log(
        `${mode.padEnd(22)} ${command.padEnd(10)} n=${String(of.length).padStart(3)}  ` +
          `202 p50=${percentile(accept, 50)}ms p99=${percentile(accept, 99)}ms  ` +
          `turn start p50=${percentile(turnStart, 50)}ms  final p50=${percentile(final, 50)}ms p99=${percentile(final, 99)}ms max=${final[final.length - 1]}ms  ` +
          `notices/progress=${extra}  errors=${errors}`,
      );
    }
    console.log(
      `${mode.padEnd(22)} ${(samples.length / seconds).toFixed(1)} turns/s overall, load1=${load.toFixed(1)}`,
    );
  }

  try {
    await waitReady(dev.api);
    const headers = { authorization: `Bearer ${dev.token}`, 'content-type': 'application/json' };
    for (let i = 0; i < INCIDENTS; i++) {
      const res = await fetch(`${dev.api}/alerts/alertmanager`, {
        method: 'POST',
        headers,
        body: JSON.stringify(firingAlert('bench', `svc-${i}`, `f${i}`)),
      });
      if (res.status !== 202) throw new Error(`ingest: HTTP ${res.status}: ${await res.text()}`);
    }
    // Let the incidents' workflows finish their first analysis, so they are not in the figures.
    await new Promise((r) => setTimeout(r, 5_000));
    // One turn of each command first: the chat workflow, the worker's caches and the sockets warm up.
    for (const command of COMMANDS) await turn('bench-warmup', command);

    console.log(
      `built-in agent; ${SEQUENTIAL} × each command in one chat, then ${CHATS} chats × ${PER_CHAT} messages in parallel`,
    );
    let started = performance.now();
    const sequential: Sample[] = [];
    for (let i = 0; i < 2 * SEQUENTIAL; i++) sequential.push(await turn('bench-seq', COMMANDS[i % 2]));
    const sequentialSeconds = (performance.now() - started) / 1000;
    const sequentialLoad = loadavg()[0];
    await addTurnStarts(sequential);
    print('sequential, 1 chat', sequential, sequentialSeconds, sequentialLoad);
    if (TRACE) await trace('bench-seq', sequential);

    started = performance.now();
    const parallel = (
      await Promise.all(
        Array.from({ length: CHATS }, async (_, chat) => {
          const samples: Sample[] = [];
          for (let i = 0; i < PER_CHAT; i++) samples.push(await turn(`bench-par-${chat}`, COMMANDS[(chat + i) % 2]));
          return samples;
        }),
      )
    ).flat();
    const parallelSeconds = (performance.now() - started) / 1000;
    const parallelLoad = loadavg()[0];
    await addTurnStarts(parallel);
    print(`parallel, ${CHATS} chats`, parallel, parallelSeconds, parallelLoad);
  } finally {
    await stopDev(dev);
    await receiver.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
