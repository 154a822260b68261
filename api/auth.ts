import type { Request, RequestHandler } from 'express';
import { rateLimit, type RateLimitInfo } from 'express-rate-limit';
import { roleAtLeast, type Principal, type UserRole } from '../domain/roles';
import { verifyToken } from '../store/tokens';
import { ApiError } from './errors';

/** The caller behind a verified bearer token. */
export interface Authenticated extends Principal {
  tokenId: string;
}

declare module 'express-serve-static-core' {
  interface Request {
    principal?: Authenticated;
  }
}

const unauthorized = (details: string) =>
  new ApiError(401, 'Unauthorized', details, { 'WWW-Authenticate': 'Bearer realm="foghorn"' });

/** Authenticates the bearer token and checks the route's role (DESIGN §5). */
export function requireRole(required: UserRole): RequestHandler {
  return async (req, _res, next) => {
    const header = req.get('authorization') ?? '';
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) throw unauthorized(header ? 'malformed Authorization header' : 'missing bearer token');
    const token = await verifyToken(match[1]);
    if (!token) throw unauthorized('invalid or revoked token');
    req.principal = { user: token.user, role: token.role, tokenId: token.id };
    if (!roleAtLeast(token.role, required)) {
      throw new ApiError(403, 'Forbidden', `role ${token.role} may not do this; ${required} or higher is required`);
    }
    next();
  };
}

/** Requests per minute per token; past the limit 429 with Retry-After. Per process, in memory. */
export function tokenRateLimit(perMinute: number): RequestHandler {
  return rateLimit({
    windowMs: 60_000,
    limit: perMinute,
    standardHeaders: 'draft-7',
    legacyHeaders: false,
    keyGenerator: (req: Request) => req.principal?.tokenId ?? 'anonymous',
    handler: (req, _res, next) => {
      const reset =
        (req as Request & { rateLimit?: RateLimitInfo }).rateLimit?.resetTime?.getTime() ?? Date.now() + 60_000;
      const retryAfter = String(Math.max(1, Math.ceil((reset - Date.now()) / 1000)));
      next(
        new ApiError(429, 'Too many requests', `limit is ${perMinute} requests per minute per token`, {
          'Retry-After': retryAfter,
        }),
      );
    },
  });
}

/** Who did it and from where, as the audit log records it. */
export function auditSource(req: Request) {
  const principal = req.principal as Authenticated;
  return { user: principal.user, role: principal.role, sourceIP: req.ip ?? '', userAgent: req.get('user-agent') ?? '' };
}
