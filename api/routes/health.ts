import type { Client } from '@temporalio/client';
import mongoose from 'mongoose';
import type { Registry } from 'prom-client';
import { z } from 'zod';
import { mongoReady } from '../../store/connection';
import { envelope, RETRY_AFTER_SECONDS } from '../errors';
import { route } from '../route';

const CHECK_TIMEOUT_MS = 2_000;

async function check(probe: () => Promise<unknown>): Promise<'ok' | string> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      probe(),
      new Promise((_, reject) => (timer = setTimeout(() => reject(new Error('timed out')), CHECK_TIMEOUT_MS))),
    ]);
    return 'ok';
  } catch (err) {
    return (err as Error).message || 'unreachable';
  } finally {
    clearTimeout(timer);
  }
}

const healthSchema = z.object({ status: z.literal('ok'), checks: z.record(z.string()).optional() });

/** Liveness, readiness (MongoDB and Temporal reachable) and Prometheus metrics; no auth. */
export function healthRoutes(deps: { temporal?: Client; metrics: Registry }) {
  return [
    route({
      method: 'get',
      path: '/healthz',
      summary: 'Liveness: the process is up',
      tag: 'Health',
      role: 'public',
      responses: { 200: { description: 'alive', schema: healthSchema } },
      handler: async () => ({ body: { status: 'ok' } }),
    }),
    route({
      method: 'get',
      path: '/readyz',
      summary: 'Readiness: MongoDB and Temporal are reachable',
      tag: 'Health',
      role: 'public',
      responses: {
        200: { description: 'ready', schema: healthSchema },
        503: { description: 'a backing service is down' },
      },
      handler: async () => {
        const checks = {
          mongodb: mongoReady() ? await check(() => mongoose.connection.db!.admin().ping()) : 'not connected',
          temporal: deps.temporal
            ? await check(() => deps.temporal!.workflowService.getSystemInfo({}))
            : 'not configured',
        };
        const down = Object.entries(checks).filter(([, v]) => v !== 'ok');
        if (down.length === 0) return { body: { status: 'ok', checks } };
        return {
          status: 503,
          headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) },
          body: envelope(503, 'Service unavailable', down.map(([k, v]) => `${k}: ${v}`).join('; ')),
        };
      },
    }),
    route({
      method: 'get',
      path: '/metrics',
      summary: 'Prometheus metrics',
      tag: 'Health',
      role: 'public',
      responses: { 200: { description: 'Prometheus text format', schema: z.string(), contentType: 'text/plain' } },
      handler: async ({ res }) => {
        res.type(deps.metrics.contentType).send(await deps.metrics.metrics());
        return undefined;
      },
    }),
  ];
}
