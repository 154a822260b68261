import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import type { Client } from '@temporalio/client';
import express, { type RequestHandler } from 'express';
import type { Logger } from 'pino';
import { z } from 'zod';
import { version as productVersion } from '../package.json';
import { API_VERSION } from '../domain/envelope';
import { mongoReady } from '../store/connection';
import { requireRole, tokenRateLimit } from './auth';
import { consoleRoutes } from './console';
import { errorHandler, notFoundHandler, unavailable } from './errors';
import { createMetrics, requestLogger } from './observability';
import { renderApiReference } from './reference-page';
import { registerStoreMetrics } from './store-metrics';
import { registerTemporalMetrics } from './temporal-metrics';
import { finishDocument, mountRoutes, registerOpenApi, route, ROUTER_OPTIONS, type AnyRoute } from './route';
import type { SignalType } from '../domain/incident';
import type { SlaTargets } from '../domain/sla';
import type { IncidentOps } from '../operations/incidents';
import { alertRoutes } from './routes/alerts';
import { approvalRoutes } from './routes/approvals';
import { auditRoutes } from './routes/audit';
import { auditExportRoutes } from './routes/audit-export';
import { analyticsRoutes } from './routes/analytics';
import { clusterRoutes } from './routes/clusters';
import { incidentRoutes } from './routes/incidents';
import { insightRoutes } from './routes/insights';
import { changeRoutes } from './routes/changes';
import { healthRoutes } from './routes/health';
import { postmortemRoutes } from './routes/postmortems';
import { remediationRoutes } from './routes/remediations';
import { runbookRoutes } from './routes/runbooks';
import { escalationRoutes } from './routes/escalation';
import { tokenRoutes } from './routes/tokens';

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
  /** Where PagerDuty events go (FOGHORN_PAGERDUTY_URL): its host is how PagerDuty targets are shown. */
  pagerDutyUrl?: string;
  /** SLA targets of the compliance report (FOGHORN_SLA_TARGETS; the defaults otherwise). */
  slaTargets?: SlaTargets;
  /** Test-only: the largest audit export answered at once (the spec's 10,000 otherwise). */
  auditExportSyncLimit?: number;
  /** The Temporal Web UI page of the namespace, for the console's workflow links (none when absent). */
  temporalUi?: string;
  /** Proxies trusted to name the caller (FOGHORN_TRUST_PROXY); loopback when absent. */
  trustProxy?: false | number | string[];
}

/** 503 before touching a route when MongoDB is down, so callers get Retry-After, not a hang. */
const requireMongo: RequestHandler = (_req, _res, next) => {
  if (!mongoReady()) throw unavailable('MongoDB is unreachable');
  next();
};

/** The Express app: health at the root, the API under basePath (DESIGN §4). */
export function createApp(options: AppOptions): express.Express {
  const app = express();
  // Case-sensitive and strict everywhere, the mount of the API included. Set before anything
  // is mounted: Express creates the app's router, with these settings, on the first app.use.
  app.set('case sensitive routing', true);
  app.set('strict routing', true);
  app.disable('x-powered-by');
  app.set('trust proxy', options.trustProxy ?? ['loopback']);
  const metrics = createMetrics();
  registerStoreMetrics(metrics.registry);
  registerTemporalMetrics(metrics.registry, options.temporal);
  app.use(requestLogger(options.logger), metrics.middleware);

  const rootRoutes = healthRoutes({ temporal: options.temporal, metrics: metrics.registry });
  const ops = (): IncidentOps => {
    if (!options.temporal) throw unavailable('Temporal is not configured');
    return { client: options.temporal, taskQueue: options.taskQueue, logger: options.logger };
  };
  const apiRoutes: AnyRoute[] = [
    ...tokenRoutes(options.basePath),
    ...auditRoutes(),
    ...auditExportRoutes(options.basePath, ops, options.auditExportSyncLimit),
    ...analyticsRoutes(options.slaTargets),
    ...runbookRoutes(options.basePath),
    ...escalationRoutes(options.basePath, options.pagerDutyUrl),
    ...incidentRoutes(options.basePath, ops),
    ...alertRoutes(ops, options.alertnameMap),
    ...insightRoutes(),
    ...changeRoutes(),
    ...remediationRoutes(),
    ...approvalRoutes(ops),
    ...postmortemRoutes(),
    ...clusterRoutes(options.basePath, ops),
  ];
  const openApiRoute = route({
    method: 'get',
    path: '/openapi.json',
    summary: 'This OpenAPI 3.1 document',
    tag: 'Meta',
    role: 'public',
    responses: {
      200: {
        description: 'OpenAPI 3.1 document',
        schema: z.object({
          openapi: z.literal('3.1.0'),
          info: z.object({}).passthrough(),
          paths: z.record(z.unknown()),
        }),
      },
    },
    handler: async () => ({ body: document }),
  });
  const referenceRoute = route({
    method: 'get',
    path: '/docs',
    summary: 'A readable API reference (HTML), made from the OpenAPI document',
    tag: 'Meta',
    role: 'public',
    responses: { 200: { description: 'API reference', schema: z.string(), contentType: 'text/html' } },
    handler: async ({ res }) => {
      res.type('html').send(reference);
      return undefined;
    },
  });
  const metaRoutes = [openApiRoute, referenceRoute];
  const indexRoute = apiIndexRoute(options.basePath, rootRoutes, apiRoutes);

  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'bearerAuth', { type: 'http', scheme: 'bearer' });
  registerOpenApi(registry, '', [...rootRoutes, indexRoute]);
  registerOpenApi(registry, options.basePath, [...apiRoutes, ...metaRoutes]);
  const document = finishDocument(
    new OpenApiGeneratorV31(registry.definitions).generateDocument({
      openapi: '3.1.0',
      info: { title: 'Foghorn Incident Operations API', version: API_VERSION },
      servers: [{ url: '/' }],
    }),
  );
  const reference = renderApiReference(document, `${options.basePath}/openapi.json`);

  const root = express.Router(ROUTER_OPTIONS);
  mountRoutes(root, [...rootRoutes, indexRoute], {
    requireRole,
    rateLimit: tokenRateLimit(options.rateLimitPerMinute),
  });
  app.use(root);

  const api = express.Router(ROUTER_OPTIONS);
  mountRoutes(api, metaRoutes, { requireRole, rateLimit: (_q, _s, n) => n() });
  api.use(requireMongo);
  mountRoutes(api, apiRoutes, { requireRole, rateLimit: tokenRateLimit(options.rateLimitPerMinute) });
  app.use(options.basePath, api);
  app.use(consoleRoutes({ basePath: options.basePath, temporalUi: options.temporalUi }));

  app.use(notFoundHandler, errorHandler);
  return app;
}

const apiIndexSchema = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal('ApiIndex'),
  version: z.string().describe("Foghorn's release"),
  links: z.object({
    self: z.string(),
    openapi: z.string(),
    docs: z.string().describe('a readable API reference (HTML)'),
    health: z.string(),
    readiness: z.string(),
    metrics: z.string(),
  }),
  collections: z.record(z.string()).describe('name → path of every collection (GET lists)'),
});

/**
 * GET at the base path (what the start-up banner prints): where everything is. Public like the
 * OpenAPI document: it holds no data. Collections are the API's list routes (one path segment).
 */
function apiIndexRoute(basePath: string, rootRoutes: AnyRoute[], apiRoutes: AnyRoute[]) {
  const self = basePath || '/';
  const rootPath = (p: string) => rootRoutes.find((r) => r.path === p)?.path ?? p;
  const body = {
    apiVersion: API_VERSION,
    kind: 'ApiIndex' as const,
    version: productVersion,
    links: {
      self,
      openapi: `${basePath}/openapi.json`,
      docs: `${basePath}/docs`,
      health: rootPath('/healthz'),
      readiness: rootPath('/readyz'),
      metrics: rootPath('/metrics'),
    },
    collections: Object.fromEntries(
      apiRoutes
        .filter((r) => r.method === 'get' && /^\/[a-z]+$/.test(r.path))
        .map((r) => [r.path.slice(1), basePath + r.path]),
    ),
  };
  return route({
    method: 'get',
    path: self,
    summary: 'API index: version and links to the OpenAPI document, health, metrics and the collections',
    tag: 'Meta',
    role: 'public',
    responses: { 200: { description: 'ApiIndex', schema: apiIndexSchema } },
    handler: async () => ({ body }),
  });
}
