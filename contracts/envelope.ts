import { z, type ZodError } from 'zod';
import { API_VERSION } from '../domain/envelope';

/**
 * Shapes shared by every API resource (DESIGN §4): list envelope, pagination and filters.
 * Query values arrive as strings, so numbers and booleans are parsed strictly here.
 */

export function paginationQuery(max: number, defaultSize: number) {
  return z.object({
    page: z.coerce.number().int().min(1).default(1),
    pageSize: z.coerce.number().int().min(1).max(max).default(defaultSize),
  });
}

export const booleanQuery = z.enum(['true', 'false']).transform((v) => v === 'true');
export const timestampQuery = z
  .string()
  .datetime({ offset: true, message: 'must be an RFC 3339 timestamp' })
  .transform((v) => new Date(v));

export const listMetadataSchema = z.object({
  totalCount: z.number().int(),
  page: z.number().int(),
  pageSize: z.number().int(),
});

export function listSchema<T extends z.ZodTypeAny>(kind: string, item: T) {
  return z.object({
    apiVersion: z.literal(API_VERSION),
    kind: z.literal(kind),
    metadata: listMetadataSchema,
    items: z.array(item),
  });
}

export const errorSchema = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal('Error'),
  error: z.object({ code: z.number().int(), message: z.string(), details: z.string() }),
});

/** `query.pageSize: Number must be less than or equal to 100; body.name: Required` */
export function describeZodError(error: ZodError, where: string): string {
  return error.issues.map((issue) => `${[where, ...issue.path].join('.')}: ${issue.message}`).join('; ');
}
