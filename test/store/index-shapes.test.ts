/**
 * Every query shape the store's list and lookup functions send is served by an index its model
 * declares (issue 14). The shapes are captured from the real functions running against the
 * MongoDB-wire server (Mongoose's debug hook sees each command's collection, filter and sort),
 * so a new filter or sort without its index fails here.
 *
 * The MongoDB-wire server cannot explain (it keeps unique indexes only, and scans), so the rule is
 * the one MongoDB's planner applies to a compound index (ESR: equality, sort, range):
 * - a unique index whose every key is matched by equality serves anything (one document at most);
 * - a sorted query needs an index that yields its order without an in-memory SORT: keys matched by
 *   equality (`$in` too: the planner merges its points in order) as a prefix, then the sort keys
 *   in order, all in the index's direction or all reversed. When the filter has equality fields,
 *   the prefix must hold one, so the scan is bounded, not a walk of the whole collection; range
 *   conditions (`since`, `from`/`to`) may be checked along the ordered scan;
 * - an unsorted query with a filter (counts, lookups) needs an index whose first key the filter
 *   bounds (by equality or range). An empty filter without a sort is a deliberate full read.
 * Operators that bound nothing (`$ne`, `$exists`, `$size`, `$or`, …) are checked on the fetched
 * documents, as MongoDB does.
 */
import mongoose, { type Model } from 'mongoose';
import { signalSchema } from '../../contracts/incidents';
import { listApprovals } from '../../store/approvals';
import { listAudit } from '../../store/audit';
import { getCluster, listClusters } from '../../store/clusters';
import {
  countOpenAt,
  countTimeline,
  findOpenIncident,
  getIncident,
  getTimeline,
  listIncidents,
  openOrJoin,
  relatedOpenIncidents,
} from '../../store/incidents';
import { getInsightByIncident, listInsights } from '../../store/insights';
import {
  getPostmortem,
  getPostmortemByIncident,
  incidentsNear,
  listPostmortems,
  trendingIncidents,
} from '../../store/postmortems';
import { completedPlanOf, getPlan, listPlans, plansOfIncident, recentRunbookFailures } from '../../store/remediations';
import { getRunbook, listRunbooks, runbooksInCategory } from '../../store/runbooks';
import { createToken, listTokens, verifyToken } from '../../store/tokens';
import { useMongo } from '../harness/mongo';

type Direction = 1 | -1;
interface Shape {
  collection: string;
  method: string;
  filter: Record<string, unknown>;
  sort: [string, Direction][];
}
interface DeclaredIndex {
  keys: [string, Direction][];
  unique: boolean;
}

/** Commands whose filter selects documents; inserts, aggregates and metadata counts have none. */
const FILTERED = new Set([
  'find',
  'findOne',
  'countDocuments',
  'findOneAndUpdate',
  'findOneAndDelete',
  'updateOne',
  'updateMany',
  'deleteOne',
  'deleteMany',
]);
const RANGE_OPS = ['$gt', '$gte', '$lt', '$lte'];

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && Object.getPrototypeOf(v) === Object.prototype;
}

/** How a filter condition can bound an index scan: equality (points), a range, or not at all. */
function boundOf(value: unknown): 'equality' | 'range' | 'none' {
  if (!isPlainObject(value)) return 'equality'; // a literal, a Date, an ObjectId
  const ops = Object.keys(value);
  if (ops.length > 0 && ops.every((op) => op === '$eq' || op === '$in')) return 'equality';
  if (ops.some((op) => RANGE_OPS.includes(op))) return 'range';
  return 'none';
}

function indexesOf(model: Model<unknown>): DeclaredIndex[] {
  const declared = model.schema.indexes().map(([keys, options]) => ({
    keys: Object.entries(keys).map(([k, d]) => [k, Number(d) as Direction] as [string, Direction]),
    unique: Boolean((options as { unique?: boolean }).unique),
  }));
  return [{ keys: [['_id', 1]], unique: true }, ...declared];
}

/** Why no index serves the shape, or '' when one does. */
function unserved(shape: Shape, indexes: DeclaredIndex[]): string {
  const fields = Object.entries(shape.filter).filter(([k]) => !k.startsWith('$'));
  const equality = new Set(fields.filter(([, v]) => boundOf(v) === 'equality').map(([k]) => k));
  const bounded = new Set(fields.filter(([, v]) => boundOf(v) !== 'none').map(([k]) => k));
  const serves = (index: DeclaredIndex): boolean => {
    if (index.unique && index.keys.every(([k]) => equality.has(k))) return true;
    if (shape.sort.length === 0) return bounded.size === 0 || bounded.has(index.keys[0][0]);
    let i = 0;
    while (i < index.keys.length && equality.has(index.keys[i][0])) i++;
    if (equality.size > 0 && i === 0) return false;
    // The sort keys next, skipping any the equality prefix already fixes.
    const sort = shape.sort.filter(([k]) => !index.keys.slice(0, i).some(([ik]) => ik === k));
    const rest = index.keys.slice(i, i + sort.length);
    if (rest.length < sort.length || rest.some(([k], j) => k !== sort[j][0])) return false;
    const same = rest.every(([, d], j) => d === sort[j][1]);
    const reversed = rest.every(([, d], j) => d === -sort[j][1]);
    return same || reversed;
  };
  return indexes.some(serves)
    ? ''
    : `${shape.collection}.${shape.method}(${JSON.stringify(shape.filter)}) sort ${JSON.stringify(shape.sort)}: ` +
        `no index among ${JSON.stringify(indexes.map((x) => x.keys))}`;
}

const shapes: Shape[] = [];

function record(collection: string, method: string, ...args: unknown[]) {
  if (!FILTERED.has(method)) return;
  const filter = isPlainObject(args[0]) ? args[0] : {};
  const options = (args.find((a, i) => i > 0 && isPlainObject(a) && 'sort' in a) ?? {}) as { sort?: unknown };
  const sort = isPlainObject(options.sort)
    ? Object.entries(options.sort).map(([k, d]) => [k, Number(d) as Direction] as [string, Direction])
    : [];
  shapes.push({ collection, method, filter: JSON.parse(JSON.stringify(filter)) as Record<string, unknown>, sort });
}

describe('store query shapes and declared indexes', () => {
  let mongo: Awaited<ReturnType<typeof useMongo>>;
  beforeAll(async () => {
    mongo = await useMongo();
  });
  afterAll(async () => {
    mongoose.set('debug', false);
    await mongo.stop();
  });

  it('every list and lookup the store issues has an index that serves it', async () => {
    mongoose.set('debug', record);
    const at = new Date('2026-02-01T10:00:00Z');
    const signal = signalSchema.parse({
      signalType: 'OOMKilled',
      severity: 'high',
      namespace: 'shop',
      resource: 'Deployment/cart',
      detectionSource: 'alertmanager',
    });
    const { incident } = await openOrJoin(signal, at);
    await openOrJoin(signal, at); // the join: dedup lookup, then the record by name
    await findOpenIncident(incident.resourceKey);
    await getIncident(incident.name);
    await getTimeline(incident.name);
    await countTimeline(incident.name);
    await relatedOpenIncidents(incident, 60_000);
    await countOpenAt(at);
    const incidentFilters = [
      {},
      { severity: 'high' },
      { state: 'Detected' },
      { namespace: 'shop' },
      { resource: 'Deployment/cart' },
      { since: at },
      { namespace: 'shop', state: 'Escalated', since: at },
      { state: ['Detected', 'Analyzing'] }, // the agent's open incidents
      { state: ['Detected', 'Escalated'], cluster: 'local', detectionSource: 'kubernetes-watcher' }, // the watcher's
    ];
    for (const f of incidentFilters) await listIncidents(f, 2, 20);

    await getInsightByIncident(incident.name);
    for (const f of [{}, { namespace: 'shop' }, { incident: incident.name }]) await listInsights(f, 1, 20);

    await getPlan('RP-20260201-001');
    await plansOfIncident(incident.name);
    await completedPlanOf(incident.name);
    await recentRunbookFailures('restart-deployment', at);
    for (const f of [{}, { namespace: 'shop' }, { state: 'Executing' as const }, { incident: incident.name }])
      await listPlans(f, 1, 20);

    for (const f of [{}, { status: 'pending' as const }, { incident: incident.name }, { namespace: 'shop' }])
      await listApprovals(f, 1, 20);

    const auditFilters = [{}, { action: 'incident.resolve' }, { user: 'alice' }, { resource: incident.name }];
    for (const f of [...auditFilters, { from: at }, { from: at, to: at }, { user: 'alice', from: at }])
      await listAudit(f, 1, 50);

    await getRunbook('restart-deployment');
    await runbooksInCategory('oomkill');
    for (const f of [{}, { category: 'oomkill' as const }, { severity: 'high' as const }, { automated: true }])
      await listRunbooks(f, 1, 20);

    await getPostmortem('PM-20260201-001', 'shop');
    await getPostmortemByIncident(incident.name);
    await trendingIncidents(incident, 30);
    await incidentsNear(incident, 600_000);
    for (const f of [{}, { state: 'Open' as const }, { incident: incident.name }]) await listPostmortems(f, 1, 20);

    const { token } = await createToken('alice', 'viewer');
    await verifyToken(token);
    await listTokens(1, 20);

    await getCluster('local');
    for (const f of [{}, { tier: 'critical' as const }]) await listClusters(f, 1, 20);
    mongoose.set('debug', false);

    const models = new Map(Object.values(mongoose.models).map((m) => [m.collection.collectionName, m]));
    expect(shapes.length).toBeGreaterThan(50);
    const problems = shapes
      .map((shape) => {
        const model = models.get(shape.collection);
        return model ? unserved(shape, indexesOf(model)) : `no model for ${shape.collection}`;
      })
      .filter(Boolean);
    expect([...new Set(problems)]).toEqual([]);
    // Each list's shape was seen (a list that stopped querying would pass vacuously).
    const sortedReads = new Set(shapes.filter((s) => s.sort.length > 0).map((s) => s.collection));
    for (const c of ['incidents', 'timeline_events', 'aiinsights', 'remediation_plans', 'approvals', 'audit_records'])
      expect(sortedReads).toContain(c);
  });

  it('the rule refuses what MongoDB would sort in memory or scan whole', () => {
    const idx = (keys: [string, Direction][], unique = false): DeclaredIndex => ({ keys, unique });
    const listOrder: [string, Direction][] = [
      ['detectedAt', -1],
      ['name', -1],
    ];
    const byState = idx([
      ['state', 1],
      ['detectedAt', -1],
      ['name', -1],
    ]);
    const shape = (filter: Record<string, unknown>, sort = listOrder): Shape => ({
      collection: 'incidents',
      method: 'find',
      filter,
      sort,
    });
    expect(unserved(shape({ state: 'Detected' }), [byState])).toBe('');
    expect(unserved(shape({ state: { $in: ['Detected', 'Escalated'] } }), [byState])).toBe('');
    // Reversed order is the same index read backwards.
    expect(
      unserved(
        shape({ state: 'Detected' }, [
          ['detectedAt', 1],
          ['name', 1],
        ]),
        [byState],
      ),
    ).toBe('');
    // The tie-break missing from the index: MongoDB sorts the matches in memory.
    expect(
      unserved(shape({ state: 'Detected' }), [
        idx([
          ['state', 1],
          ['detectedAt', -1],
        ]),
      ]),
    ).not.toBe('');
    // Mixed directions against the index.
    expect(
      unserved(
        shape({ state: 'Detected' }, [
          ['detectedAt', -1],
          ['name', 1],
        ]),
        [byState],
      ),
    ).not.toBe('');
    // An equality filter the index does not start with: a walk of the whole collection.
    expect(unserved(shape({ namespace: 'shop' }), [idx(listOrder), byState])).not.toBe('');
    // A range on the sort key is bounded by the ordered scan itself.
    expect(unserved(shape({ detectedAt: { $gte: new Date() } }), [idx(listOrder)])).toBe('');
    // Counts and lookups: the first key must be bounded.
    expect(unserved({ ...shape({ namespace: 'shop' }, []), method: 'countDocuments' }, [byState])).not.toBe('');
    expect(unserved({ ...shape({ name: 'INC-1' }, []), method: 'findOne' }, [idx([['name', 1]], true)])).toBe('');
  });
});
