import type { Model, SortOrder } from 'mongoose';

export interface Page<T> {
  items: T[];
  totalCount: number;
}

/** One page of a collection plus the total, as every list endpoint needs (DESIGN §4). */
export async function findPage<T>(
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any model; T is the lean shape
  model: Model<any>,
  filter: Record<string, unknown>,
  sort: Record<string, SortOrder>,
  page: number,
  pageSize: number,
): Promise<Page<T>> {
  const [items, totalCount] = await Promise.all([
    model
      .find(filter)
      .sort(sort)
      .skip((page - 1) * pageSize)
      .limit(pageSize)
      .lean<T[]>(),
    model.countDocuments(filter),
  ]);
  return { items, totalCount };
}
