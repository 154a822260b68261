import type { KubeActionType } from '../domain/kube-actions';
import { isDuplicateKey } from './connection';
import { KubeActionModel } from './models/kube-action';

/**
 * The intent records of Kubernetes actions: what makes a step apply once however often its
 * activity runs. The first attempt records its intent (values chosen once, values found);
 * every attempt applies the recorded intent; the first to finish records the result.
 */

export interface KubeActionRecord<I, R> {
  key: string;
  action: KubeActionType;
  cluster: string;
  target: string;
  params: string;
  intent: I;
  state: 'pending' | 'done';
  result?: R;
}

/** As stored: intent and result as JSON text. */
type StoredAction = Omit<KubeActionRecord<unknown, unknown>, 'intent' | 'result'> & {
  intent: string;
  result?: string | null;
};

// The unique index on `key` is what makes concurrent first attempts agree on one intent;
// created here too so this store never depends on which models connectMongo happened to know.
let indexed: Promise<unknown> | undefined;
function ensureIndexes(): Promise<unknown> {
  indexed ??= KubeActionModel.createIndexes().catch((err: unknown) => {
    indexed = undefined;
    throw err;
  });
  return indexed;
}

function parse<I, R>(doc: StoredAction): KubeActionRecord<I, R> {
  return {
    key: doc.key,
    action: doc.action,
    cluster: doc.cluster,
    target: doc.target,
    params: doc.params,
    intent: JSON.parse(doc.intent) as I,
    state: doc.state,
    ...(doc.result ? { result: JSON.parse(doc.result) as R } : {}),
  };
}

export async function findKubeAction<I, R>(key: string): Promise<KubeActionRecord<I, R> | undefined> {
  const doc = await KubeActionModel.findOne({ key }, { _id: 0 }).lean<StoredAction>();
  return doc ? parse<I, R>(doc) : undefined;
}

/**
 * Records the intent of `key` unless one is there: returns the record that holds (ours, or the
 * one a concurrent or earlier attempt wrote first).
 */
export async function recordKubeActionIntent<I, R>(
  record: Omit<KubeActionRecord<I, R>, 'state' | 'result'>,
): Promise<KubeActionRecord<I, R>> {
  await ensureIndexes();
  try {
    await KubeActionModel.create({
      ...record,
      intent: JSON.stringify(record.intent),
      state: 'pending',
      createdAt: new Date(),
    });
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
  }
  const stored = await findKubeAction<I, R>(record.key);
  if (!stored) throw new Error(`the intent of Kubernetes action ${record.key} was not stored`);
  return stored;
}

/** Marks `key` done with its result; the first result recorded stays. */
export async function completeKubeAction<R>(key: string, result: R): Promise<void> {
  await KubeActionModel.updateOne(
    { key, state: 'pending' },
    { $set: { state: 'done', result: JSON.stringify(result), doneAt: new Date() } },
  );
}

/**
 * The newest action of `actions` applied to `target` (`deployment shop/checkout`) in `cluster`
 * since `since`: the rollout cool-down reads it.
 */
export async function lastActionOn(
  cluster: string,
  target: string,
  actions: readonly KubeActionType[],
  since: Date,
): Promise<{ key: string; action: KubeActionType; doneAt: Date } | undefined> {
  const doc = await KubeActionModel.findOne(
    { cluster, target, action: { $in: actions }, state: 'done', doneAt: { $gte: since } },
    { _id: 0, key: 1, action: 1, doneAt: 1 },
  )
    .sort({ doneAt: -1 })
    .lean<{ key: string; action: KubeActionType; doneAt: Date }>();
  return doc ?? undefined;
}
