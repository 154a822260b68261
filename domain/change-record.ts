import type { Change, ChangeAuthor, FieldChange } from './changes';
import { RESTARTED_AT_ANNOTATION } from './kube-actions';

/**
 * From Kubernetes objects to change records (domain/changes.ts), pure: what differs between two
 * pod templates, whether a new template is only a restart, who made a change as far as the
 * object says, which ConfigMaps and Secrets a template reads. The watcher
 * (activities/kube-watch/changes.ts) hands in the objects it sees.
 */

/** Foghorn's field manager on every write it makes to a cluster. */
export const FOGHORN_FIELD_MANAGER = 'foghorn';
export const CHANGE_CAUSE = 'kubernetes.io/change-cause';
/** Bounded: a change record rides in evidence, insights and workflow payloads. */
const MAX_DIFF = 30;
const MAX_TEXT = 160;

// Structural shapes of the objects (client-node's types fit).
interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    configMapKeyRef?: { name?: string; key?: string };
    secretKeyRef?: { name?: string; key?: string };
  };
}
interface Container {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  env?: EnvVar[];
  envFrom?: { configMapRef?: { name?: string }; secretRef?: { name?: string } }[];
  resources?: { limits?: Record<string, unknown>; requests?: Record<string, unknown> };
  livenessProbe?: unknown;
  readinessProbe?: unknown;
  startupProbe?: unknown;
}
interface Volume {
  name: string;
  configMap?: { name?: string };
  secret?: { secretName?: string };
  projected?: { sources?: { configMap?: { name?: string }; secret?: { name?: string } }[] };
  [source: string]: unknown;
}
export interface PodTemplate {
  metadata?: { annotations?: Record<string, string>; labels?: Record<string, string> };
  spec?: { containers?: Container[]; initContainers?: Container[]; volumes?: Volume[] };
}
export interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  time?: Date | string;
  fieldsV1?: unknown;
}
export interface ObjectMeta {
  name?: string;
  namespace?: string;
  annotations?: Record<string, string>;
  labels?: Record<string, string>;
  creationTimestamp?: Date | string;
  managedFields?: ManagedFieldsEntry[];
  resourceVersion?: string;
}

const clip = (s: string) => (s.length > MAX_TEXT ? `${s.slice(0, MAX_TEXT - 1)}…` : s);
const text = (v: unknown) => (v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v));
const asTime = (t: Date | string | undefined) => (t === undefined ? NaN : new Date(t).getTime());

/** Keys in sorted order, so a probe written in another key order is no change. */
function canonical(v: unknown): string {
  if (v === undefined) return '';
  return JSON.stringify(v, (_k, val: unknown) =>
    val && typeof val === 'object' && !Array.isArray(val)
      ? Object.fromEntries(Object.entries(val as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)))
      : val,
  );
}

/** An env var's value as a change record may show it: names only for values from elsewhere or secrets. */
function envShape(e: EnvVar): string {
  if (e.valueFrom?.secretKeyRef) return `from Secret ${e.valueFrom.secretKeyRef.name ?? ''}`;
  if (e.valueFrom?.configMapKeyRef) return `from ConfigMap ${e.valueFrom.configMapKeyRef.name ?? ''}`;
  if (e.valueFrom) return 'from a field';
  return 'a value';
}

function containerDiff(prefix: string, a: Container | undefined, b: Container | undefined): FieldChange[] {
  const name = (a ?? b)!.name;
  if (!a) return [{ field: `${prefix} ${name}`, from: '', to: `added (image ${b!.image ?? ''})` }];
  if (!b) return [{ field: `${prefix} ${name}`, from: `image ${a.image ?? ''}`, to: 'removed' }];
  const out: FieldChange[] = [];
  const add = (field: string, from: string, to: string) => {
    if (from !== to) out.push({ field: `${field} ${name}`, from: clip(from), to: clip(to) });
  };
  add('image', a.image ?? '', b.image ?? '');
  add('command', text(a.command), text(b.command));
  add('args', text(a.args), text(b.args));
  for (const kind of ['limits', 'requests'] as const) {
    const keys = new Set([...Object.keys(a.resources?.[kind] ?? {}), ...Object.keys(b.resources?.[kind] ?? {})]);
    for (const k of [...keys].sort())
      add(`${kind}.${k}`, text(a.resources?.[kind]?.[k]), text(b.resources?.[kind]?.[k]));
  }
  for (const probe of ['livenessProbe', 'readinessProbe', 'startupProbe'] as const)
    if (canonical(a[probe]) !== canonical(b[probe]))
      out.push({
        field: `${probe} ${name}`,
        from: a[probe] ? 'set' : '',
        to: b[probe] ? (a[probe] ? 'changed' : 'set') : 'removed',
      });
  // Env: names only. A plain value's change says "changed", never the value (it may be a secret).
  const envA = new Map((a.env ?? []).map((e) => [e.name, e]));
  const envB = new Map((b.env ?? []).map((e) => [e.name, e]));
  const added = [...envB.keys()].filter((k) => !envA.has(k));
  const removed = [...envA.keys()].filter((k) => !envB.has(k));
  const changed = [...envB.keys()].filter((k) => envA.has(k) && canonical(envA.get(k)) !== canonical(envB.get(k)));
  if (added.length) out.push({ field: `env ${name}`, from: '', to: `added ${added.sort().join(', ')}` });
  if (removed.length) out.push({ field: `env ${name}`, from: `removed ${removed.sort().join(', ')}`, to: '' });
  for (const k of changed.sort())
    out.push({
      field: `env ${name}`,
      from: `${k} (${envShape(envA.get(k)!)})`,
      to: `${k} changed (${envShape(envB.get(k)!)})`,
    });
  if (canonical(a.envFrom) !== canonical(b.envFrom))
    out.push({ field: `envFrom ${name}`, from: envFromText(a), to: envFromText(b) });
  return out;
}

const envFromText = (c: Container) =>
  (c.envFrom ?? [])
    .map((s) =>
      s.configMapRef ? `ConfigMap/${s.configMapRef.name}` : s.secretRef ? `Secret/${s.secretRef.name}` : '?',
    )
    .join(', ');

function volumeText(v: Volume): string {
  if (v.configMap) return `ConfigMap/${v.configMap.name ?? ''}`;
  if (v.secret) return `Secret/${v.secret.secretName ?? ''}`;
  const kind = Object.keys(v).find((k) => k !== 'name');
  return kind ?? 'volume';
}

function byName<T extends { name: string }>(xs: T[] | undefined): Map<string, T> {
  return new Map((xs ?? []).map((x) => [x.name, x]));
}

/** What differs between two pod templates, in the fields that decide what runs. Annotations and labels are left out. */
export function templateDiff(before: PodTemplate, after: PodTemplate): FieldChange[] {
  const out: FieldChange[] = [];
  for (const [prefix, key] of [
    ['container', 'containers'],
    ['initContainer', 'initContainers'],
  ] as const) {
    const a = byName(before.spec?.[key]);
    const b = byName(after.spec?.[key]);
    for (const name of new Set([...a.keys(), ...b.keys()]))
      out.push(...containerDiff(prefix, a.get(name), b.get(name)));
  }
  const va = byName(before.spec?.volumes);
  const vb = byName(after.spec?.volumes);
  for (const name of [...new Set([...va.keys(), ...vb.keys()])].sort()) {
    const a = va.get(name);
    const b = vb.get(name);
    if (canonical(a) !== canonical(b))
      out.push({ field: `volume ${name}`, from: a ? volumeText(a) : '', to: b ? volumeText(b) : 'removed' });
  }
  return out.slice(0, MAX_DIFF);
}

/**
 * What a template runs, as text: equal for two templates that differ only in the restart
 * annotation or the controllers' own labels. A restart is not a new version of a workload.
 */
export function templateVersion(t: PodTemplate): string {
  const annotations = { ...t.metadata?.annotations };
  delete annotations[RESTARTED_AT_ANNOTATION]; // a restart, not a change of what runs
  // The controllers' own labels differ with every template (a ReplicaSet's pod-template-hash).
  const labels = { ...t.metadata?.labels };
  delete labels['pod-template-hash'];
  delete labels['controller-revision-hash'];
  return canonical({ ...t, metadata: { ...t.metadata, annotations, labels } });
}

/** Whether the only difference between two templates is the restart annotation (or nothing). */
export function isRestartOnly(before: PodTemplate, after: PodTemplate): boolean {
  return templateVersion(before) === templateVersion(after);
}

/** The images of a template's containers, `name=image`. */
export const imagesOf = (t: PodTemplate): string[] =>
  (t.spec?.containers ?? []).map((c) => `${c.name}=${c.image ?? ''}`);

/** The ConfigMaps and Secrets a template mounts or reads (`ConfigMap/<name>`, `Secret/<name>`), sorted. */
export function configRefs(t: PodTemplate): string[] {
  const refs = new Set<string>();
  for (const v of t.spec?.volumes ?? []) {
    if (v.configMap?.name) refs.add(`ConfigMap/${v.configMap.name}`);
    if (v.secret?.secretName) refs.add(`Secret/${v.secret.secretName}`);
    for (const s of v.projected?.sources ?? []) {
      if (s.configMap?.name) refs.add(`ConfigMap/${s.configMap.name}`);
      if (s.secret?.name) refs.add(`Secret/${s.secret.name}`);
    }
  }
  for (const c of [...(t.spec?.containers ?? []), ...(t.spec?.initContainers ?? [])]) {
    for (const f of c.envFrom ?? []) {
      if (f.configMapRef?.name) refs.add(`ConfigMap/${f.configMapRef.name}`);
      if (f.secretRef?.name) refs.add(`Secret/${f.secretRef.name}`);
    }
    for (const e of c.env ?? []) {
      if (e.valueFrom?.configMapKeyRef?.name) refs.add(`ConfigMap/${e.valueFrom.configMapKeyRef.name}`);
      if (e.valueFrom?.secretKeyRef?.name) refs.add(`Secret/${e.valueFrom.secretKeyRef.name}`);
    }
  }
  return [...refs].sort();
}

// ---------------------------------------------------------------------------------------------
// Who changed it
// ---------------------------------------------------------------------------------------------

/** Whether a managedFields entry owns any field under `path` (e.g. `spec`, `template`). */
function owns(fieldsV1: unknown, path: string[]): boolean {
  let node = fieldsV1 as Record<string, unknown> | undefined;
  for (const p of path) {
    node = node?.[`f:${p}`] as Record<string, unknown> | undefined;
    if (!node) return false;
  }
  return true;
}

/**
 * The source a GitOps or release tool names on the object: Argo CD's tracking, Flux's revision
 * annotations, Helm's chart label. '' when none does.
 */
export function sourceOf(meta: ObjectMeta | undefined): string {
  const a = meta?.annotations ?? {};
  const l = meta?.labels ?? {};
  const argoRevision = a['argocd.argoproj.io/revision'] ?? a['argocd.argoproj.io/sync-revision'];
  if (argoRevision) return `argocd revision ${argoRevision}`;
  if (a['argocd.argoproj.io/tracking-id']) return `argocd ${a['argocd.argoproj.io/tracking-id']}`;
  const flux = a['kustomize.toolkit.fluxcd.io/revision'] ?? a['helm.toolkit.fluxcd.io/revision'];
  if (flux) return `flux ${flux}`;
  if (l['kustomize.toolkit.fluxcd.io/name'])
    return `flux kustomization ${l['kustomize.toolkit.fluxcd.io/namespace'] ?? ''}/${l['kustomize.toolkit.fluxcd.io/name']}`;
  if (l['helm.sh/chart'])
    return `helm chart ${l['helm.sh/chart']}${a['meta.helm.sh/release-name'] ? ` (release ${a['meta.helm.sh/release-name']})` : ''}`;
  return '';
}

/**
 * The managedFields entry that owns the fields under `path`: a field is owned by the manager that
 * last changed its value. Entries written after `notAfter` are left out; an entry without a time
 * (the API server leaves it out for some subresource writes) counts as the newest.
 */
export function ownerOf(
  meta: ObjectMeta | undefined,
  path: string[],
  notAfter = Infinity,
): ManagedFieldsEntry | undefined {
  const timeOf = (m: ManagedFieldsEntry) => (m.time === undefined ? Infinity : asTime(m.time));
  return (meta?.managedFields ?? [])
    .filter((m) => owns(m.fieldsV1, path) && (m.time === undefined || asTime(m.time) <= notAfter))
    .sort((x, y) => timeOf(y) - timeOf(x))[0];
}

/**
 * Who made a change as far as the object says: the owner of the fields under `path` (the
 * template for a rollout, `replicas` for a scale, `data` for a ConfigMap) no later than `graceMs`
 * after the change reached the cluster; the change-cause; the GitOps source.
 */
export function authorOf(
  meta: ObjectMeta | undefined,
  path: string[],
  at: Date,
  changeCause = meta?.annotations?.[CHANGE_CAUSE] ?? '',
  graceMs = 5_000,
): ChangeAuthor {
  const manager = ownerOf(meta, path, at.getTime() + graceMs)?.manager ?? '';
  return {
    manager,
    changeCause: clip(changeCause),
    source: clip(sourceOf(meta)),
    foghorn: manager === FOGHORN_FIELD_MANAGER,
  };
}

/** The last write to the object: the newest managedFields time, else its creation. */
export function lastWriteOf(meta: ObjectMeta | undefined, fallback: Date): Date {
  const times = (meta?.managedFields ?? []).map((m) => asTime(m.time)).filter((t) => !Number.isNaN(t));
  const created = asTime(meta?.creationTimestamp);
  const t = times.length > 0 ? Math.max(...times) : created;
  return Number.isNaN(t) ? fallback : new Date(t);
}

// ---------------------------------------------------------------------------------------------
// Changes
// ---------------------------------------------------------------------------------------------

const describeDiff = (diff: FieldChange[]) =>
  diff
    .slice(0, 3)
    .map((d) => `${d.field}${d.from || d.to ? ` ${d.from || '∅'} → ${d.to || '∅'}` : ''}`)
    .join('; ') + (diff.length > 3 ? ` and ${diff.length - 3} more` : '');

export interface RevisionChangeInput {
  cluster: string;
  namespace: string;
  /** `Deployment/<name>`, `StatefulSet/<name>`, `DaemonSet/<name>`. */
  workload: string;
  revision: number;
  previousRevision?: number;
  template: PodTemplate;
  previousTemplate?: PodTemplate;
  /** When the revision reached the cluster. */
  at: Date;
  by: ChangeAuthor;
}

/** A new revision of a workload: a rollout, or a restart when only the restart annotation differs. */
export function revisionChange(r: RevisionChangeInput): Change {
  const restart = r.previousTemplate !== undefined && isRestartOnly(r.previousTemplate, r.template);
  const diff = r.previousTemplate ? templateDiff(r.previousTemplate, r.template) : [];
  const of = `${r.namespace}/${r.workload}`;
  const replaced = r.previousRevision !== undefined ? ` replaced ${r.previousRevision}` : '';
  const summary = restart
    ? `restart of ${of}: revision ${r.revision}${replaced}, same template`
    : `revision ${r.revision} of ${of}${replaced}${diff.length > 0 ? `: ${describeDiff(diff)}` : r.previousTemplate ? ': only annotations or labels differ' : ' (first revision seen)'}`;
  return {
    id: `${r.cluster}|${of}|revision|${r.revision}`,
    cluster: r.cluster,
    namespace: r.namespace,
    resource: r.workload,
    type: restart ? 'Restart' : 'Rollout',
    at: r.at,
    revision: r.revision,
    ...(r.previousRevision !== undefined && { previousRevision: r.previousRevision }),
    summary: clip(summary),
    diff,
    by: r.by,
    workloads: [r.workload],
  };
}

export function scaleChange(
  cluster: string,
  namespace: string,
  workload: string,
  generation: number,
  from: number,
  to: number,
  at: Date,
  by: ChangeAuthor,
): Change {
  return {
    id: `${cluster}|${namespace}/${workload}|scale|${generation}`,
    cluster,
    namespace,
    resource: workload,
    type: 'Scale',
    at,
    summary: `${namespace}/${workload} scaled from ${from} to ${to} replicas`,
    diff: [{ field: 'replicas', from: String(from), to: String(to) }],
    by,
    workloads: [workload],
  };
}

/**
 * A ConfigMap's or Secret's content changed. Only content hashes (keyed: see the watcher) ever
 * appear, and key names for ConfigMaps: never a Secret's content.
 */
export function configChange(
  cluster: string,
  namespace: string,
  object: string,
  resourceVersion: string,
  fromHash: string,
  toHash: string,
  keys: { added: string[]; removed: string[]; changed: string[] },
  workloads: string[],
  at: Date,
  by: ChangeAuthor,
): Change {
  const diff: FieldChange[] = [{ field: 'content hash', from: fromHash, to: toHash }];
  if (keys.added.length) diff.push({ field: 'keys', from: '', to: `added ${keys.added.join(', ')}` });
  if (keys.removed.length) diff.push({ field: 'keys', from: `removed ${keys.removed.join(', ')}`, to: '' });
  if (keys.changed.length) diff.push({ field: 'keys', from: '', to: `changed ${keys.changed.join(', ')}` });
  const read =
    workloads.length > 0 ? `, read by ${workloads.slice(0, 3).join(', ')}${workloads.length > 3 ? '…' : ''}` : '';
  return {
    id: `${cluster}|${namespace}/${object}|content|${resourceVersion}`,
    cluster,
    namespace,
    resource: object,
    type: 'Config',
    at,
    summary: clip(
      `${namespace}/${object} changed${keys.changed.length ? ` (keys ${keys.changed.join(', ')})` : ''}${read}`,
    ),
    diff: diff.slice(0, MAX_DIFF),
    by,
    workloads,
  };
}

export function nodeConditionChange(
  cluster: string,
  node: string,
  condition: string,
  from: string,
  to: string,
  reason: string,
  at: Date,
): Change {
  return {
    id: `${cluster}|/Node/${node}|${condition}|${to}|${at.toISOString()}`,
    cluster,
    namespace: '',
    resource: `Node/${node}`,
    type: 'NodeCondition',
    at,
    summary: clip(`node ${node} ${condition} ${from || 'unknown'} → ${to}${reason ? ` (${reason})` : ''}`),
    diff: [{ field: condition, from, to }],
    by: { manager: '', changeCause: '', source: '', foghorn: false },
    workloads: [],
  };
}

/** Keys added, removed and changed between two key → hash maps (a key starting with NUL is no key: nothing is said). */
export function keyChanges(before: Record<string, string>, after: Record<string, string>) {
  if (Object.keys(before).some((k) => k.startsWith('\0'))) return { added: [], removed: [], changed: [] };
  const added = Object.keys(after).filter((k) => !(k in before));
  const removed = Object.keys(before).filter((k) => !(k in after));
  const changed = Object.keys(after).filter((k) => k in before && before[k] !== after[k]);
  return { added: added.sort(), removed: removed.sort(), changed: changed.sort() };
}
