import type { Request, RequestHandler, Response, Router } from 'express';
import { z, type ZodTypeAny } from 'zod';
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { UserRole } from '../domain/roles';
import { ApiError, badRequest, describeZodError } from './errors';
import type { Authenticated } from './auth';

/**
 * A route is declared once: method, path, role, schemas and handler. The same declaration
 * drives Express (validation, role check) and the OpenAPI document, so neither can drift.
 */
export interface RouteSpec<Q extends ZodTypeAny = ZodTypeAny, B extends ZodTypeAny = ZodTypeAny> {
  method: 'get' | 'post' | 'put' | 'delete';
  /** OpenAPI style, e.g. `/runbooks/{name}`. */
  path: string;
  summary: string;
  tag: string;
  /** Lowest role allowed; `public` skips authentication (health, metrics, the API document). */
  role: UserRole | 'public';
  query?: Q;
  body?: B;
  responses: Record<number, { description: string; schema?: ZodTypeAny; contentType?: string }>;
  handler: (ctx: RouteContext<z.output<Q>, z.output<B>>) => Promise<Reply | undefined>;
}

export interface RouteContext<Q, B> {
  query: Q;
  body: B;
  params: Record<string, string>;
  /** Absent only on public routes. */
  principal: Authenticated;
  req: Request;
  res: Response;
}

export interface Reply {
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** A route of any schemas, for lists of routes (the handler's parameter types differ per route). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyRoute = RouteSpec<any, any>;

/** Builds a typed RouteSpec; only here to let TypeScript infer Q and B from the schemas. */
export function route<Q extends ZodTypeAny = z.ZodUndefined, B extends ZodTypeAny = z.ZodUndefined>(
  spec: RouteSpec<Q, B>,
): RouteSpec<Q, B> {
  return spec;
}

const expressPath = (path: string) => path.replace(/\{(\w+)\}/g, ':$1');

function parse<T extends ZodTypeAny>(schema: T | undefined, value: unknown, where: string): z.output<T> {
  if (!schema) return undefined as z.output<T>;
  const result = schema.safeParse(value);
  if (!result.success) throw badRequest(describeZodError(result.error, where));
  return result.data;
}

/** Middleware that runs before every non-public route: who is calling, and how often. */
export interface Guards {
  requireRole: (role: UserRole) => RequestHandler;
  rateLimit: RequestHandler;
}

/** Mounts routes on `router`, plus a 405 with `Allow` for every other method on their paths. */
export function mountRoutes(router: Router, routes: AnyRoute[], guards: Guards): void {
  const methodsByPath = new Map<string, string[]>();
  for (const spec of routes) {
    const path = expressPath(spec.path);
    methodsByPath.set(path, [...(methodsByPath.get(path) ?? []), spec.method.toUpperCase()]);
    const before = spec.role === 'public' ? [] : [guards.requireRole(spec.role), guards.rateLimit];
    router[spec.method](path, ...before, async (req: Request, res: Response) => {
      const principal = req.principal as Authenticated;
      const query = parse(spec.query, req.query, 'query');
      const body = parse(spec.body, req.body ?? {}, 'body');
      const reply = await spec.handler({
        query,
        body,
        params: req.params as Record<string, string>,
        principal,
        req,
        res,
      });
      if (!reply || res.headersSent) return;
      res.status(reply.status ?? 200).set(reply.headers ?? {});
      if (reply.body === undefined) res.end();
      else res.json(reply.body);
    });
  }
  for (const [path, methods] of methodsByPath) {
    const allow = [...new Set(methods.includes('GET') ? [...methods, 'HEAD'] : methods)].join(', ');
    router.all(path, () => {
      throw new ApiError(405, 'Method not allowed', `allowed: ${allow}`, { Allow: allow });
    });
  }
}

/** Adds every route to the OpenAPI registry, paths prefixed with where they are mounted. */
export function registerOpenApi(registry: OpenAPIRegistry, prefix: string, routes: AnyRoute[]): void {
  for (const spec of routes) {
    const params = [...spec.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
    registry.registerPath({
      method: spec.method,
      path: prefix + spec.path,
      summary: spec.summary,
      tags: [spec.tag],
      security: spec.role === 'public' ? [] : [{ bearerAuth: [] }],
      description: spec.role === 'public' ? 'No authentication.' : `Requires role ${spec.role} or higher.`,
      request: {
        ...(params.length && { params: z.object(Object.fromEntries(params.map((p) => [p, z.string()]))) }),
        ...(spec.query && { query: spec.query as never }),
        ...(spec.body && { body: { content: { 'application/json': { schema: spec.body } } } }),
      },
      responses: Object.fromEntries(
        Object.entries(spec.responses).map(([status, r]) => [
          status,
          {
            description: r.description,
            ...(r.schema && { content: { [r.contentType ?? 'application/json']: { schema: r.schema } } }),
          },
        ]),
      ),
    });
  }
}
