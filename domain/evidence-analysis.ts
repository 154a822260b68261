import type { Change, RevisionHealth } from './changes';
import { formatDuration } from './duration';
import type { EvidenceItem, IncidentEvidence, PodEvidence, SuspectedChange } from './evidence';

/**
 * Reasoning over evidence (domain/evidence.ts), pure: which change most likely introduced the
 * failure, the citable items, what the logs say, and the recommendations the evidence supports.
 * The rules analyzer uses it directly; the LLM gets the same evidence and the same texts
 * (activities/llm.ts). Never concludes from events alone: without a change, a termination or a
 * log line, it says so (HolmesGPT's rule).
 */

/** Changes this long before the first failure are still looked at. */
export const EVIDENCE_WINDOW_MS = 2 * 60 * 60_000;
/** Clock skew between the API server and the first signal: a change this little after it still counts. */
const SKEW_MS = 5_000;
const MAX_LOG_LINES = 5;
/** Below this a change is listed as a candidate, never named as the suspect. */
const SUSPECT_THRESHOLD = 0.45;

/** What the failure looks like, for matching a change against it. */
export interface FailureShape {
  signalType: string;
  /** OOMKilled, Error, ImagePullBackOff, NodeNotReady … from the pods' last termination or waiting reason. */
  reasons: string[];
  /** The images the failing pods run (`container=image`). */
  failingImages: string[];
  firstSignalAt: Date;
}

/** How strongly a change of this kind explains a failure of that kind, in [0, 1]. */
function fit(change: Change, failure: FailureShape, revisions: RevisionHealth[]): { score: number; why: string } {
  const fields = change.diff.map((d) => d.field.split(' ')[0]);
  const has = (f: string) => fields.some((x) => x === f || x.startsWith(f));
  const reasons = new Set([failure.signalType, ...failure.reasons]);
  const failed = revisions.find((r) => r.revision === change.revision && r.state === 'Failed');
  const provenHealthy = revisions.some((r) => r.revision === change.revision && r.state === 'Healthy');
  const runsIt =
    change.revision !== undefined &&
    revisions.some((r) => r.revision === change.revision && r.images.some((i) => failure.failingImages.includes(i)));
  switch (change.type) {
    case 'Rollout': {
      if (reasons.has('OOMKilled') && has('limits.memory'))
        return { score: 0.95, why: 'the memory limit changed and the containers are OOMKilled' };
      if ((reasons.has('ImagePullBackOff') || reasons.has('ErrImagePull')) && has('image'))
        return { score: 0.95, why: 'the image changed and the new image does not pull' };
      // A revision Foghorn saw healthy was not broken by its own rollout: what changed since was.
      if (provenHealthy)
        return { score: 0.25, why: `revision ${change.revision} ran healthy before the failure began` };
      if (failed || runsIt)
        return {
          score: 0.9,
          why: `the failing pods run revision ${change.revision}${failed ? `, which Foghorn saw fail (${failed.failure?.signal ?? 'failed'})` : ''}`,
        };
      if (change.previousRevision === undefined)
        return { score: 0.4, why: 'the first revision Foghorn saw of this workload' };
      return { score: 0.6, why: 'a rollout of this workload shortly before the failure' };
    }
    case 'Config':
      return { score: 0.8, why: `${change.resource} is read by the workload and its content changed` };
    case 'NodeCondition':
      return reasons.has('NodeNotReady') || failure.signalType === 'Custom'
        ? { score: 0.9, why: 'the node condition changed as the failure began' }
        : { score: 0.5, why: 'a node the pods run on changed condition' };
    case 'Scale':
      return { score: 0.35, why: 'a scale change; more replicas rarely make pods crash' };
    case 'Restart':
      return { score: 0.2, why: 'a restart runs the same template: it rarely causes a failure' };
  }
}

/** Confidence falls with the time between the change and the failure: full within 10 min, half at 2 h. */
function nearness(leadMs: number): number {
  const tenMin = 10 * 60_000;
  if (leadMs <= tenMin) return 1;
  return Math.max(0.5, 1 - (0.5 * (leadMs - tenMin)) / (EVIDENCE_WINDOW_MS - tenMin));
}

/**
 * The changes of the window ranked, most likely cause first: fit with the failure times nearness.
 * Foghorn's own actions never count as a cause (they come after detection anyway, and an earlier
 * incident's remediation is not this one's cause).
 */
export function rankChanges(
  changes: Change[],
  failure: FailureShape,
  revisions: RevisionHealth[],
): { change: Change; confidence: number; why: string; leadMs: number }[] {
  const first = failure.firstSignalAt.getTime();
  return changes
    .filter((c) => !c.by.foghorn)
    .map((change) => {
      const leadMs = first - new Date(change.at).getTime();
      const { score, why } = fit(change, failure, revisions);
      return { change, leadMs, why, confidence: Math.round(score * nearness(Math.max(0, leadMs)) * 100) / 100 };
    })
    .filter((r) => r.leadMs >= -SKEW_MS && r.leadMs <= EVIDENCE_WINDOW_MS)
    .sort((a, b) => b.confidence - a.confidence || a.leadMs - b.leadMs);
}

/** "6 s", "4m5s" — how long before the failure. */
export const leadText = (ms: number) => (ms <= 0 ? 'as' : `${formatDuration(Math.round(ms / 1000) * 1000)} before`);

/** The suspect: the best-ranked change, when it explains the failure well enough to name. */
export function suspectOf(ranked: ReturnType<typeof rankChanges>, evidenceId: string): SuspectedChange | undefined {
  const best = ranked[0];
  if (!best || best.confidence < SUSPECT_THRESHOLD) return undefined;
  const c = best.change;
  return {
    change: c.id,
    resource: c.resource,
    type: c.type,
    ...(c.revision !== undefined && { revision: c.revision }),
    ...(c.previousRevision !== undefined && { previousRevision: c.previousRevision }),
    summary: c.summary,
    at: new Date(c.at),
    leadMs: Math.max(0, best.leadMs),
    confidence: best.confidence,
    reason: `${best.why}; it reached the cluster ${leadText(best.leadMs)} the first failure`,
    by: c.by,
    evidence: evidenceId,
  };
}

const ERROR_LINE =
  /\b(error|exception|fatal|panic|fail(ed|ure)?|denied|refused|unable|cannot|can't|oom|out of memory|killed|timeout|timed out|no such|not found|invalid|segfault)\b/i;

/** The log lines that matter: those that read as errors, last first kept, at most a handful per pod. */
export function errorLines(lines: string[]): string[] {
  const errors = lines.filter((l) => ERROR_LINE.test(l));
  return (errors.length > 0 ? errors : []).slice(-MAX_LOG_LINES);
}

const termination = (p: PodEvidence) =>
  p.lastTermination
    ? `last terminated ${p.lastTermination.reason || 'with no reason'} (exit code ${p.lastTermination.exitCode})`
    : '';

/** The citable items, numbered in the order the analysis uses them. */
export function evidenceItems(
  e: Omit<IncidentEvidence, 'items' | 'suspect'>,
  ranked: ReturnType<typeof rankChanges>,
): EvidenceItem[] {
  const items: Omit<EvidenceItem, 'id'>[] = [];
  for (const r of ranked.slice(0, 3))
    items.push({
      kind: 'change',
      summary: `${r.change.summary} — reached the cluster ${leadText(r.leadMs)} the first failure${r.change.by.manager ? ` (by ${r.change.by.manager})` : ''}`,
      at: new Date(r.change.at),
    });
  for (const rev of e.revisions.slice(0, 3))
    items.push({
      kind: 'revision',
      summary: `revision ${rev.revision} (${rev.images.join(', ')}): ${rev.state}${rev.state === 'Failed' && rev.failure ? ` — ${rev.failure.signal}${rev.failure.exitCode !== undefined ? `, exit code ${rev.failure.exitCode}` : ''}` : ''}`,
      ...(rev.healthyAt && { at: new Date(rev.healthyAt) }),
    });
  for (const p of e.pods) {
    if (p.lastTermination || p.waitingReason || p.restarts > 0)
      items.push({
        kind: 'termination',
        summary: `pod ${p.name}: ${[p.waitingReason, termination(p), `${p.restarts} restarts`].filter(Boolean).join(', ')}`,
        ...(p.lastTermination?.at && { at: new Date(p.lastTermination.at) }),
      });
    const lines = errorLines([...p.previousLogs, ...p.currentLogs]);
    if (lines.length > 0) items.push({ kind: 'logs', summary: `pod ${p.name} logs: ${lines.join(' | ')}` });
  }
  for (const ev of e.events.slice(0, 3))
    items.push({
      kind: 'events',
      summary: `${ev.object}: ${ev.reason} ×${ev.count} — ${ev.message}`,
      ...(ev.at && { at: ev.at }),
    });
  for (const n of e.nodes.filter((n) => n.ready !== 'True'))
    items.push({
      kind: 'node',
      summary: `node ${n.name} Ready=${n.ready}${n.conditions.length ? ` (${n.conditions.join(', ')})` : ''}`,
    });
  if (e.replicas)
    items.push({
      kind: 'replicas',
      summary: `${e.replicas.available} of ${e.replicas.desired} replicas available, ${e.replicas.updated} updated`,
    });
  return items.map((item, i) => ({ id: `E${i + 1}`, ...item }));
}

/** Ids of the items of a kind (or matching), for citations. */
export const cite = (items: EvidenceItem[], pred: (i: EvidenceItem) => boolean) => items.filter(pred).map((i) => i.id);

/** Whether the evidence can carry a conclusion: a change, a termination or a log line, not events alone. */
export function conclusive(e: IncidentEvidence): boolean {
  return e.items.some((i) => i.kind === 'change' || i.kind === 'termination' || i.kind === 'logs' || i.kind === 'node');
}

/** `gitOpsContext`: the suspected change, or that none was found, and where the answer came from. */
export function gitOpsContextOf(e: IncidentEvidence, resource: string): string {
  if (e.suspect) {
    const s = e.suspect;
    const by = [s.by.manager && `by ${s.by.manager}`, s.by.changeCause && `"${s.by.changeCause}"`, s.by.source]
      .filter(Boolean)
      .join(', ');
    return `Suspected change (${Math.round(s.confidence * 100)}%, evidence ${s.evidence}): ${s.summary} — reached the cluster ${leadText(s.leadMs)} the first failure at ${e.firstSignalAt.toISOString()}${by ? ` (${by})` : ''}. ${s.reason}.`;
  }
  const window = formatDuration(e.windowMs);
  const others = e.changes.filter((c) => !c.by.foghorn).length;
  return others > 0
    ? `No change in the ${window} before the first failure explains it well enough to name (${others} weak candidate${others === 1 ? '' : 's'} listed in the evidence).`
    : `No change to ${resource}, what it reads or its nodes reached the cluster in the ${window} before the first failure at ${e.firstSignalAt.toISOString()}.`;
}

/** `logAnalysis`: the error lines that matter, per pod, and the termination facts. */
export function logAnalysisOf(e: IncidentEvidence): string {
  const parts: string[] = [];
  for (const p of e.pods) {
    const lines = errorLines([...p.previousLogs, ...p.currentLogs]);
    const term = termination(p);
    if (lines.length === 0 && !term) continue;
    parts.push(
      `${p.name}${term ? ` ${term}` : ''}${lines.length ? `; error lines: ${lines.map((l) => `"${l}"`).join(', ')}` : '; no error lines in its logs'}`,
    );
  }
  if (parts.length > 0) return parts.join('. ') + '.';
  const noLogs = e.notes.find((n) => n.includes('log'));
  return e.pods.length > 0 ? `No error lines in the failing pods' logs${noLogs ? ` (${noLogs})` : ''}.` : '';
}

/** The last revision Foghorn saw healthy before the suspect's, when there is one. */
export function lastHealthyBefore(
  revisions: RevisionHealth[],
  revision: number | undefined,
): RevisionHealth | undefined {
  return revisions
    .filter((r) => r.state === 'Healthy' && (revision === undefined || r.revision < revision))
    .sort((a, b) => b.revision - a.revision)[0];
}

/**
 * The recommendations the evidence supports, each citing its items; empty when the evidence
 * supports none (the signal's generic checks then stand alone, marked as such).
 */
export function evidenceRecommendations(e: IncidentEvidence, resource: string): string[] {
  const out: string[] = [];
  const ids = (kinds: string[]) =>
    cite(e.items, (i) => kinds.includes(i.kind))
      .slice(0, 4)
      .join(', ');
  const s = e.suspect;
  if (s && (s.type === 'Rollout' || s.type === 'Restart') && s.revision !== undefined) {
    const good = lastHealthyBefore(e.revisions, s.revision);
    out.push(
      good
        ? `Roll ${resource} back to revision ${good.revision} (${good.images.join(', ')}), the last revision Foghorn saw healthy: the failure began ${leadText(s.leadMs)} revision ${s.revision} replaced ${s.previousRevision ?? 'it'} (evidence ${ids(['change', 'revision', 'termination', 'logs'])}).`
        : `Revision ${s.revision} is the suspect, but Foghorn has seen no earlier revision of ${resource} healthy: check the previous revision before rolling back to it (evidence ${ids(['change', 'revision'])}).`,
    );
  } else if (s?.type === 'Config') {
    out.push(
      `Revert ${s.resource} to its previous content and restart ${resource}: the failure began ${leadText(s.leadMs)} it changed (evidence ${ids(['change', 'termination', 'logs'])}).`,
    );
  } else if (s?.type === 'NodeCondition') {
    out.push(
      `Move the workload off the affected node (cordon and drain) and check the node: ${s.summary} (evidence ${ids(['change', 'node'])}).`,
    );
  }
  const oom = e.pods.find((p) => p.lastTermination?.reason === 'OOMKilled');
  if (oom && s?.type !== 'Rollout')
    out.push(
      `Raise the memory limit of ${resource}: its containers are OOMKilled (exit code 137) with no change that lowered it (evidence ${ids(['termination'])}).`,
    );
  const logs = cite(e.items, (i) => i.kind === 'logs');
  if (logs.length > 0)
    out.push(
      `Read the error lines of the crashed containers first: they say why the process exits (evidence ${logs.join(', ')}).`,
    );
  if (!conclusive(e))
    out.push(
      `Inconclusive: the evidence holds ${e.items.length === 0 ? 'nothing beyond the signal' : 'events only'}; check the pods' logs and recent changes by hand before acting.`,
    );
  return out;
}
