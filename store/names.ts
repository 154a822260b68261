import { dayKey, formatName, type NamePrefix } from '../domain/names';
import { isDuplicateKey } from './connection';
import { Counter, NameClaim } from './models';

const MAX_TRIES = 50;

/**
 * Allocates the next `<PREFIX>-<yyyymmdd>-<nnn>`. The counter gives the candidate, the unique
 * claim makes it ours: if two callers ever see the same counter value, one claim fails and that
 * caller simply takes the next value (numbers may then have gaps, never duplicates).
 */
export async function allocateName(prefix: NamePrefix, at: Date = new Date()): Promise<string> {
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
