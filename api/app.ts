import { extendZodWithOpenApi, OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import type { Client } from '@temporalio/client';
import express, { type RequestHandler } from 'express';
import type { Logger } from 'pino';
import { z } from 'zod';
import { mongoReady } from '../store/connection';
import { requireRole, tokenRateLimit } from './auth';
import { ApiError, errorHandler, notFoundHandler, unavailable } from './errors';
import { createMetrics, requestLogger } from './observability';
import { mountRoutes, registerOpenApi, route, type AnyRoute } from './route';
import type { SignalType } from '../domain/incident';
import type { IncidentOps } from '../operations/incidents';
import { alertRoutes } from './routes/alerts';
import { auditRoutes } from './routes/audit';
import { incidentRoutes } from './routes/incidents';
import { insightRoutes } from './routes/insights';
import { healthRoutes } from './routes/health';
import { postmortemRoutes } from './routes/postmortems';
import { runbookRoutes } from './routes/runbooks';
import { tokenRoutes } from './routes/tokens';

extendZodWithOpenApi(z);

export interface AppOptions {
  basePath: string;
  rateLimitPerMinute: number;
  logger: Logger;
  /** Absent in API tests that need no workflows: incident changes then answer 503. */
  temporal?: Client;
  /** Task queue of Foghorn's workers (where incident workflows start). */
  taskQueue: string;
  /** Extra Alertmanager alertname → signal type mappings (FOGHORN_ALERTNAME_MAP). */
  alertnameMap?: Record<string, SignalType>;
}

const BODY_LIMIT = '1mb';

/** 415 unless a request that carries a body says it is JSON. */
const requireJson: RequestHandler = (req, _res, next) => {
  const hasBody = Number(req.get('content-length') ?? 0) > 0 || req.get('transfer-encoding') !== undefined;
  if (hasBody && !req.is('application/json')) {
    throw new ApiError(415, 'Unsupported media type', 'request bodies must be application/json');
  }
  next();
};

/** 503 before touching a route when MongoDB is down, so callers get Retry-After, not a hang. */
const requireMongo: RequestHandler = (_req, _res, next) => {
  if (!mongoReady()) throw unavailable('MongoDB is unreachable');
  next();
};

/** The Express app: health at the root, the API under basePath (DESIGN §4). */
export function createApp(options: AppOptions): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', 'loopback');
  const metrics = createMetrics();
  app.use(requestLogger(options.logger), metrics.middleware);

  const rootRoutes = healthRoutes({ temporal: options.temporal, metrics: metrics.registry });
  const ops = (): IncidentOps => {
    if (!options.temporal) throw unavailable('Temporal is not configured');
    return { client: options.temporal, taskQueue: options.taskQueue };
  };
  const apiRoutes: AnyRoute[] = [
    ...tokenRoutes(options.basePath),
    ...auditRoutes(),
    ...runbookRoutes(options.basePath),
    ...incidentRoutes(options.basePath, ops),
    ...alertRoutes(ops, options.alertnameMap),
    ...insightRoutes(),
    ...postmortemRoutes(),
  ];
  const openApiRoute = route({
    method: 'get',
    path: '/openapi.json',
    summary: 'This OpenAPI 3.1 document',
    tag: 'Meta',
    role: 'public',
    responses: { 200: { description: 'OpenAPI 3.1 document' } },
    handler: async () => ({ body: document }),
  });

  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'bearerAuth', { type: 'http', scheme: 'bearer' });
  registerOpenApi(registry, '', rootRoutes);
  registerOpenApi(registry, options.basePath, [...apiRoutes, openApiRoute]);
  const document = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: { title: 'Foghorn Incident Operations API', version: 'v1' },
    servers: [{ url: '/' }],
  });

  const root = express.Router();
  mountRoutes(root, rootRoutes, { requireRole, rateLimit: tokenRateLimit(options.rateLimitPerMinute) });
  app.use(root);

  const api = express.Router();
  api.use(requireJson, express.json({ limit: BODY_LIMIT }));
  mountRoutes(api, [openApiRoute], { requireRole, rateLimit: (_q, _s, n) => n() });
  api.use(requireMongo);
  mountRoutes(api, apiRoutes, { requireRole, rateLimit: tokenRateLimit(options.rateLimitPerMinute) });
  app.use(options.basePath, api);

  app.use(notFoundHandler, errorHandler);
  return app;
}
