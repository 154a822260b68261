import { BUILTIN_RUNBOOKS } from '../../contracts/runbooks';
import { matchRunbooks, type RunbookCandidate } from '../../domain/runbook-match';

const rb = (name: string, over: Partial<RunbookCandidate> = {}): RunbookCandidate => ({
  name,
  category: 'oomkill',
  severity: ['high'],
  targets: { signalTypes: [], resourceKinds: ['Deployment'] },
  ...over,
});

describe('runbook matching', () => {
  it('ranks tier 1 (category + severity + kind) over tier 2 (category + severity) over tier 3 (category)', () => {
    const matches = matchRunbooks({ signalType: 'OOMKilled', severity: 'high', resource: 'Deployment/api' }, [
      rb('c-category-only', { severity: ['low'] }),
      rb('b-severity', { targets: { signalTypes: [], resourceKinds: ['StatefulSet'] } }),
      rb('a-exact'),
      rb('z-other-category', { category: 'disk' }),
    ]);
    expect(matches.map((m) => [m.runbook, m.tier])).toEqual([
      ['a-exact', 1],
      ['b-severity', 2],
      ['c-category-only', 3],
    ]);
  });

  it('scores a runbook that names the signal type higher within a tier', () => {
    const [first, second] = matchRunbooks({ signalType: 'HighMemory', severity: 'high', resource: 'Deployment/api' }, [
      rb('generic'),
      rb('memory', { targets: { signalTypes: ['HighMemory'], resourceKinds: [] } }),
    ]);
    expect(first).toEqual({ runbook: 'memory', tier: 1, matchScore: 1 });
    expect(second).toEqual({ runbook: 'generic', tier: 1, matchScore: 0.9 });
  });

  it('finds a built-in runbook for every category but custom', () => {
    const probe = { severity: 'high' as const, resource: 'Deployment/api' };
    for (const signalType of [
      'OOMKilled',
      'CrashLoopBackOff',
      'HighLatency',
      'HighCPU',
      'DiskPressure',
      'NetworkUnavailable',
    ] as const) {
      expect(matchRunbooks({ ...probe, signalType }, BUILTIN_RUNBOOKS).length).toBeGreaterThan(0);
    }
    expect(matchRunbooks({ ...probe, signalType: 'Custom' }, BUILTIN_RUNBOOKS)).toEqual([]);
  });
});
