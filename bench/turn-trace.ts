/**
 * Where a sequential `/help` spends its time, from Temporal's own event times: N messages in
 * one chat on the embedded stack (`foghorn dev` with the built-in agent), then, per step of the
 * way (the chat workflow's signal, its workflow task, the turn's start, its tasks, local calls
 * and activities, the final callback's arrival), the median milliseconds after the POST.
 * Usage: npx ts-node --transpile-only bench/turn-trace.ts [messages=30]
 */
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import path from 'path';
import { useCallbackReceiver } from '../test/harness/callback-receiver';
import { devEnv, startDev, stopDev, waitReady } from '../test/harness/dev-process';
import { freePort } from '../test/harness/ports';
import { chatWorkflowId } from '../workflows/chat-messages';
import { webhookEnv } from './fixtures';
import { percentile } from './stats';

const MESSAGES = Number(process.argv[2] ?? 30);
const SECRET = 'bench-shared-secret-0123456789abcdef';
const EventType = temporal.api.enums.v1.EventType;
type Event = temporal.api.history.v1.IHistoryEvent;

const ms = (e: Event) => Number(e.eventTime!.seconds) * 1000 + Math.floor((e.eventTime!.nanos ?? 0) / 1e6);
const typeName = (e: Event) => EventType[e.eventType!].replace(/^EVENT_TYPE_/, '').toLowerCase();

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
  const connection = await Connection.connect({ address: `127.0.0.1:${env.FOGHORN_TEMPORAL_PORT}` });
  try {
    await waitReady(dev.api);
    const client = new Client({ connection });
    const chatId = 'trace';
    /** Per step name, the offsets (ms after the POST) seen across messages. */
    const steps = new Map<string, number[]>();
    const note = (step: string, at: number) => steps.set(step, [...(steps.get(step) ?? []), at]);
    for (let i = 0; i < MESSAGES + 5; i++) {
      const sentAt = Date.now();
      const res = await fetch(`http://127.0.0.1:${webhookPort}/inbound`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-foghorn-secret': SECRET },
        body: JSON.stringify({ chat_id: chatId, user_id: 'bench', text: '/help' }),
      });
      const acceptedAt = Date.now();
      const { message_id: messageId } = (await res.json()) as { message_id: string };
      const final = await receiver.waitFor((c) => c.body.message_id === messageId && c.body.kind === 'final', 60_000);
      if (i < 5) continue; // warm-up: the chat workflow's first run, the first bundles
      note('202', acceptedAt - sentAt);
      note('final callback arrived', final.at - sentAt);
      const chat = (await client.workflow.getHandle(chatWorkflowId(chatId)).fetchHistory()).events ?? [];
      const signalled = chat.findIndex(
        (e) =>
          e.workflowExecutionSignaledEventAttributes &&
          Buffer.from(e.workflowExecutionSignaledEventAttributes.input?.payloads?.[0]?.data ?? []).includes(messageId),
      );
      for (const e of chat.slice(signalled, signalled + 8)) note(`chat: ${typeName(e)}`, ms(e) - sentAt);
      for (const e of (await client.workflow.getHandle(messageId).fetchHistory()).events ?? []) {
        const marker = e.markerRecordedEventAttributes?.markerName;
        const activity = e.activityTaskScheduledEventAttributes?.activityType?.name;
        note(`turn: ${typeName(e)}${marker ? ` ${marker}` : ''}${activity ? ` ${activity}` : ''}`, ms(e) - sentAt);
      }
    }
    const rows = [...steps.entries()]
      .map(([step, offsets]) => ({
        step,
        p50: percentile(
          [...offsets].sort((a, b) => a - b),
          50,
        ),
        n: offsets.length,
      }))
      .sort((a, b) => a.p50 - b.p50);
    console.log(`sequential /help in one chat, ${MESSAGES} messages after 5 warm-up ones: ms after the POST`);
    console.log('| step | p50 ms | n |\n|---|---|---|');
    for (const r of rows) console.log(`| ${r.step} | ${r.p50} | ${r.n} |`);
  } finally {
    await connection.close();
    await stopDev(dev);
    await receiver.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
