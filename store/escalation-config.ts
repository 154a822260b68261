import { canonicalJson } from '../domain/audit';
import {
  BUILTIN_DEFAULT_POLICY,
  BUILTIN_NONE_POLICY,
  DEFAULT_POLICY,
  NO_POLICY,
  type EscalationPolicy,
  type MaintenanceWindow,
  type OnCallSchedule,
} from '../domain/escalation-policy';
import { type EscalationFile } from '../contracts/escalation';
import { activeMaintenance } from '../domain/oncall';
import { openSecret, sealSecret, SecretUnreadableError, type SealedSecret } from './cluster-secrets';
import { isDuplicateKey } from './connection';
import { Counter, EscalationConfigModel } from './models';
import type { Page } from './pagination';

/**
 * Escalation configuration (DESIGN §8): policies, on-call schedules and maintenance windows, from
 * FOGHORN_ESCALATION_FILE (source `file`) or the admin API (source `api`). Each spec is stored
 * sealed, since policies and schedules carry webhook URLs, routing keys and signing secrets; the
 * plaintext leaves this module only as the specs the functions below return.
 */

export type ConfigKind = 'policy' | 'schedule' | 'maintenance';
export type ConfigSource = 'file' | 'api';

export interface ConfigSpecs {
  policy: EscalationPolicy;
  schedule: OnCallSchedule;
  maintenance: MaintenanceWindow;
}

export interface ConfigRecord<K extends ConfigKind> {
  kind: K;
  spec: ConfigSpecs[K];
  source: ConfigSource;
  createdAt: Date;
  updatedAt: Date;
  /** Creation order. */
  seq: number;
}

interface StoredDoc {
  kind: ConfigKind;
  name: string;
  sealed: SealedSecret;
  source: ConfigSource;
  createdAt: Date;
  updatedAt: Date;
  seq: number;
}

const FIELDS = { _id: 0 } as const;

/** Lists: policies in the order they are tried, windows by start, schedules by name. */
const ORDER = {
  policy: { priority: 1, seq: 1 },
  schedule: { name: 1 },
  maintenance: { from: 1, name: 1 },
} as const;

/** The secret's name is bound into the ciphertext: a document copied under another name does not open. */
const secretName = (kind: ConfigKind, name: string) => `escalation/${kind}/${name}`;

/** What queries need, in clear: never a target. */
function clearFields(kind: ConfigKind, spec: ConfigSpecs[ConfigKind]) {
  if (kind === 'policy') return { priority: (spec as EscalationPolicy).priority };
  if (kind === 'maintenance') {
    const w = spec as MaintenanceWindow;
    return { namespace: w.namespace, from: new Date(w.from), to: new Date(w.to) };
  }
  return {};
}

function sealed<K extends ConfigKind>(kind: K, spec: ConfigSpecs[K]) {
  return { sealed: sealSecret(secretName(kind, spec.name), JSON.stringify(spec)), ...clearFields(kind, spec) };
}

/** The stored spec; it was validated before it was sealed. Throws SecretUnreadableError (no content) when it does not open. */
function open<K extends ConfigKind>(doc: StoredDoc): ConfigRecord<K> {
  const spec = JSON.parse(openSecret(secretName(doc.kind, doc.name), doc.sealed)) as ConfigSpecs[K];
  const { kind, source, createdAt, updatedAt, seq } = doc;
  return { kind: kind as K, spec, source, createdAt, updatedAt, seq };
}

/** The next creation number; gaps are harmless, only the order matters. */
async function nextSeq(): Promise<number> {
  const counter = await Counter.findOneAndUpdate(
    { _id: 'escalation-config' },
    { $inc: { seq: 1 } },
    { upsert: true, returnDocument: 'after', lean: true },
  );
  return counter!.seq;
}

function findDocs(kind: ConfigKind, filter: Record<string, unknown>): Promise<StoredDoc[]> {
  return EscalationConfigModel.find({ kind, ...filter }, FIELDS)
    .sort(ORDER[kind])
    .lean<StoredDoc[]>()
    .exec();
}

async function findAll<K extends ConfigKind>(
  kind: K,
  filter: Record<string, unknown> = {},
): Promise<ConfigRecord<K>[]> {
  return (await findDocs(kind, filter)).map((d) => open<K>(d));
}

/**
 * What escalation reads: entries sealed with a key this process no longer has are left out
 * (one unreadable policy must not stop every incident from being paged; the API still shows
 * the error for it).
 */
async function findReadable<K extends ConfigKind>(
  kind: K,
  filter: Record<string, unknown> = {},
): Promise<ConfigRecord<K>[]> {
  const docs = await findDocs(kind, filter);
  return docs.flatMap((d) => {
    try {
      return [open<K>(d)];
    } catch (err) {
      if (err instanceof SecretUnreadableError) return [];
      throw err;
    }
  });
}

// ---------------------------------------------------------------------------------------------
// What the escalation activities read
// ---------------------------------------------------------------------------------------------

/** Every stored policy, in the order they are tried: priority, then creation. */
export async function listPolicies(): Promise<EscalationPolicy[]> {
  return (await findReadable('policy')).map((r) => r.spec);
}

/** The stored policy, else the built-in one for `default` and `none`. */
export async function getPolicy(name: string): Promise<EscalationPolicy | undefined> {
  const stored = await getConfig('policy', name);
  if (stored) return stored.spec;
  if (name === DEFAULT_POLICY) return BUILTIN_DEFAULT_POLICY;
  if (name === NO_POLICY) return BUILTIN_NONE_POLICY;
  return undefined;
}

export async function getSchedule(name: string): Promise<OnCallSchedule | undefined> {
  return (await getConfig('schedule', name))?.spec;
}

export async function listSchedules(): Promise<OnCallSchedule[]> {
  return (await findAll('schedule')).map((r) => r.spec);
}

/** The maintenance window holding escalations in `namespace` at `at`, if any. */
export async function maintenanceAt(namespace: string, at: Date): Promise<MaintenanceWindow | undefined> {
  const candidates = await findReadable('maintenance', {
    namespace: { $in: [namespace, '*'] },
    from: { $lte: at },
    to: { $gt: at },
  });
  return activeMaintenance(
    candidates.map((r) => r.spec),
    namespace,
    at,
  );
}

// ---------------------------------------------------------------------------------------------
// The admin API
// ---------------------------------------------------------------------------------------------

export async function listConfig<K extends ConfigKind>(
  kind: K,
  page: number,
  pageSize: number,
): Promise<Page<ConfigRecord<K>>> {
  const [docs, totalCount] = await Promise.all([
    EscalationConfigModel.find({ kind }, FIELDS)
      .sort(ORDER[kind])
      .skip((page - 1) * pageSize)
      .limit(pageSize)
      .lean<StoredDoc[]>(),
    EscalationConfigModel.countDocuments({ kind }),
  ]);
  return { items: docs.map((d) => open<K>(d)), totalCount };
}

export async function getConfig<K extends ConfigKind>(kind: K, name: string): Promise<ConfigRecord<K> | undefined> {
  const doc = await EscalationConfigModel.findOne({ kind, name }, FIELDS).lean<StoredDoc>();
  return doc ? open<K>(doc) : undefined;
}

export type CreateConfigResult<K extends ConfigKind> =
  | { created: true; record: ConfigRecord<K> }
  /** The name is taken; `existing` is that entry (absent if it was deleted in the meantime). */
  | { created: false; existing?: ConfigRecord<K> };

/** Creates an entry (source `api`); the unique (kind, name) index settles concurrent creates. */
export async function createConfig<K extends ConfigKind>(
  kind: K,
  spec: ConfigSpecs[K],
  now: Date = new Date(),
): Promise<CreateConfigResult<K>> {
  refuseBuiltin(kind, spec.name);
  const record: ConfigRecord<K> = { kind, spec, source: 'api', createdAt: now, updatedAt: now, seq: await nextSeq() };
  try {
    await EscalationConfigModel.create({
      kind,
      name: spec.name,
      ...sealed(kind, spec),
      source: 'api',
      createdAt: now,
      updatedAt: now,
      seq: record.seq,
    });
    return { created: true, record };
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
    return { created: false, existing: await getConfig(kind, spec.name) };
  }
}

/** `provisioned`: the entry comes from the file, which alone may change it. */
export type ChangeConfigResult<K extends ConfigKind> =
  | { outcome: 'done'; record: ConfigRecord<K> }
  | { outcome: 'not-found' }
  | { outcome: 'provisioned'; record: ConfigRecord<K> };

/** Why an entry was not changed: gone, or provisioned from the file (read again to tell which). */
async function notChanged<K extends ConfigKind>(kind: K, name: string): Promise<ChangeConfigResult<K>> {
  const record = await getConfig(kind, name);
  return record ? { outcome: 'provisioned', record } : { outcome: 'not-found' };
}

/** Replaces the spec of an `api` entry (its name is `spec.name`); creation time and order are kept. */
export async function replaceConfig<K extends ConfigKind>(
  kind: K,
  spec: ConfigSpecs[K],
  now: Date = new Date(),
): Promise<ChangeConfigResult<K>> {
  refuseBuiltin(kind, spec.name);
  const doc = await EscalationConfigModel.findOneAndUpdate(
    { kind, name: spec.name, source: 'api' },
    { $set: { ...sealed(kind, spec), updatedAt: now } },
    { returnDocument: 'after', projection: FIELDS, lean: true },
  ).lean<StoredDoc>();
  if (!doc) return notChanged(kind, spec.name);
  const { source, createdAt, updatedAt, seq } = doc;
  return { outcome: 'done', record: { kind, spec, source, createdAt, updatedAt, seq } };
}

/** Deletes an `api` entry; answers what was deleted. */
export async function deleteConfig<K extends ConfigKind>(kind: K, name: string): Promise<ChangeConfigResult<K>> {
  const doc = await EscalationConfigModel.findOneAndDelete(
    { kind, name, source: 'api' },
    { projection: FIELDS },
  ).lean<StoredDoc>();
  return doc ? { outcome: 'done', record: open<K>(doc) } : notChanged(kind, name);
}

/** The stored policies with a level that pages schedule `name`. */
export async function policiesUsingSchedule(name: string): Promise<string[]> {
  return (await listPolicies())
    .filter((p) => p.levels.some((l) => l.targets.some((t) => 'schedule' in t && t.schedule === name)))
    .map((p) => p.name);
}

/** Which of these schedule names are not stored. */
export async function missingSchedules(names: readonly string[]): Promise<string[]> {
  const found = await EscalationConfigModel.find({ kind: 'schedule', name: { $in: names } }, { _id: 0, name: 1 }).lean<
    { name: string }[]
  >();
  const stored = new Set(found.map((d) => d.name));
  return [...new Set(names)].filter((n) => !stored.has(n));
}

/** The built-in `none` policy is not a stored entry and never becomes one. */
function refuseBuiltin(kind: ConfigKind, name: string): void {
  if (kind === 'policy' && name === NO_POLICY)
    throw new Error(`policy ${NO_POLICY} is built in (nobody is paged) and cannot be stored`);
}

// ---------------------------------------------------------------------------------------------
// Provisioning from FOGHORN_ESCALATION_FILE
// ---------------------------------------------------------------------------------------------

const sameSpec = (doc: StoredDoc, spec: ConfigSpecs[ConfigKind]) => {
  try {
    return canonicalJson(open(doc).spec) === canonicalJson(spec);
  } catch (err) {
    // Sealed with a key this process no longer has: the file's version replaces it.
    if (err instanceof SecretUnreadableError) return false;
    throw err;
  }
};

/**
 * Makes the stored `file` entries exactly the file's: new ones created, changed ones (or `api`
 * ones of the same name: the file wins) replaced, those no longer in the file removed; `api`
 * entries of other names are kept. Idempotent, and safe when several processes start at once:
 * an unchanged entry is not rewritten, and of two racing creates the unique index keeps one.
 */
export async function provisionEscalationFile(
  file: EscalationFile,
  now: Date = new Date(),
): Promise<{ created: number; updated: number; removed: number }> {
  const wanted = [
    ...file.policies.map((spec) => ({ kind: 'policy' as const, spec })),
    ...file.schedules.map((spec) => ({ kind: 'schedule' as const, spec })),
    ...file.maintenanceWindows.map((spec) => ({ kind: 'maintenance' as const, spec })),
  ];
  for (const { kind, spec } of wanted) refuseBuiltin(kind, spec.name);
  const stored = new Map(
    (await EscalationConfigModel.find({}, FIELDS).lean<StoredDoc[]>()).map((d) => [`${d.kind}/${d.name}`, d]),
  );
  let created = 0;
  let updated = 0;
  for (const { kind, spec } of wanted) {
    const doc = stored.get(`${kind}/${spec.name}`);
    if (doc?.source === 'file' && sameSpec(doc, spec)) continue;
    if (doc) {
      await EscalationConfigModel.updateOne(
        { kind, name: spec.name },
        { $set: { ...sealed(kind, spec), source: 'file', updatedAt: now } },
      );
      updated++;
      continue;
    }
    try {
      await EscalationConfigModel.create({
        kind,
        name: spec.name,
        ...sealed(kind, spec),
        source: 'file',
        createdAt: now,
        updatedAt: now,
        seq: await nextSeq(),
      });
      created++;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err; // another process provisioned it just now
    }
  }
  const kept = wanted.map(({ kind, spec }) => ({ kind, name: spec.name }));
  const { deletedCount } = await EscalationConfigModel.deleteMany(
    kept.length ? { source: 'file', $nor: kept } : { source: 'file' },
  );
  return { created, updated, removed: deletedCount };
}
