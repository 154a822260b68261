import type { Insight } from './types';

/**
 * The change record (`GET /changes`, contracts/changes.ts) and an insight's cluster evidence
 * (domain/evidence.ts) as the API serves them, with the pure helpers the incident page uses.
 */

export interface ChangeAuthor {
  manager: string;
  changeCause: string;
  source: string;
  foghorn: boolean;
}

export interface RevisionHealth {
  state: 'Progressing' | 'Healthy' | 'Failed' | 'Unobserved';
  healthyAt?: string;
  failure?: { signal: string; reason: string; exitCode?: number; at: string };
  images: string[];
}

export interface Change {
  id: string;
  cluster: string;
  namespace: string;
  resource: string;
  type: 'Rollout' | 'Restart' | 'Scale' | 'Config' | 'NodeCondition';
  at: string;
  revision?: number;
  previousRevision?: number;
  summary: string;
  diff: { field: string; from: string; to: string }[];
  by: ChangeAuthor;
  workloads: string[];
  revisionHealth?: RevisionHealth;
}

export interface SuspectedChange {
  change: string;
  resource: string;
  type: Change['type'];
  revision?: number;
  previousRevision?: number;
  summary: string;
  at: string;
  leadMs: number;
  confidence: number;
  reason: string;
  by: ChangeAuthor;
  /** The id of the evidence item that names the change (`E1`). */
  evidence: string;
}

export interface PodEvidence {
  name: string;
  node: string;
  phase: string;
  restarts: number;
  waitingReason: string;
  lastTermination?: { reason: string; exitCode: number; at?: string };
  previousLogs: string[];
  currentLogs: string[];
}

export interface EvidenceItem {
  id: string;
  kind: string;
  summary: string;
  at?: string;
}

export interface Evidence {
  collectedAt: string;
  firstSignalAt: string;
  windowMs: number;
  ownerChain: string[];
  changes: Omit<Change, 'revisionHealth'>[];
  suspect?: SuspectedChange;
  revisions: { revision: number; state: RevisionHealth['state']; images: string[]; healthyAt?: string }[];
  pods: PodEvidence[];
  events: { object: string; reason: string; message: string; count: number; at?: string }[];
  nodes: { name: string; ready: string; conditions: string[] }[];
  replicas?: { desired: number; available: number; updated: number };
  items: EvidenceItem[];
  notes: string[];
}

/** The insight with the fields the incident page reads beyond the list's basics; `evidence` may be absent. */
export interface InsightWithEvidence extends Insight {
  logAnalysis?: string;
  gitOpsContext?: string;
  evidence?: Evidence | null;
}

/** How long the change record looks back before detection (the "What changed" panel). */
export const CHANGE_LOOKBACK_MS = 2 * 3600_000;

/** A span as people say it: `6 s`, `4 min 5 s`, `2 h 10 min`, `3 d 4 h`. */
export function span(ms: number): string {
  const s = Math.round(Math.abs(ms) / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 10) return s % 60 ? `${m} min ${s % 60} s` : `${m} min`;
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return m % 60 ? `${h} h ${m % 60} min` : `${h} h`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d} d ${h % 24} h` : `${d} d`;
}

/** `at` relative to `ref`: `6 s before detection`, `2 min after detection`, `at detection`. */
export function relativeTo(at: string, ref: string, what = 'detection'): string {
  const ms = new Date(ref).getTime() - new Date(at).getTime();
  if (Number.isNaN(ms)) return '';
  if (Math.abs(ms) < 500) return `at ${what}`;
  return `${span(ms)} ${ms > 0 ? 'before' : 'after'} ${what}`;
}

/** `<Kind>/<name>` as the change record names objects. */
const OBJECT = /^[A-Z][A-Za-z]+\/[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/**
 * The object whose changes concern the incident: the workload at the top of the evidence's owner
 * chain (a pod's Deployment) when there is one, else the incident's resource.
 */
export function changedObjectOf(resource: string, evidence?: Evidence | null): string {
  const top = evidence?.ownerChain?.[evidence.ownerChain.length - 1];
  return top && OBJECT.test(top) ? top : resource;
}

/** Evidence ids cited in a text: `E1`, `E12` as whole words. */
const CITED = /\bE\d+\b/g;

/** Text split around the evidence ids it cites, for linking: `[text, id?]` pairs in order. */
export function splitCitations(text: string, known: ReadonlySet<string>): { text: string; id?: string }[] {
  const parts: { text: string; id?: string }[] = [];
  let last = 0;
  for (const m of text.matchAll(CITED)) {
    if (!known.has(m[0])) continue;
    if (m.index > last) parts.push({ text: text.slice(last, m.index) });
    parts.push({ text: m[0], id: m[0] });
    last = m.index + m[0].length;
  }
  if (last < text.length) parts.push({ text: text.slice(last) });
  return parts;
}

/**
 * The analysis without the passages the page shows on their own (the root cause, the change
 * context), which the analyzers repeat inside it.
 */
export function analysisWithout(analysis: string, shown: string[]): string {
  let text = analysis;
  for (const part of shown.map((p) => p.trim()).filter(Boolean)) text = text.replace(part, '');
  return text.replace(/ {2,}/g, ' ').trim();
}

/** How the analyzers' `gitOpsContext` begins when there was no cluster evidence; the reason follows. */
export const NO_EVIDENCE = 'No cluster evidence: ';

/** The DOM id of an evidence item's anchor. */
export const evidenceAnchor = (id: string) => `evidence-${id}`;
