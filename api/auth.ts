import type { Request, RequestHandler } from 'express';
import { rateLimit, type RateLimitInfo } from 'express-rate-limit';
import { roleAtLeast, type Principal, type UserRole } from '../domain/roles';
import { tokenHash, verifyToken, type TokenInfo } from '../store/tokens';
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

/**
 * Verified tokens, briefly remembered by their hash: in a storm each request would otherwise read
 * its token first. A revocation takes effect at once in the process that revokes (forgetToken)
 * and within TOKEN_CACHE_MS in every other process (docs/decisions.md). Failures are not kept.
 */
export const TOKEN_CACHE_MS = 5_000;
const TOKEN_CACHE_MAX = 10_000;
const verified = new Map<string, { token: TokenInfo; until: number }>();

async function verifyCached(token: string): Promise<TokenInfo | undefined> {
  const key = tokenHash(token);
  const now = Date.now();
  const cached = verified.get(key);
  if (cached && cached.until > now) return cached.token;
  const fresh = await verifyToken(token);
  if (!fresh) {
    verified.delete(key);
    return undefined;
  }
  if (verified.size >= TOKEN_CACHE_MAX) verified.clear(); // bounded; refilled by the next requests
  verified.set(key, { token: fresh, until: now + TOKEN_CACHE_MS });
  return fresh;
}

/** Forgets a revoked token in this process at once. */
export function forgetToken(id: string): void {
  for (const [key, { token }] of verified) if (token.id === id) verified.delete(key);
}

/** Authenticates the bearer token and checks the route's role (DESIGN §5). */
export function requireRole(required: UserRole): RequestHandler {
  return async (req, _res, next) => {
    const header = req.get('authorization') ?? '';
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) throw unauthorized(header ? 'malformed Authorization header' : 'missing bearer token');
    const token = await verifyCached(match[1]);
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
