/**
 * Escalation throughput (issue 11) on the embedded stack (`foghorn dev`): a policy whose L1 is a
 * Slack, a PagerDuty and a signed webhook target, all one local listener; incidents of a cluster
 * Foghorn does not know escalate at once (no strategy can run). For each burst of N incidents
 * opened at once (default 50 and 200): incident created → each L1 notification received p50/p95,
 * notifications per second, and any notification missing or received twice.
 * Usage:
 *   npx ts-node --transpile-only bench/escalation.ts [bursts=50,200]
 */
import './compiled';
import { mkdtempSync, rmSync } from 'fs';
import http from 'http';
import type { AddressInfo } from 'net';
import { loadavg, tmpdir } from 'os';
import path from 'path';
import { devEnv, startDev, stopDev, waitReady } from '../test/harness/dev-process';
import { percentile, runConcurrently } from './stats';

const BURSTS = (process.argv[2] ?? '50,200').split(',').map(Number);
const SENDERS = 32;
const CHANNELS = ['slack', 'pagerduty', 'webhook'] as const;
const TIMEOUT_MS = 10 * 60_000;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- API JSON
type Json = any;

interface Received {
  channel: string;
  incident: string;
  key: string;
  at: number;
}

async function main(): Promise<void> {
  const received: Received[] = [];
  const listener = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const body = JSON.parse(raw) as Json;
      const channel = req.url!.slice(1);
      const incident: string = body.dedup_key ?? body.incident?.name ?? /INC-\d{8}-\d+/.exec(body.text)?.[0] ?? '';
      received.push({ channel, incident, key: String(req.headers['idempotency-key']), at: Date.now() });
      res.writeHead(channel === 'pagerduty' ? 202 : 200).end();
    });
  });
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
  const url = (p: string) => `http://127.0.0.1:${(listener.address() as AddressInfo).port}/${p}`;

  const dataDir = mkdtempSync(path.join(tmpdir(), 'foghorn-bench-escalation-'));
  const dev = await startDev({
    ...(await devEnv(dataDir)),
    FOGHORN_RATE_LIMIT: '1000000',
    FOGHORN_LLM_BASE_URL: '',
    FOGHORN_WEBHOOK_ADDR: '',
    KUBECONFIG: '',
    FOGHORN_PAGERDUTY_URL: url('pagerduty'),
  });
  const call = async (method: string, p: string, body?: unknown) => {
    const res = await fetch(dev.api + p, {
      method,
      headers: { authorization: `Bearer ${dev.token}`, 'content-type': 'application/json' },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json().catch(() => undefined)) as Json };
  };
  try {
    await waitReady(dev.api);
    const policy = await call('POST', '/escalation-policies', {
      name: 'bench',
      match: {},
      levels: [
        {
          targets: [
            { channel: 'slack', url: url('slack') },
            { channel: 'pagerduty', routingKey: 'BenchRoutingKey000000000000000aa' },
            { channel: 'webhook', url: url('webhook'), secret: 'whsec_YmVuY2gtc2lnbmluZy1zZWNyZXQtMDEyMzQ1Njc=' },
          ],
          escalateAfter: '1h',
        },
      ],
    });
    if (policy.status !== 201) throw new Error(`policy: HTTP ${policy.status} ${JSON.stringify(policy.body)}`);

    for (const [b, count] of BURSTS.entries()) {
      const opened = new Map<string, number>();
      const started = Date.now();
      await runConcurrently(count, SENDERS, async (i) => {
        const res = await call('POST', '/incidents', {
          resource: `Deployment/svc-${b}-${i}`,
          namespace: `bench-${b}`,
          signalType: 'Custom',
          severity: 'high',
          description: 'benchmark incident',
        });
        if (res.status !== 201) throw new Error(`POST /incidents: HTTP ${res.status}`);
        opened.set(res.body.metadata.name, Date.now());
      });
      const mine = () => received.filter((r) => opened.has(r.incident));
      const deadline = Date.now() + TIMEOUT_MS;
      while (mine().length < count * CHANNELS.length && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 500));
      await new Promise((r) => setTimeout(r, 2_000)); // late duplicates, if any
      const got = mine();
      const latencies = got.map((r) => r.at - opened.get(r.incident)!).sort((x, y) => x - y);
      const duplicates = got.length - new Set(got.map((r) => `${r.channel} ${r.incident}`)).size;
      const span = Math.max(...got.map((r) => r.at)) - started;
      console.log(
        [
          `burst of ${count} incidents (${count * CHANNELS.length} L1 notifications)`,
          `  received ${got.length}, missing ${count * CHANNELS.length - new Set(got.map((r) => `${r.channel} ${r.incident}`)).size}, duplicates ${duplicates}`,
          `  created → received: p50 ${(percentile(latencies, 50) / 1000).toFixed(2)} s, p95 ${(percentile(latencies, 95) / 1000).toFixed(2)} s, max ${(latencies.at(-1)! / 1000).toFixed(2)} s`,
          `  ${((got.length / span) * 1000).toFixed(1)} notifications/s over ${(span / 1000).toFixed(1)} s; load average ${loadavg()[0].toFixed(2)}`,
        ].join('\n'),
      );
    }
  } finally {
    await stopDev(dev);
    await new Promise((r) => listener.close(r));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
