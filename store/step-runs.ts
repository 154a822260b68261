import type { StepKind } from '../domain/remediation-steps';
import { isDuplicateKey } from './connection';
import { StepRunModel } from './models/step-run';

/**
 * The records of HttpRequest and RunScript steps: what makes a finished key answer its result
 * without acting again, and a script run at most once. Single-document writes only (the
 * MongoDB-wire server has no transactions): the unique key decides between concurrent attempts.
 */

export interface StepRunRecord<R> {
  key: string;
  kind: StepKind;
  fingerprint: string;
  target: string;
  state: 'started' | 'done';
  result?: R;
}

type NewStepRun = Pick<StepRunRecord<unknown>, 'key' | 'kind' | 'fingerprint' | 'target'>;

// The unique index on `key` is what makes concurrent attempts agree; created here too so this
// store never depends on which models connectMongo happened to know.
let indexed: Promise<unknown> | undefined;
function ensureIndexes(): Promise<unknown> {
  indexed ??= StepRunModel.createIndexes().catch((err: unknown) => {
    indexed = undefined;
    throw err;
  });
  return indexed;
}

export async function findStepRun<R>(key: string): Promise<StepRunRecord<R> | undefined> {
  const doc = await StepRunModel.findOne({ key }, { _id: 0, createdAt: 0, doneAt: 0 }).lean<StepRunRecord<R>>();
  if (!doc) return undefined;
  const { result, ...rest } = doc;
  return { ...rest, ...(result !== undefined && result !== null && { result }) };
}

/**
 * Records `key` as started unless a record is there. `claimed` is true only for the caller whose
 * record it is: every other caller gets the record that holds (started or done).
 */
export async function claimStepRun<R>(
  run: NewStepRun,
): Promise<{ claimed: true } | { claimed: false; record: StepRunRecord<R> }> {
  await ensureIndexes();
  try {
    await StepRunModel.create({ ...run, state: 'started', createdAt: new Date() });
    return { claimed: true };
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
  }
  const record = await findStepRun<R>(run.key);
  if (!record) throw new Error(`step run ${run.key} was neither recorded nor found`);
  return { claimed: false, record };
}

/** Marks a started `key` done with its result; the first result recorded stays. */
export async function completeStepRun<R>(key: string, result: R): Promise<void> {
  await StepRunModel.updateOne({ key, state: 'started' }, { $set: { state: 'done', result, doneAt: new Date() } });
}

/** Gives up a claim whose step certainly did not start (its sandbox could not be set up). */
export async function releaseStepRun(key: string): Promise<void> {
  await StepRunModel.deleteOne({ key, state: 'started' });
}

/**
 * Records the outcome of a step that needs no claim (an HTTP request, which may be repeated).
 * `ours` is false when an earlier attempt recorded first: its record is the one that holds.
 */
export async function recordStepResult<R>(
  run: NewStepRun,
  result: R,
): Promise<{ ours: true } | { ours: false; record: StepRunRecord<R> }> {
  await ensureIndexes();
  try {
    const now = new Date();
    await StepRunModel.create({ ...run, state: 'done', result, createdAt: now, doneAt: now });
    return { ours: true };
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
  }
  const record = await findStepRun<R>(run.key);
  if (!record) throw new Error(`step run ${run.key} was neither recorded nor found`);
  return { ours: false, record };
}
