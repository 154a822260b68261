import type { RevisionHealth } from './changes';

/**
 * Which revision a rollback returns to (Argo Rollouts' stable ReplicaSet, Flux's last release
 * with no failed test): the newest revision Foghorn saw healthy, never one it saw fail and never
 * the template running now. Revisions are compared by what they run (domain/change-record.ts
 * `templateVersion`), so a restart of a revision is the same version as the revision: it
 * neither becomes a rollback target of its own nor hides that its template failed. Pure: the
 * activity lists the ReplicaSets and reads the verdicts (activities/kube-actions.ts).
 */

/** A ReplicaSet of the Deployment: a template it could return to. */
export interface RollbackCandidate {
  replicaSet: string;
  revision: number;
  templateHash: string;
  /** `templateVersion` of its template. */
  version: string;
  /** `container=image`. */
  images: string[];
}

/** What Foghorn has seen of a version across its revisions. */
export type VersionVerdict =
  { state: 'Healthy'; at: Date } | { state: 'Failed'; at: Date; signal: string } | { state: 'Unknown' };

export type RollbackChoice =
  { ok: true; target: RollbackCandidate; verdict: VersionVerdict; reason: string } | { ok: false; reason: string };

const time = (d: Date | string | undefined) => (d === undefined ? 0 : new Date(d).getTime());

/**
 * The verdict of one version from the revisions that ran it: failed when its latest proven
 * verdict is a failure (a template that ran healthy and later failed is not trusted again),
 * healthy when it ran healthy and never failed since, else unknown.
 */
export function versionVerdict(records: RevisionHealth[]): VersionVerdict {
  const healthy = records.filter((r) => r.state === 'Healthy');
  const failed = records.filter((r) => r.state === 'Failed' && r.failure);
  const lastHealthy = Math.max(0, ...healthy.map((r) => time(r.healthyAt ?? r.firstSeenAt)));
  const lastFailure = failed.sort((a, b) => time(b.failure!.at) - time(a.failure!.at))[0];
  if (lastFailure && (healthy.length === 0 || time(lastFailure.failure!.at) > lastHealthy))
    return { state: 'Failed', at: new Date(lastFailure.failure!.at), signal: lastFailure.failure!.signal };
  if (healthy.length > 0) return { state: 'Healthy', at: new Date(lastHealthy) };
  return { state: 'Unknown' };
}

/** The verdict records of the candidates that run `version` (by ReplicaSet, or by template hash). */
function recordsOf(version: string, candidates: RollbackCandidate[], health: RevisionHealth[]): RevisionHealth[] {
  const same = candidates.filter((c) => c.version === version);
  const sets = new Set(same.map((c) => c.replicaSet));
  const hashes = new Set(same.map((c) => c.templateHash).filter(Boolean));
  return health.filter((h) => sets.has(h.replicaSet) || (h.templateHash !== '' && hashes.has(h.templateHash)));
}

const describe = (c: RollbackCandidate) => `revision ${c.revision} (${c.images.join(', ')})`;

/**
 * The rollback target of `deployment` (`shop/checkout`): `toRevision` when a runbook names one
 * (it must exist, must not run the current template and must not be known to fail), else the
 * newest revision proven healthy that runs something other than the current template. Not ok,
 * with the reason, when there is none: then there is no rollback.
 */
export function chooseRollbackTarget(input: {
  deployment: string;
  currentVersion: string;
  candidates: RollbackCandidate[];
  health: RevisionHealth[];
  toRevision?: number;
}): RollbackChoice {
  const { deployment, currentVersion, candidates, health } = input;
  const verdictOf = (c: RollbackCandidate) => versionVerdict(recordsOf(c.version, candidates, health));
  const older = candidates.filter((c) => c.version !== currentVersion).sort((a, b) => b.revision - a.revision);
  const newestHealthy = older.find((c) => verdictOf(c).state === 'Healthy');
  const healthyText = (c: RollbackCandidate, at: Date) =>
    `${describe(c)}, ${c === newestHealthy ? 'the newest revision' : 'a revision'} Foghorn saw healthy (at ${at.toISOString()})`;
  if (input.toRevision !== undefined) {
    const named = candidates.find((c) => c.revision === input.toRevision);
    if (!named) return { ok: false, reason: `revision ${input.toRevision} of deployment ${deployment} not found` };
    if (named.version === currentVersion)
      return {
        ok: false,
        reason: `revision ${named.revision} of deployment ${deployment} runs the template running now: rolling back to it changes nothing`,
      };
    const verdict = verdictOf(named);
    if (verdict.state === 'Failed')
      return {
        ok: false,
        reason: `${describe(named)} of deployment ${deployment} is known to fail (${verdict.signal} at ${verdict.at.toISOString()}): Foghorn never rolls back to it`,
      };
    const reason =
      verdict.state === 'Healthy'
        ? healthyText(named, verdict.at)
        : `${describe(named)}, the revision the step names (Foghorn has not seen it run)`;
    return { ok: true, target: named, verdict, reason };
  }
  if (newestHealthy) {
    const verdict = verdictOf(newestHealthy) as Extract<VersionVerdict, { state: 'Healthy' }>;
    return { ok: true, target: newestHealthy, verdict, reason: healthyText(newestHealthy, verdict.at) };
  }
  const seen = older.map((c) => `${c.revision} ${verdictOf(c).state.toLowerCase()}`);
  return {
    ok: false,
    reason: `no earlier revision of deployment ${deployment} was seen healthy${seen.length ? ` (revisions: ${seen.join(', ')})` : ' (it has no earlier revision)'}: no rollback`,
  };
}
