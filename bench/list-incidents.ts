/**
 * GET /incidents latency (p50/p99) and throughput with 10,000 and 100,000 incidents in the store,
 * page size 100, with and without filters. Real API over the MongoDB-wire server (memory backend).
 * Each incident carries `signals` correlated signals (and an analysis), as a storm's do: what a
 * list must not drag along. Every case is warmed up (50 requests, not measured) before the first
 * is measured.
 * Usage: npx ts-node --transpile-only bench/list-incidents.ts [requests=200] [concurrency=4]
 *        [sizes=10000,100000] [signals=0]
 */
import type { AddressInfo } from 'net';
import { loadavg } from 'os';
import { createApp } from '../api/app';
import { createLogger } from '../api/observability';
import { startEmbeddedMongo } from '../cli/embedded/mongo';
import { INCIDENT_STATES } from '../domain/incident';
import { SEVERITIES } from '../domain/vocabulary';
import { connectMongo, disconnectMongo } from '../store/connection';
import { IncidentModel } from '../store/models';
import { createToken } from '../store/tokens';
import { runConcurrently, summary } from './stats';

const REQUESTS = Number(process.argv[2] ?? 200);
const CONCURRENCY = Number(process.argv[3] ?? 4);
const SIZES = (process.argv[4] ?? '10000,100000').split(',').map(Number);
const SIGNALS = Number(process.argv[5] ?? 0);
const NAMESPACES = ['shop', 'data', 'edge', 'auth', 'search'];
/** Requests per case before any is measured. */
const WARM_UP = 50;

function incident(i: number) {
  const at = new Date(Date.UTC(2026, 0, 1) + i * 60_000);
  const resource = `Deployment/svc-${i % 500}`;
  const namespace = NAMESPACES[i % NAMESPACES.length];
  return {
    name: `INC-${at.toISOString().slice(0, 10).replace(/-/g, '')}-${String(i).padStart(6, '0')}`,
    namespace,
    cluster: 'local',
    resource,
    resourceKey: `local/${namespace}/${resource}/${i}`,
    signalType: 'OOMKilled',
    severity: SEVERITIES[i % 4],
    severitySource: 'source',
    description: 'benchmark incident',
    labels: { app: `svc-${i % 500}` },
    detectionSource: 'bench',
    correlationId: `c${i}`,
    state: INCIDENT_STATES[i % INCIDENT_STATES.length],
    riskScore: i % 101,
    correlatedSignals: Array.from({ length: SIGNALS }, (_, k) => ({
      signalType: 'OOMKilled',
      severity: 'high',
      description: `container app of pod svc-${i % 500}-${k} was OOMKilled (limit 512Mi)`,
      source: 'alertmanager',
      labels: { alertname: 'KubePodOOMKilled', namespace, pod: `svc-${i % 500}-${k}`, container: 'app' },
      at,
    })),
    correlatedSignalCount: SIGNALS,
    analysisResult: {
      rootCause: 'The container exceeded its memory limit under load.',
      recommendation: 'Raise the memory limit or fix the leak.',
      confidence: 0.8,
      relatedEvents: ['OOMKilled', 'BackOff'],
    },
    detectedAt: at,
    createdAt: at,
    lastUpdated: at,
  };
}

async function main() {
  const mongo = await startEmbeddedMongo({ database: 'bench' });
  await connectMongo(mongo.uri);
  const token = (await createToken('bench', 'viewer')).token;
  const app = createApp({
    basePath: '/api/v1',
    rateLimitPerMinute: 10_000_000,
    logger: createLogger('silent'),
    taskQueue: 'bench',
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/incidents`;
  const cases = {
    'no filter': '?pageSize=100',
    'severity=high': '?pageSize=100&severity=high',
    'namespace+state': '?pageSize=100&namespace=shop&state=Escalated',
    resource: '?pageSize=100&resource=Deployment/svc-7',
    'page 50': '?pageSize=100&page=50',
  };
  try {
    let stored = 0;
    for (const target of SIZES) {
      const loadStarted = performance.now();
      for (; stored < target; stored += 1000)
        await IncidentModel.insertMany(
          Array.from({ length: 1000 }, (_, k) => incident(stored + k)),
          { lean: true },
        );
      console.log(
        `\n${target} incidents, ${SIGNALS} signals each (loaded in ${((performance.now() - loadStarted) / 1000).toFixed(1)}s); ${REQUESTS} requests per case, ${CONCURRENCY} concurrent; load average ${loadavg()
          .map((l) => l.toFixed(2))
          .join(' ')}`,
      );
      const get = (qs: string) => async () => {
        const res = await fetch(base + qs, { headers: { authorization: `Bearer ${token}` } });
        if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
        await res.arrayBuffer();
      };
      // Warm-up, not measured: every case's path through the JIT, both processes, once.
      for (const qs of Object.values(cases)) await runConcurrently(WARM_UP, CONCURRENCY, get(qs));
      for (const [label, qs] of Object.entries(cases)) {
        const started = performance.now();
        const latencies = await runConcurrently(REQUESTS, CONCURRENCY, get(qs));
        const s = summary(latencies);
        const rps = REQUESTS / ((performance.now() - started) / 1000);
        console.log(
          `  ${label.padEnd(16)} p50=${s.p50.toFixed(1).padStart(7)}ms  p99=${s.p99.toFixed(1).padStart(7)}ms  ${rps.toFixed(1).padStart(7)} req/s`,
        );
      }
    }
  } finally {
    server.close();
    await disconnectMongo();
    await mongo.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
