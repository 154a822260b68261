/**
 * The envelope every API resource shares (DESIGN §4): its version, and a list's metadata and
 * page sizes. The schemas that validate queries and describe answers are in contracts/envelope.ts.
 */
export const API_VERSION = 'v1' as const;

export const PAGE_SIZE = { default: 20, max: 100 } as const;
export const AUDIT_PAGE_SIZE = { default: 50, max: 200 } as const;

export function listEnvelope<T>(kind: string, items: T[], totalCount: number, page: number, pageSize: number) {
  return { apiVersion: API_VERSION, kind, metadata: { totalCount, page, pageSize }, items };
}
