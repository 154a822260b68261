/**
 * Analytics latency on a large history (issue 12 §3), on the embedded stack (`foghorn dev`, H2
 * backend): N incidents (default 100,000) detected over the last 180 days in 20 namespaces,
 * 80% resolved (1 minute to 6 hours), half acknowledged, 70% with a signal start, each with
 * its insight, 30% with a remediation plan and 10% with an approval, all written straight into
 * MongoDB. Then each analytics request runs several times in a row: p50 and max latency, and
 * the `foghorn dev` process's peak resident memory (its figures come from aggregation
 * pipelines, so memory should not follow N).
 * Usage: npx ts-node --transpile-only bench/analytics.ts [incidents=100000] [runs=5]
 */
import './compiled';
import { mkdtempSync, readFileSync, rmSync } from 'fs';
import { loadavg, tmpdir } from 'os';
import path from 'path';
import { connectMongo, disconnectMongo } from '../store/connection';
import { ApprovalModel, IncidentModel, InsightModel, RemediationPlanModel } from '../store/models';
import { devEnv, startDev, stopDev, waitReady } from '../test/harness/dev-process';
import { percentile } from './stats';

const INCIDENTS = Number(process.argv[2] ?? 100_000);
const RUNS = Number(process.argv[3] ?? 5);
const M = 60_000;
const D = 24 * 60 * M;
const SEVERITIES = ['critical', 'high', 'medium', 'low'];

/** Deterministic pseudo-random numbers in [0, 1) (mulberry32): the same history every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const peakRss = (pid: number) =>
  Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

export async function seed(now: number): Promise<void> {
  const rnd = random(42);
  const BATCH = 2_000;
  for (let from = 0; from < INCIDENTS; from += BATCH) {
    const incidents = [];
    const insights = [];
    const plans = [];
    const approvals = [];
    for (let i = from; i < Math.min(INCIDENTS, from + BATCH); i++) {
      const name = `INC-20260101-${100_000 + i}`;
      const namespace = `ns-${i % 20}`;
      const detectedAt = new Date(now - rnd() * 180 * D);
      const t = detectedAt.getTime();
      const resolved = rnd() < 0.8;
      const resolvedAt = resolved ? new Date(t + M + rnd() * 6 * 60 * M) : undefined;
      const generatedAt = new Date(t + rnd() * 2 * M);
      incidents.push({
        name,
        namespace,
        cluster: 'local',
        resource: `Deployment/app-${i}`,
        resourceKey: `local/${namespace}/Deployment/app-${i}`,
        signalType: 'Custom',
        severity: SEVERITIES[i % 4],
        severitySource: 'source',
        detectionSource: 'alertmanager',
        correlationId: name,
        state: resolved ? 'Resolved' : 'Escalated',
        riskScore: 50,
        detectedAt,
        createdAt: detectedAt,
        lastUpdated: detectedAt,
        remediationAttempts: i % 4,
        analyzedAt: generatedAt,
        ...(rnd() < 0.7 && { signalStartedAt: new Date(t - rnd() * 5 * M) }),
        ...(rnd() < 0.5 && { acknowledged: true, acknowledgedAt: new Date(t + rnd() * 20 * M) }),
        ...(resolvedAt && { resolvedAt, resolvedBy: 'system' }),
      });
      insights.push({
        name: `AI-20260101-${100_000 + i}`,
        namespace,
        issueRef: name,
        provider: 'builtin',
        model: 'rules',
        confidence: 0.7,
        generatedAt,
        creationTimestamp: detectedAt,
      });
      if (i % 10 < 3) {
        const startedAt = new Date(t + 3 * M);
        plans.push({
          name: `RP-20260101-${100_000 + i}`,
          key: `${name}/attempt/1`,
          namespace,
          issueRef: name,
          cluster: 'local',
          attempt: 1,
          strategy: 'runbook',
          strategyKind: 'runbook',
          state: resolved ? 'Completed' : 'Failed',
          agenticMode: i % 10 === 0,
          actions: [{ type: i % 2 ? 'RestartPod' : 'ScaleDeployment', params: {} }],
          riskScore: 40,
          approvalRequired: i % 10 === 0,
          verifyWindowMs: 60_000,
          startedAt,
          completedAt: new Date(startedAt.getTime() + rnd() * 10 * M),
          creationTimestamp: startedAt,
        });
      }
      if (i % 10 === 0) {
        const requestedAt = new Date(t + 2 * M);
        approvals.push({
          name: `APR-20260101-${100_000 + i}`,
          key: `${name}/approval`,
          namespace,
          incident: name,
          plan: `RP-20260101-${100_000 + i}`,
          status: ['approved', 'rejected', 'expired'][i % 3],
          action: 'RestartPod',
          riskScore: 75,
          requiredRole: 'operator',
          requestedAt,
          expiresAt: new Date(requestedAt.getTime() + 30 * M),
          decidedAt: new Date(requestedAt.getTime() + rnd() * 30 * M),
          decidedBy: 'bob',
        });
      }
    }
    await Promise.all([
      IncidentModel.collection.insertMany(incidents),
      InsightModel.collection.insertMany(insights),
      plans.length && RemediationPlanModel.collection.insertMany(plans),
      approvals.length && ApprovalModel.collection.insertMany(approvals),
    ]);
  }
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'foghorn-bench-analytics-'));
  const env: NodeJS.ProcessEnv = { ...(await devEnv(dataDir)), FOGHORN_LLM_BASE_URL: '', KUBECONFIG: '' };
  const dev = await startDev(env);
  try {
    await waitReady(dev.api);
    await connectMongo(`mongodb://127.0.0.1:${env.FOGHORN_MONGO_PORT}/foghorn`);
    const started = performance.now();
    await seed(Date.now());
    console.log(
      `seeded ${INCIDENTS} incidents (+ insights, plans, approvals) in ${((performance.now() - started) / 1000).toFixed(0)} s; load average ${loadavg()[0].toFixed(2)} (2 cores)`,
    );
    const requests = [
      '/analytics/mttr?period=7d',
      '/analytics/mttr?period=30d',
      '/analytics/mttr?period=180d&granularity=weekly',
      '/analytics/mttr?period=30d&namespace=ns-3&severity=high',
      '/analytics/trends',
      '/analytics/trends?start=2020-01-01T00:00:00Z&groupBy=week',
      '/analytics/compliance',
      `/analytics/compliance?start=${new Date(Date.now() - 180 * D).toISOString()}`,
    ];
    console.log(`\n${RUNS} runs each, one at a time:`);
    for (const p of requests) {
      const times: number[] = [];
      let bytes = 0;
      for (let r = 0; r < RUNS; r++) {
        const t0 = performance.now();
        const res = await fetch(dev.api + p, { headers: { authorization: `Bearer ${dev.token}` } });
        const body = await res.text();
        if (res.status !== 200) throw new Error(`${p}: HTTP ${res.status} ${body.slice(0, 200)}`);
        times.push(performance.now() - t0);
        bytes = body.length;
      }
      times.sort((a, b) => a - b);
      console.log(
        `  ${p.padEnd(70)} p50 ${percentile(times, 50).toFixed(0).padStart(6)} ms  max ${times.at(-1)!.toFixed(0).padStart(6)} ms  (${(bytes / 1024).toFixed(1)} KiB)`,
      );
    }
    console.log(
      `\nfoghorn dev peak RSS ${peakRss(dev.child.pid!).toFixed(0)} MiB; load average ${loadavg()[0].toFixed(2)}`,
    );
  } finally {
    await disconnectMongo();
    await stopDev(dev);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (require.main === module)
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
