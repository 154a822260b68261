import type { RevisionHealth } from '../../domain/changes';
import { templateVersion } from '../../domain/change-record';
import { chooseRollbackTarget, versionVerdict, type RollbackCandidate } from '../../domain/rollback-target';

/**
 * The rollback target (issue: a bad deploy was "rolled back" to the bad template): the newest
 * revision proven healthy, never one known to fail, never the template running now, and a
 * restart is not a version of its own.
 */

const template = (image: string, restartedAt?: string, hash = 'h') => ({
  metadata: {
    labels: { app: 'checkout', 'pod-template-hash': hash },
    ...(restartedAt && { annotations: { 'kubectl.kubernetes.io/restartedAt': restartedAt } }),
  },
  spec: { containers: [{ name: 'app', image }] },
});

function candidate(revision: number, image: string, restartedAt?: string): RollbackCandidate {
  const hash = `hash-${revision}`;
  return {
    replicaSet: `checkout-${hash}`,
    revision,
    templateHash: hash,
    version: templateVersion(template(image, restartedAt, hash)),
    images: [`app=${image}`],
  };
}

const at = (s: number) => new Date(Date.UTC(2026, 11, 7, 12, 0, s));

function health(c: RollbackCandidate, state: RevisionHealth['state'], when = 0): RevisionHealth {
  return {
    cluster: 'local',
    namespace: 'shop',
    resource: 'Deployment/checkout',
    revision: c.revision,
    replicaSet: c.replicaSet,
    templateHash: c.templateHash,
    images: c.images,
    state,
    firstSeenAt: at(when),
    ...(state === 'Healthy' && { healthyAt: at(when + 30) }),
    ...(state === 'Failed' && {
      failure: { signal: 'CrashLoopBackOff', reason: 'Error', exitCode: 1, at: at(when + 10) },
    }),
  };
}

const choose = (
  current: RollbackCandidate,
  candidates: RollbackCandidate[],
  records: RevisionHealth[],
  toRevision?: number,
) =>
  chooseRollbackTarget({
    deployment: 'shop/checkout',
    currentVersion: current.version,
    candidates,
    health: records,
    ...(toRevision !== undefined && { toRevision }),
  });

describe('chooseRollbackTarget', () => {
  const r1 = candidate(1, 'checkout:1');
  const r2 = candidate(2, 'checkout:2');

  it('returns to the newest revision seen healthy, not the one before the current', () => {
    const r3 = candidate(3, 'checkout:3');
    const choice = choose(
      r3,
      [r1, r2, r3],
      [health(r1, 'Healthy'), health(r2, 'Failed', 60), health(r3, 'Progressing', 120)],
    );
    expect(choice).toMatchObject({ ok: true, target: { revision: 1 } });
    if (choice.ok)
      expect(choice.reason).toMatch(/^revision 1 \(app=checkout:1\), the newest revision Foghorn saw healthy/);
  });

  it('treats a restart of the bad revision as the bad revision (the restart made no new version)', () => {
    // Revision 3 is Foghorn's restart of revision 2: the same template but for restartedAt.
    const r3 = candidate(3, 'checkout:2', '2026-12-07T12:05:00Z');
    const choice = choose(r3, [r1, r2, r3], [health(r1, 'Healthy'), health(r2, 'Failed', 60)]);
    expect(choice).toMatchObject({ ok: true, target: { revision: 1 } });
    // Revision 2 runs what runs now: even unseen, it is never a target.
    expect(choose(r3, [r2, r3], [])).toMatchObject({ ok: false });
  });

  it('refuses when no earlier revision was seen healthy, and says which were seen', () => {
    const choice = choose(r2, [r1, r2], [health(r1, 'Progressing'), health(r2, 'Failed', 60)]);
    expect(choice).toEqual({
      ok: false,
      reason: 'no earlier revision of deployment shop/checkout was seen healthy (revisions: 1 unknown): no rollback',
    });
    expect(choose(r1, [r1], [health(r1, 'Healthy')])).toMatchObject({
      ok: false,
      reason: expect.stringContaining('it has no earlier revision'),
    });
  });

  it('skips two bad revisions in a row', () => {
    const r3 = candidate(3, 'checkout:3');
    const records = [health(r1, 'Healthy'), health(r2, 'Failed', 60), health(r3, 'Failed', 120)];
    const r4 = candidate(4, 'checkout:2', '2026-12-07T12:09:00Z'); // a restart of revision 2
    expect(choose(r3, [r1, r2, r3], records)).toMatchObject({ ok: true, target: { revision: 1 } });
    expect(choose(r4, [r1, r2, r3, r4], records)).toMatchObject({ ok: true, target: { revision: 1 } });
  });

  it('reads a template under its later revision number (an undo) by its ReplicaSet', () => {
    // Revision 1 was rolled back to and became revision 3: its record is under revision 1.
    const r3 = { ...r1, revision: 3 };
    const r4 = candidate(4, 'checkout:4');
    expect(choose(r4, [r2, r3, r4], [health(r1, 'Healthy'), health(r2, 'Failed', 60)])).toMatchObject({
      ok: true,
      target: { revision: 3 },
    });
  });

  it('does not trust a template that ran healthy and later failed', () => {
    const failedLater = { ...health(r1, 'Failed', 600), revision: 3 };
    expect(versionVerdict([health(r1, 'Healthy'), failedLater])).toMatchObject({ state: 'Failed' });
    expect(versionVerdict([health(r1, 'Failed'), { ...health(r1, 'Healthy', 600), revision: 3 }])).toMatchObject({
      state: 'Healthy',
    });
    expect(versionVerdict([])).toEqual({ state: 'Unknown' });
  });

  it('takes a named revision unless it fails or runs the current template', () => {
    const r3 = candidate(3, 'checkout:3');
    const records = [health(r2, 'Failed', 60)];
    const named = choose(r3, [r1, r2, r3], records, 1);
    expect(named).toMatchObject({ ok: true, target: { revision: 1 } });
    if (named.ok)
      expect(named.reason).toBe(
        'revision 1 (app=checkout:1), the revision the step names (Foghorn has not seen it run)',
      );
    const pinned = choose(r3, [r1, r2, r3], [...records, health(r1, 'Healthy')], 1);
    if (pinned.ok)
      expect(pinned.reason).toMatch(/^revision 1 \(app=checkout:1\), the newest revision Foghorn saw healthy \(at /);
    expect(choose(r3, [r1, r2, r3], records, 2)).toMatchObject({
      ok: false,
      reason: expect.stringContaining('is known to fail (CrashLoopBackOff'),
    });
    expect(choose(r3, [r1, r2, r3], records, 3)).toMatchObject({
      ok: false,
      reason: expect.stringContaining('runs the template running now'),
    });
    expect(choose(r3, [r1, r3], records, 7)).toMatchObject({ ok: false, reason: expect.stringContaining('not found') });
  });
});
