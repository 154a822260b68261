import { createHash, randomBytes, timingSafeEqual } from 'crypto';
import { Types } from 'mongoose';
import type { AuditEntry } from '../domain/audit';
import type { UserRole } from '../domain/roles';
import { appendAudit } from './audit';
import { Token } from './models';
import { findPage } from './pagination';

/** What a caller learns about a token: never the token itself. */
export interface TokenInfo {
  id: string;
  user: string;
  role: UserRole;
  createdAt: Date;
  lastUsedAt?: Date;
  revoked: boolean;
}

/** How a token is stored and looked up: its SHA-256, never the token. */
export const tokenHash = (token: string) => createHash('sha256').update(token).digest('hex');
/** What a token's info shows: a list reads only these. */
const TOKEN_INFO_FIELDS = ['_id', 'user', 'role', 'createdAt', 'lastUsedAt', 'revoked'] as const;

const info = (doc: {
  _id: Types.ObjectId;
  user: string;
  role: string;
  createdAt: Date;
  lastUsedAt?: Date | null;
  revoked: boolean;
}): TokenInfo => ({
  id: doc._id.toHexString(),
  user: doc.user,
  role: doc.role as UserRole,
  createdAt: doc.createdAt,
  ...(doc.lastUsedAt && { lastUsedAt: doc.lastUsedAt }),
  revoked: doc.revoked,
});

/** 32 random bytes, prefixed so a leaked token is easy to recognise in a secret scanner. */
export function generateToken(): string {
  return 'fh_' + randomBytes(32).toString('base64url');
}

export async function createToken(user: string, role: UserRole): Promise<TokenInfo & { token: string }> {
  const token = generateToken();
  const doc = await Token.create({ hash: tokenHash(token), user, role, createdAt: new Date(), revoked: false });
  return { ...info(doc), token };
}

/** Makes `token` a valid admin token (FOGHORN_ADMIN_TOKEN); idempotent across restarts. */
export async function seedAdminToken(token: string): Promise<void> {
  await Token.updateOne(
    { hash: tokenHash(token) },
    { $setOnInsert: { user: 'admin', role: 'admin', createdAt: new Date(), revoked: false } },
    { upsert: true },
  );
}

const LAST_USED_RESOLUTION_MS = 60_000;

/** The active token matching `token`, or undefined. The stored hash is compared in constant time. */
export async function verifyToken(token: string): Promise<TokenInfo | undefined> {
  const hash = tokenHash(token);
  const doc = await Token.findOne({ hash }).lean();
  if (!doc || doc.revoked || !timingSafeEqual(Buffer.from(doc.hash, 'hex'), Buffer.from(hash, 'hex'))) return undefined;
  const now = Date.now();
  if (!doc.lastUsedAt || now - doc.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
    // Bookkeeping only: at most one write a minute per token, never on the request's critical path.
    Token.updateOne({ _id: doc._id }, { $set: { lastUsedAt: new Date(now) } }).catch(() => undefined);
  }
  return info(doc);
}

export async function listTokens(page: number, pageSize: number): Promise<{ items: TokenInfo[]; totalCount: number }> {
  const { items, totalCount } = await findPage<Parameters<typeof info>[0]>(
    Token,
    {},
    { createdAt: -1 },
    page,
    pageSize,
    TOKEN_INFO_FIELDS, // never the hash
  );
  return { items: items.map(info), totalCount };
}

/** Revokes by id; undefined when there is no such token. Revoking twice is harmless. */
export async function revokeToken(id: string): Promise<TokenInfo | undefined> {
  if (!Types.ObjectId.isValid(id)) return undefined;
  const doc = await Token.findOneAndUpdate(
    { _id: id },
    { $set: { revoked: true, revokedAt: new Date() } },
    { returnDocument: 'after', lean: true },
  );
  return doc ? info(doc) : undefined;
}

/** Audits a token's creation or revocation (never its value), for the API and the CLI alike. */
export function auditTokenChange(
  action: 'token.create' | 'token.revoke',
  info: TokenInfo,
  source: Pick<AuditEntry, 'user' | 'role' | 'sourceIP' | 'userAgent'>,
) {
  return appendAudit({
    action,
    ...source,
    resource: info.id,
    resourceType: 'Token',
    namespace: '',
    details: { tokenUser: info.user, tokenRole: info.role },
  });
}
