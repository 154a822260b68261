import type { Model, SortOrder } from 'mongoose';

export interface Page<T> {
  items: T[];
  totalCount: number;
}

/** The projection of `fields`: only those, and `_id` only when named. */
export function projectionOf(fields: readonly string[]): Record<string, 0 | 1> {
  return Object.fromEntries([['_id', fields.includes('_id') ? 1 : 0], ...fields.map((f) => [f, 1] as const)]);
}

/**
 * One page of a collection plus the total, as every list endpoint needs (DESIGN §4).
 *
 * `fields`: what the list view renders (the views declare their fields beside them), or a
 * projection where the view renders the whole record but internals; without it, whole documents.
 * A list never carries what only the single-resource GET shows.
 *
 * `totalCount` (docs/decisions.md, issue 14):
 * - no filter: `estimatedDocumentCount`, the collection's count from its metadata, O(1) on
 *   MongoDB and on the MongoDB-wire server. Exact on the latter; on MongoDB exact too, except
 *   after an unclean shutdown (until the collection is validated) or with orphaned documents in
 *   a sharded cluster, an error of a few records a pager can live with;
 * - a filter: exact. A page that is not full, and not past the end, already holds the last of
 *   the matches, so the total is known without counting (a selective filter's usual case);
 *   otherwise a `countDocuments`. A filtered total is what a client pages through and what an
 *   operator reads as "how many critical incidents"; its index (test/store/index-shapes.test.ts)
 *   bounds the count to the matching keys on MongoDB.
 */
export async function findPage<T>(
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any model; T is the lean shape
  model: Model<any>,
  filter: Record<string, unknown>,
  sort: Record<string, SortOrder>,
  page: number,
  pageSize: number,
  fields?: readonly string[] | Record<string, number>,
): Promise<Page<T>> {
  const skip = (page - 1) * pageSize;
  const find = model
    .find(filter, Array.isArray(fields) ? projectionOf(fields) : fields)
    .sort(sort)
    .skip(skip)
    .limit(pageSize)
    .lean<T[]>();
  if (Object.keys(filter).length === 0) {
    const [items, totalCount] = await Promise.all([find, model.estimatedDocumentCount()]);
    return { items, totalCount };
  }
  const items = await find;
  const lastPage = items.length < pageSize && (items.length > 0 || skip === 0);
  return { items, totalCount: lastPage ? skip + items.length : await model.countDocuments(filter) };
}
