import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import { extendZodWithOpenApi, type OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z, type ZodTypeAny } from 'zod';
import type { UserRole } from '../domain/roles';
import { errorSchema } from '../contracts/envelope';
import { ApiError, badRequest, describeZodError } from './errors';
import type { Authenticated } from './auth';

// Before any route module builds its schemas: `.openapi(...)` metadata needs the extension.
extendZodWithOpenApi(z);

/** A documented answer of one operation. */
export interface ResponseDoc {
  description: string;
  schema?: ZodTypeAny;
  contentType?: string;
  /** Other media types the same answer may come in (e.g. `text/csv` beside JSON), with their schemas. */
  alternatives?: Record<string, ZodTypeAny>;
  /** Response headers the answer always carries. */
  headers?: Record<string, { description: string; pattern?: string }>;
}

/**
 * A route is declared once: method, path, role, schemas and handler. The same declaration
 * drives Express (validation, role check, body parsing) and the OpenAPI document, so neither
 * can drift. Error answers that follow from the declaration (401/403/429/503 for authenticated
 * routes, 400 for inputs, 404 for path parameters, 413/415 for bodies, 500 always) are added
 * by `documentedResponses`; `responses` holds the success answers and route-specific errors.
 */
export interface RouteSpec<Q extends ZodTypeAny = ZodTypeAny, B extends ZodTypeAny = ZodTypeAny> {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** OpenAPI style, e.g. `/runbooks/{name}`. */
  path: string;
  summary: string;
  tag: string;
  /** Lowest role allowed; `public` skips authentication (health, metrics, the API document). */
  role: UserRole | 'public';
  /** The kind a path parameter names: its 404 says `<kind> not found`. */
  kind?: string;
  query?: Q;
  body?: B;
  responses: Record<number, ResponseDoc>;
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

/**
 * A trimmed, non-blank string. Length is checked on what was sent and the pattern says "not
 * blank", so the OpenAPI document states exactly what `.trim().min(1)` would hide.
 */
export const nonBlank = (max: number) => z.string().max(max).regex(/\S/, 'must not be blank').trim();

/** Request bodies of the API: JSON, at most this size (413 above). */
export const BODY_LIMIT = '1mb';

/** Router options of every router: `/Incidents` and `/incidents/` are other paths (404), not aliases. */
export const ROUTER_OPTIONS = { caseSensitive: true, strict: true } as const;

const paramNames = (path: string) => [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
const expressPath = (path: string) => path.replace(/\{(\w+)\}/g, ':$1');
/** Captures the raw (still percent-encoded) value of each path parameter. */
const rawParamsPattern = (path: string) =>
  new RegExp(
    '^' +
      path
        .split(/\{\w+\}/)
        .map((literal) => literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
        .join('([^/]+)') +
      '$',
  );

/** A body that arrives with a request without one: what the handler parses when nothing was sent. */
const ABSENT_BODY = {};

/** True when a request without a body is refused (the OpenAPI `requestBody.required`). */
export const bodyRequired = (spec: AnyRoute) => !!spec.body && !spec.body.safeParse(ABSENT_BODY).success;

/**
 * MongoDB cannot store a key with a NUL character (BSON keys are C strings), yet JSON allows
 * one: refuse it at the edge with a 400 instead of failing the write with a 500. Checked on the
 * validated body, so only keys that are kept (maps such as `labels`) count; ignored ones do not.
 */
function refuseNulKeys(value: unknown, path: string): void {
  if (Array.isArray(value)) value.forEach((v, i) => refuseNulKeys(v, `${path}.${i}`));
  else if (value !== null && typeof value === 'object') {
    for (const [key, v] of Object.entries(value)) {
      if (key.includes('\0')) throw badRequest(`${path}: object keys must not contain NUL characters`);
      refuseNulKeys(v, `${path}.${key}`);
    }
  }
}
/** The document's word for the same rule, on every object of a request body that takes any key. */
const NUL_FREE_KEYS = { pattern: '^[^\\u0000]*$' };

function parse<T extends ZodTypeAny>(schema: T | undefined, value: unknown, where: string): z.output<T> {
  if (!schema) return undefined as z.output<T>;
  const result = schema.safeParse(value);
  if (!result.success) throw badRequest(describeZodError(result.error, where));
  return result.data;
}

/** 415 unless a request that carries a body says it is JSON. */
const requireJson: RequestHandler = (req, _res, next) => {
  const hasBody = Number(req.get('content-length') ?? 0) > 0 || req.get('transfer-encoding') !== undefined;
  if (hasBody && !req.is('application/json')) {
    throw new ApiError(415, 'Unsupported media type', 'request bodies must be application/json');
  }
  next();
};
const parseJson = express.json({ limit: BODY_LIMIT });

/**
 * A path parameter names one resource in one spelling: a value whose percent-encoding is not
 * the canonical one (`encodeURIComponent(decoded)`), e.g. `INC%2D20261121%2D001`, is a 404 —
 * never an alias of `INC-20261121-001`.
 */
function canonicalParams(spec: AnyRoute): RequestHandler | undefined {
  const names = paramNames(spec.path);
  if (names.length === 0) return undefined;
  const pattern = rawParamsPattern(spec.path);
  const notFound = () =>
    new ApiError(
      404,
      spec.kind ? `${spec.kind} not found` : 'Not found',
      'the path is not in canonical percent-encoding',
    );
  return (req, _res, next) => {
    const raw = pattern.exec(req.path);
    if (!raw) throw notFound();
    names.forEach((name, i) => {
      if (encodeURIComponent(String(req.params[name] ?? '')) !== raw[i + 1]) throw notFound();
    });
    next();
  };
}

/** Middleware that runs before every non-public route: who is calling, and how often. */
export interface Guards {
  requireRole: (role: UserRole) => RequestHandler;
  rateLimit: RequestHandler;
}

/**
 * Mounts routes on `router`, plus a 405 with `Allow` for every other method on their paths.
 * Order per route: authentication and role, rate limit, canonical path, body (415, 413, 400
 * malformed JSON), then query and body validation (400).
 */
export function mountRoutes(router: Router, routes: AnyRoute[], guards: Guards): void {
  const methodsByPath = new Map<string, string[]>();
  for (const spec of routes) {
    const path = expressPath(spec.path);
    methodsByPath.set(path, [...(methodsByPath.get(path) ?? []), spec.method.toUpperCase()]);
    const before: RequestHandler[] = [];
    if (spec.role !== 'public') before.push(guards.requireRole(spec.role), guards.rateLimit);
    const canonical = canonicalParams(spec);
    if (canonical) before.push(canonical);
    // Only routes that take a body read one: elsewhere a body is ignored, as HTTP allows.
    if (spec.body) before.push(requireJson, parseJson);
    router[spec.method](path, ...before, async (req: Request, res: Response) => {
      const principal = req.principal as Authenticated;
      const query = parse(spec.query, req.query, 'query');
      const body = spec.body ? parse(spec.body, req.body ?? ABSENT_BODY, 'body') : undefined;
      refuseNulKeys(body, 'body');
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

const RETRY_AFTER = { description: 'seconds to wait before retrying', pattern: '^[0-9]+$' };

/** Every answer an operation can give: its declared ones plus those its declaration implies. */
export function documentedResponses(spec: AnyRoute): Record<number, ResponseDoc> {
  const errors: Record<number, ResponseDoc> = {};
  const authenticated = spec.role !== 'public';
  const hasParams = paramNames(spec.path).length > 0;
  if (spec.query || spec.body)
    errors[400] = { description: 'Invalid request: details list each problem of the query or body' };
  if (authenticated) {
    errors[401] = {
      description: 'Unauthorized: missing, malformed, unknown or revoked bearer token',
      headers: { 'WWW-Authenticate': { description: 'Bearer challenge' } },
    };
    // Every token has at least the viewer role: viewer routes never refuse a valid token.
    if (spec.role !== 'viewer') errors[403] = { description: `Forbidden: requires role ${spec.role} or higher` };
  }
  if (hasParams) errors[404] = { description: `${spec.kind ?? 'Resource'} not found` };
  if (spec.body) {
    errors[413] = { description: 'Payload too large: the body exceeds 1 MiB' };
    errors[415] = { description: 'Unsupported media type: bodies must be application/json' };
  }
  if (authenticated) {
    errors[429] = {
      description: 'Too many requests for this token',
      headers: { 'Retry-After': RETRY_AFTER },
    };
  }
  errors[500] = { description: 'Internal error (never a stack trace)' };
  // Tokens live in MongoDB: every authenticated request needs it.
  if (authenticated) {
    errors[503] = {
      description: 'Service unavailable: MongoDB or Temporal is unreachable, or an update timed out in Temporal',
      headers: { 'Retry-After': RETRY_AFTER },
    };
  }
  const all: Record<number, ResponseDoc> = { ...errors };
  for (const [key, declared] of Object.entries(spec.responses)) {
    const status = Number(key);
    const implied = errors[status];
    all[status] = implied
      ? { ...implied, ...declared, description: `${declared.description}; ${implied.description}` }
      : declared;
  }
  for (const [key, doc] of Object.entries(all)) {
    const status = Number(key);
    if (status >= 400 && !doc.schema) all[status] = { ...doc, schema: errorSchema };
    if (status === 201 && !doc.headers?.Location)
      all[status] = { ...all[status], headers: { ...doc.headers, Location: { description: 'the new resource' } } };
  }
  return all;
}

const errorComponents = new WeakMap<OpenAPIRegistry, ZodTypeAny>();

/** Adds every route to the OpenAPI registry, paths prefixed with where they are mounted. */
export function registerOpenApi(registry: OpenAPIRegistry, prefix: string, routes: AnyRoute[]): void {
  // The error envelope is one component (`#/components/schemas/Error`) that every error refers to.
  const error = errorComponents.get(registry) ?? registry.register('Error', errorSchema);
  errorComponents.set(registry, error);
  for (const spec of routes) {
    const params = paramNames(spec.path);
    registry.registerPath({
      method: spec.method,
      path: prefix + spec.path,
      summary: spec.summary,
      tags: [spec.tag],
      security: spec.role === 'public' ? [] : [{ bearerAuth: [] }],
      description: spec.role === 'public' ? 'No authentication.' : `Requires role ${spec.role} or higher.`,
      request: {
        ...(params.length && {
          params: z.object(
            Object.fromEntries(
              params.map((p) => [
                p,
                z
                  .string()
                  .min(1)
                  .describe(`${spec.kind ?? 'resource'} ${p}, percent-encoded`),
              ]),
            ),
          ),
        }),
        ...(spec.query && { query: spec.query as never }),
        ...(spec.body && {
          body: { required: bodyRequired(spec), content: { 'application/json': { schema: spec.body } } },
        }),
      },
      responses: Object.fromEntries(
        Object.entries(documentedResponses(spec)).map(([status, r]) => [
          status,
          {
            description: r.description,
            ...(r.headers && {
              headers: Object.fromEntries(
                Object.entries(r.headers).map(([name, h]) => [
                  name,
                  {
                    description: h.description,
                    required: true,
                    schema: { type: 'string' as const, ...(h.pattern && { pattern: h.pattern }) },
                  },
                ]),
              ),
            }),
            ...(r.schema && {
              content: {
                [r.contentType ?? 'application/json']: { schema: r.schema === errorSchema ? error : r.schema },
                ...Object.fromEntries(Object.entries(r.alternatives ?? {}).map(([type, schema]) => [type, { schema }])),
              },
            }),
          },
        ]),
      ),
    });
  }
}

type JsonSchemaNode = { [key: string]: unknown };

/**
 * Adds `propertyNames` (no NUL) to every map under `node`: an object schema whose other keys are
 * kept (`additionalProperties` given). Where it is absent, other keys are ignored (stripped).
 */
function markNulFreeKeys(node: unknown): void {
  if (Array.isArray(node)) return node.forEach(markNulFreeKeys);
  if (node === null || typeof node !== 'object') return;
  const schema = node as JsonSchemaNode;
  const kept = schema.additionalProperties;
  if (kept !== undefined && kept !== false && !schema.propertyNames) schema.propertyNames = { ...NUL_FREE_KEYS };
  Object.values(schema).forEach(markNulFreeKeys);
}

/** What the generator cannot derive from zod: rules every request body follows (see refuseNulKeys). */
export function finishDocument<D extends { paths?: Record<string, unknown> }>(document: D): D {
  for (const item of Object.values(document.paths ?? {}))
    for (const operation of Object.values(item as Record<string, JsonSchemaNode>))
      markNulFreeKeys((operation?.requestBody as JsonSchemaNode | undefined)?.content);
  return document;
}
