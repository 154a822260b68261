import { configChange, nodeConditionChange, scaleChange } from '../../domain/change-record';
import type { IncidentEvidence } from '../../domain/evidence';
import {
  conclusive,
  errorLines,
  evidenceRecommendations,
  gitOpsContextOf,
  logAnalysisOf,
} from '../../domain/evidence-analysis';
import { before, crashing, evidence, first, foghorn, health, person, rollout, shape } from '../fixtures/evidence';

describe('the suspected change', () => {
  it('a bad deploy: the rollout the failing pods run, 6 s before the crash, with the last healthy revision to go back to', () => {
    const e = evidence(
      [rollout(1, 'checkout:1', before(7200)), rollout(2, 'checkout:2', before(6), undefined, ['checkout:1'])],
      [health(2, 'checkout:2', 'Failed'), health(1, 'checkout:1', 'Healthy')],
      [crashing],
    );
    expect(e.suspect).toMatchObject({
      type: 'Rollout',
      revision: 2,
      previousRevision: 1,
      leadMs: 6000,
      evidence: 'E1',
    });
    expect(e.suspect!.confidence).toBeGreaterThanOrEqual(0.9);
    expect(gitOpsContextOf(e, 'Deployment/checkout')).toMatch(
      /^Suspected change \(90%, evidence E1\): revision 2 of shop\/Deployment\/checkout replaced 1: image app checkout:1 → checkout:2 — reached the cluster 6s before the first failure/,
    );
    const [first] = evidenceRecommendations(e, 'Deployment/checkout');
    expect(first).toMatch(
      /^Roll Deployment\/checkout back to revision 1 \(app=checkout:1\), the last revision Foghorn saw healthy: the failure began 6s before revision 2 replaced 1 \(evidence E1/,
    );
  });

  it('a lowered memory limit explains OOMKilled better than anything else', () => {
    const e = evidence(
      [
        scaleChange('c', 'shop', 'Deployment/checkout', 3, 2, 4, before(30), person),
        rollout(2, 'checkout:1', before(3000), '64Mi', ['checkout:1', '512Mi']),
      ],
      [],
      [{ ...crashing, lastTermination: { reason: 'OOMKilled', exitCode: 137 } }],
      shape({ signalType: 'OOMKilled', reasons: ['OOMKilled'] }),
    );
    expect(e.suspect).toMatchObject({ type: 'Rollout', revision: 2 });
    expect(e.suspect!.reason).toMatch(/^the memory limit changed and the containers are OOMKilled/);
  });

  it('a config a healthy revision reads beats that revision; Foghorn’s own changes never count', () => {
    const cfg = configChange(
      'c',
      'shop',
      'ConfigMap/checkout',
      '42',
      'a',
      'b',
      { added: [], removed: [], changed: ['app.yaml'] },
      ['Deployment/checkout'],
      before(20),
      person,
    );
    const restart = { ...rollout(2, 'checkout:1', before(2), undefined, ['checkout:1']), by: foghorn };
    const e = evidence(
      [rollout(1, 'checkout:1', before(3600)), cfg, restart],
      [health(1, 'checkout:1', 'Healthy')],
      [{ ...crashing }],
      shape({ failingImages: ['app=checkout:1'] }),
    );
    expect(e.suspect).toMatchObject({ type: 'Config', resource: 'ConfigMap/checkout' });
    expect(e.changes.map((c) => c.id)).not.toContain(restart.id);
    expect(evidenceRecommendations(e, 'Deployment/checkout')[0]).toMatch(/^Revert ConfigMap\/checkout/);
  });

  it('a crash with no recent change: none named, and it says so', () => {
    const e = evidence(
      [rollout(1, 'checkout:1', before(5000))],
      [health(1, 'checkout:1', 'Healthy')],
      [crashing],
      shape({ failingImages: ['app=checkout:1'] }),
    );
    expect(e.suspect).toBeUndefined();
    expect(gitOpsContextOf(e, 'Deployment/checkout')).toMatch(
      /^No change in the 2h0m0s before the first failure explains it/,
    );
    const none = evidence([], [], [crashing]);
    expect(gitOpsContextOf(none, 'Deployment/checkout')).toBe(
      'No change to Deployment/checkout, what it reads or its nodes reached the cluster in the 2h0m0s before the first failure at 2026-12-07T10:00:00.000Z.',
    );
  });

  it('a change after the failure or before the window is no suspect', () => {
    const e = evidence(
      [
        rollout(2, 'checkout:2', new Date(first.getTime() + 60_000), undefined, ['checkout:1']),
        rollout(3, 'x', before(3 * 3600), undefined, ['y']),
      ],
      [],
      [crashing],
    );
    expect(e.suspect).toBeUndefined();
    expect(e.changes).toEqual([]);
  });

  it('a node condition change explains a NotReady node', () => {
    const e = evidence(
      [nodeConditionChange('c', 'node-a', 'Ready', 'True', 'False', 'KubeletNotReady', before(40))],
      [],
      [],
      shape({ signalType: 'Custom', reasons: ['NodeNotReady'], failingImages: [] }),
    );
    expect(e.suspect).toMatchObject({ type: 'NodeCondition', resource: 'Node/node-a' });
  });
});

describe('logs and thin evidence', () => {
  it('keeps the error lines, with the termination', () => {
    expect(errorLines(['ok', 'listening', 'ERROR connection refused', 'panic: boom'])).toEqual([
      'ERROR connection refused',
      'panic: boom',
    ]);
    const e = evidence([], [], [crashing]);
    expect(logAnalysisOf(e)).toBe(
      'checkout-2-abc last terminated Error (exit code 1); error lines: "panic: nil map assignment".',
    );
    expect(e.items.map((i) => i.kind)).toEqual(['termination', 'logs']);
  });

  it('events alone are inconclusive, and it says so', () => {
    const e: IncidentEvidence = {
      ...evidence([], [], []),
      events: [{ object: 'Pod/x', reason: 'BackOff', message: 'Back-off restarting', count: 4 }],
    };
    const withItems = { ...e, items: [{ id: 'E1', kind: 'events' as const, summary: 'Pod/x: BackOff ×4' }] };
    expect(conclusive(withItems)).toBe(false);
    expect(evidenceRecommendations(withItems, 'Deployment/checkout')).toEqual([
      'Inconclusive: the evidence holds events only; check the pods’ logs and recent changes by hand before acting.'.replace(
        '’',
        "'",
      ),
    ]);
  });
});
