import { dayKey, formatName, type NamePrefix } from '../domain/names';
import { isDuplicateKey, refusedDocuments } from './connection';
import { GroupInsert } from './group-insert';
import { Counter, NameClaim } from './models';

const MAX_TRIES = 50;

/**
 * Allocates the next `<PREFIX>-<yyyymmdd>-<nnn>`. Names asked for while an allocation is in
 * flight are allocated together, one counter step and one insert of claims per prefix and day
 * (a burst of remediations names an insight, a plan and a postmortem per incident at once:
 * docs/decisions.md, "Performance and capacity").
 */
export async function allocateName(prefix: NamePrefix, at: Date = new Date()): Promise<string> {
  const [name] = await allocations.add([{ prefix, at }]);
  return name;
}

const allocations = new GroupInsert<{ prefix: NamePrefix; at: Date }, string>(async (asks) => {
  const names: string[] = new Array(asks.length);
  const byPrefix = new Map<NamePrefix, number[]>();
  asks.forEach(({ prefix }, i) => byPrefix.set(prefix, [...(byPrefix.get(prefix) ?? []), i]));
  for (const [prefix, indexes] of byPrefix) {
    const got = await allocateNamesAt(
      prefix,
      indexes.map((i) => asks[i].at),
    );
    indexes.forEach((i, n) => (names[i] = got[n]));
  }
  return names;
}, 100);

/**
 * One name: the counter gives the candidate, the unique claim makes it ours. If two callers ever
 * see the same counter value, one claim fails and that caller simply takes the next value
 * (numbers may then have gaps, never duplicates).
 */
async function allocateOne(prefix: NamePrefix, at: Date): Promise<string> {
  const key = `${prefix}-${dayKey(at)}`;
  for (let attempt = 0; attempt < MAX_TRIES; attempt++) {
    try {
      const counter = await Counter.findOneAndUpdate(
        { _id: key },
        { $inc: { seq: 1 } },
        { upsert: true, returnDocument: 'after', lean: true },
      );
      const name = formatName(prefix, at, counter!.seq);
      await NameClaim.create({ _id: name, claimedAt: new Date() });
      return name;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
  }
  throw new Error(`could not allocate a ${prefix} name after ${MAX_TRIES} tries`);
}

/** A name for each of `ats`, in order: one counter step and one insert of claims per day among them. */
export async function allocateNamesAt(prefix: NamePrefix, ats: readonly Date[]): Promise<string[]> {
  const names: string[] = new Array(ats.length);
  const byDay = new Map<string, number[]>();
  ats.forEach((at, i) => byDay.set(dayKey(at), [...(byDay.get(dayKey(at)) ?? []), i]));
  for (const indexes of byDay.values()) {
    const got = await allocateNames(prefix, ats[indexes[0]], indexes.length);
    indexes.forEach((i, n) => (names[i] = got[n]));
  }
  return names;
}

/**
 * `count` names from one counter step: one increment, one insert of all their claims. A name
 * whose claim fails (a racing caller saw the same counter values) is replaced by allocateOne's.
 */
async function allocateNames(prefix: NamePrefix, at: Date, count: number): Promise<string[]> {
  if (count <= 1) return count === 1 ? [await allocateOne(prefix, at)] : [];
  const counter = await Counter.findOneAndUpdate(
    { _id: `${prefix}-${dayKey(at)}` },
    { $inc: { seq: count } },
    { upsert: true, returnDocument: 'after', lean: true },
  );
  const names = Array.from({ length: count }, (_, i) => formatName(prefix, at, counter!.seq - count + 1 + i));
  const claimedAt = new Date();
  let taken: number[] = [];
  try {
    await NameClaim.insertMany(
      names.map((_id) => ({ _id, claimedAt })),
      { ordered: false },
    );
  } catch (err) {
    const refused = refusedDocuments(err); // a broken connection throws: nothing is known
    if (refused.some((e) => e.code !== 11000)) throw err; // anything but claims already taken fails
    taken = refused.map((e) => e.index);
  }
  for (const i of taken) names[i] = await allocateOne(prefix, at);
  return names;
}
