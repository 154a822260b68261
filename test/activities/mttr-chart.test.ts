import { MockActivityEnvironment } from '@temporalio/testing';
import { renderMttrChart } from '../../activities/chart';
import { createMttrActivities } from '../../activities/mttr';
import type { ToolResult } from '../../domain/agent-tools';
import { bucketPlan } from '../../domain/mttr';
import { getMedia } from '../../store/media';
import { IncidentModel } from '../../store/models';
import { useMongo } from '../harness/mongo';

const H = 3_600_000;
const D = 24 * H;
const NOW = new Date('2026-03-15T10:30:00Z');
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Width and height from the IHDR chunk, which must come first after the signature. */
function pngSize(png: Buffer): { width: number; height: number } {
  expect(png.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);
  expect(png.toString('ascii', 12, 16)).toBe('IHDR');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

let seq = 0;
/** A stored incident as ingestion and the workflow leave it: detected `ago` before NOW, resolved `ttr` later. */
async function incident(ago: number, ttr: number | undefined, severity: string): Promise<void> {
  const detectedAt = new Date(NOW.getTime() - ago);
  const name = `INC-20260315-${String(++seq).padStart(3, '0')}`;
  const resource = `Deployment/app-${seq}`;
  await IncidentModel.create({
    name,
    namespace: 'prod',
    cluster: 'local',
    resource,
    resourceKey: `local/prod/${resource}`,
    signalType: 'HighLatency',
    severity,
    severitySource: 'source',
    detectionSource: 'alertmanager',
    correlationId: `local/prod/${resource}`,
    state: ttr === undefined ? 'Detected' : 'Resolved',
    riskScore: 45,
    detectedAt,
    createdAt: detectedAt,
    lastUpdated: detectedAt,
    ...(ttr !== undefined && { resolvedAt: new Date(detectedAt.getTime() + ttr), resolvedBy: 'alice' }),
  });
}

describe('mttr_summary activity (MongoDB-wire server, GridFS, PNG chart)', () => {
  let mongo: Awaited<ReturnType<typeof useMongo>>;
  const { mttrSummary } = createMttrActivities();
  type Input = Parameters<typeof mttrSummary>[0];
  /** Runs the activity in an activity context (info as a worker would give it). */
  const run = (input: Input, env = new MockActivityEnvironment()) =>
    env.run<[Input], ToolResult, typeof mttrSummary>(mttrSummary, input);

  beforeAll(async () => {
    mongo = await useMongo();
    await incident(5 * D, 1 * H, 'critical'); // in 7d: 1h
    await incident(3 * D, 3 * H, 'high'); // in 7d: 3h
    await incident(1 * D, undefined, 'high'); // in 7d, open
    await incident(20 * D, 10 * H, 'high'); // in 30d only: 10h
    await incident(25 * D, undefined, 'low'); // in 30d only, still open
    await incident(40 * D, 2 * H, 'medium'); // outside both
  });
  afterAll(() => mongo.stop());

  it('answers MTTR text and a PNG chart stored in GridFS', async () => {
    const result = await run({ period: '7d', now: NOW.toISOString() });

    expect(result.error).toBeUndefined();
    expect(result.text).toContain('MTTR over the last 7d: 2h0m0s across 2 resolved incidents (open now: 2).');
    expect(result.text).toContain('By severity: critical 1h0m0s (1), high 3h0m0s (1).');
    expect(result.image).toMatchObject({ mime: 'image/png', filename: 'mttr-7d.png' });

    const stored = await getMedia(result.image!.fileId);
    expect(stored).toMatchObject({ filename: 'mttr-7d.png', mime: 'image/png' });
    const { width, height } = pngSize(stored.data);
    expect(width).toBeGreaterThan(300);
    expect(height).toBeGreaterThan(200);
    expect(stored.data.length).toBeGreaterThan(5_000); // axes, labels and bars, not a blank frame
  });

  it('defaults to 30d and counts every incident detected in it', async () => {
    const result = await run({ now: NOW.toISOString() });
    expect(result.text).toContain('MTTR over the last 30d: 4h40m0s across 3 resolved incidents (open now: 2).');
    expect(result.image?.filename).toBe('mttr-30d.png');
  });

  it('reuses its chart on a retry of the same activity execution, a fresh one outside an activity', async () => {
    const input = { period: '24h', now: NOW.toISOString() };
    const env = new MockActivityEnvironment({ activityId: 'mttr-retry' });
    const first = await run(input, env);
    const retry = await run(input, env);
    expect(retry.image!.fileId).toBe(first.image!.fileId);
    expect(first.image!.fileId).toMatch(/^mttr-[A-Za-z0-9._-]+$/);
    // An agent activity may call the tool twice with different periods: two charts.
    const other = await run({ ...input, period: '7d' }, env);
    expect(other.image!.fileId).not.toBe(first.image!.fileId);

    const a = await mttrSummary(input);
    const b = await mttrSummary(input);
    expect(a.image!.fileId).not.toBe(b.image!.fileId);
    expect(pngSize((await getMedia(a.image!.fileId)).data).width).toBeGreaterThan(300);
  });

  it('answers an invalid period with an error reply, not a throw', async () => {
    const result = await run({ period: 'x' });
    expect(result).toEqual({ text: expect.stringMatching(/^Invalid period "x": /), error: true });
    const badUnit = await mttrSummary({ period: '2y' });
    expect(badUnit).toMatchObject({ text: expect.stringContaining('unknown unit "y"'), error: true });
  });

  it('says so plainly, and still draws a chart, when nothing was detected in the period', async () => {
    const result = await run({
      period: '24h',
      now: new Date(NOW.getTime() - 100 * D).toISOString(),
    });
    expect(result.text).toBe('No incidents were detected in the last 24h: no MTTR to report (open now: 0).');
    expect(pngSize((await getMedia(result.image!.fileId)).data).width).toBeGreaterThan(300);
  });
});

describe('renderMttrChart', () => {
  it('renders all-empty buckets (and no buckets at all) without crashing', async () => {
    const plan = bucketPlan({ now: NOW, periodMs: 7 * D });
    const buckets = Array.from({ length: plan.count }, (_, i) => ({
      start: new Date(plan.first + i * plan.step),
      end: new Date(plan.first + (i + 1) * plan.step),
      detected: 0,
      count: 0,
      mttrMs: null,
    }));
    for (const input of [buckets, []]) {
      const png = await renderMttrChart(input, { title: 'MTTR per day, last 7d' });
      const { width, height } = pngSize(png);
      expect(width).toBeGreaterThan(300);
      expect(height).toBeGreaterThan(200);
    }
  });
});
