import { ApplicationFailure } from '@temporalio/common';
import { randomUUID } from 'crypto';
import { z } from 'zod';
import type { ToolResult } from '../domain/agent-tools';
import { DEFAULT_PERIOD, parsePeriod, PeriodError, summarizeMttr, type MttrSeries } from '../domain/mttr';
import { mttrSeries } from '../store/analytics';
import { countOpenAt } from '../store/incidents';
import { putMedia } from '../store/media';
import { renderMttrChart } from './chart';
import { idempotencyKey } from './context';

const inputSchema = z
  .object({
    period: z.string().optional(),
    /** The workflow's clock (RFC 3339), so a retry computes the same window. */
    now: z.string().datetime({ offset: true }).optional(),
  })
  .strict();

const TITLE_UNIT = { hourly: 'hour', daily: 'day', weekly: 'week' } as const;

/**
 * A GridFS id stable across retries of this activity execution; random outside one (tests, CLI).
 * The period is part of it because an agent activity may call this tool more than once.
 */
function chartId(period: string): string {
  let key: string;
  try {
    key = idempotencyKey(`mttr-chart/${period}`);
  } catch {
    return `mttr-${randomUUID()}`;
  }
  return `mttr-${key.replace(/[^A-Za-z0-9._-]+/g, '_')}`;
}

/** The chat agent's `mttr_summary` tool: MTTR text plus a PNG trend chart stored in GridFS; the same figures as GET /analytics/mttr. */
export function createMttrActivities() {
  return {
    async mttrSummary(input: { period?: string; now?: string }): Promise<ToolResult> {
      const parsed = inputSchema.safeParse(input);
      if (!parsed.success) {
        throw ApplicationFailure.create({ message: `invalid input: ${parsed.error.message}`, nonRetryable: true });
      }
      const period = parsed.data.period?.trim() || DEFAULT_PERIOD;
      const now = parsed.data.now ? new Date(parsed.data.now) : new Date();

      let series: MttrSeries;
      let openNow: number;
      try {
        const periodMs = parsePeriod(period);
        [series, openNow] = await Promise.all([mttrSeries({}, { now, periodMs }), countOpenAt(now)]);
      } catch (err) {
        // A bad period is the user's to fix: answer, don't retry.
        if (err instanceof PeriodError) return { text: err.message, error: true };
        throw err;
      }

      const text = summarizeMttr(series, { period, openNow });
      const png = await renderMttrChart(series.buckets, {
        title: `MTTR per ${TITLE_UNIT[series.granularity]}, last ${period}`,
        granularity: series.granularity,
      });
      const filename = `mttr-${period.replace(/[^A-Za-z0-9.]+/g, '_')}.png`;
      const { fileId } = await putMedia(png, { filename, mime: 'image/png', id: chartId(period) });
      return { text, image: { fileId, mime: 'image/png', filename } };
    },
  };
}

export type MttrActivities = ReturnType<typeof createMttrActivities>;
