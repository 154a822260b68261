import { deploymentHealth, MAX_SEEN_PROBLEMS, type DeploymentFacts, type PodFacts } from '../../domain/kube-health';
import { verifyTargetInput } from '../../contracts/kube-actions';

const since = new Date('2026-03-01T10:00:00.500Z');
const before = '2026-03-01T09:59:00Z';
const after = '2026-03-01T10:02:00Z';

const running = (name: string): PodFacts => ({ name, terminating: false, containers: [{ name: 'app' }] });

function facts(over: Partial<Extract<DeploymentFacts, { found: true }>> = {}): DeploymentFacts {
  return {
    found: true,
    target: 'deployment default/api',
    generation: 4,
    observedGeneration: 4,
    desired: 3,
    updated: 3,
    available: 3,
    current: 3,
    pods: [running('api-a'), running('api-b'), running('api-c')],
    ...over,
  };
}

describe('deploymentHealth', () => {
  it('is healthy when rolled out completely with no crash since the fix', () => {
    const h = deploymentHealth(facts(), since);
    expect(h.healthy).toBe(true);
    expect(h.summary).toBe('deployment default/api is healthy: 3/3 updated and available, no crash since the fix');
    expect(h.checked).toHaveLength(4);
    expect(h.checked.join('\n')).toContain('no container OOMKilled or restarted since 2026-03-01T10:00:00.000Z');
    expect(h.seen).toEqual([
      'generation 4, observed 4',
      '3/3 updated, 3/3 available, 3 current',
      '3 pods: no crash since 2026-03-01T10:00:00.000Z',
    ]);
  });

  it('is unhealthy while the controller has not observed the latest generation', () => {
    const h = deploymentHealth(facts({ observedGeneration: 3 }), since);
    expect(h.healthy).toBe(false);
    expect(h.summary).toContain('has not observed generation 4');
  });

  it.each([
    ['not all updated', { updated: 2 }],
    ['not all available', { available: 2 }],
    ['old pods remain', { current: 4 }],
  ])('is unhealthy when %s', (_what, over) => {
    const h = deploymentHealth(facts(over), since);
    expect(h.healthy).toBe(false);
    expect(h.summary).toContain('rollout incomplete');
  });

  it('is healthy scaled to zero', () => {
    const h = deploymentHealth(facts({ desired: 0, updated: 0, available: 0, current: 0, pods: [] }), since);
    expect(h.healthy).toBe(true);
  });

  it('is unhealthy with a container in CrashLoopBackOff, whenever its last crash was', () => {
    const crashing: PodFacts = {
      name: 'api-b',
      terminating: false,
      containers: [
        {
          name: 'app',
          waiting: 'CrashLoopBackOff',
          lastTerminated: { reason: 'Error', exitCode: 1, finishedAt: before },
        },
      ],
    };
    const h = deploymentHealth(facts({ pods: [running('api-a'), crashing, running('api-c')] }), since);
    expect(h.healthy).toBe(false);
    expect(h.seen).toContain('pod api-b container app CrashLoopBackOff');
    expect(h.summary).toContain('1 container crash: pod api-b container app CrashLoopBackOff');
  });

  it('is unhealthy when a container was OOMKilled or restarted since the fix, not for crashes before it', () => {
    const oom: PodFacts = {
      name: 'api-a',
      terminating: false,
      containers: [{ name: 'app', lastTerminated: { reason: 'OOMKilled', exitCode: 137, finishedAt: after } }],
    };
    const h = deploymentHealth(facts({ pods: [oom, running('api-b'), running('api-c')] }), since);
    expect(h.healthy).toBe(false);
    expect(h.seen).toContain(`pod api-a container app restarted after OOMKilled, exit 137 at ${after}`);

    const down: PodFacts = {
      name: 'api-a',
      terminating: false,
      containers: [{ name: 'app', terminated: { reason: 'OOMKilled', finishedAt: after } }],
    };
    expect(deploymentHealth(facts({ pods: [down] }), since).seen).toContain(
      `pod api-a container app terminated OOMKilled at ${after}`,
    );

    const old: PodFacts = {
      name: 'api-a',
      terminating: false,
      containers: [{ name: 'app', lastTerminated: { reason: 'OOMKilled', exitCode: 137, finishedAt: before } }],
    };
    expect(deploymentHealth(facts({ pods: [old, running('api-b'), running('api-c')] }), since).healthy).toBe(true);
  });

  it('counts a crash within the second of the fix as after it (Kubernetes writes whole seconds)', () => {
    const sameSecond: PodFacts = {
      name: 'api-a',
      terminating: false,
      containers: [{ name: 'app', lastTerminated: { reason: 'Error', finishedAt: '2026-03-01T10:00:00Z' } }],
    };
    expect(deploymentHealth(facts({ pods: [sameSecond] }), since).healthy).toBe(false);
  });

  it('does not judge terminating pods', () => {
    const leaving: PodFacts = {
      name: 'api-old',
      terminating: true,
      containers: [{ name: 'app', waiting: 'CrashLoopBackOff' }],
    };
    const h = deploymentHealth(facts({ pods: [running('api-a'), running('api-b'), running('api-c'), leaving] }), since);
    expect(h.healthy).toBe(true);
    expect(h.seen).toContain('1 pods terminating (not judged)');
  });

  it('bounds the crash lines it lists', () => {
    const pods = Array.from({ length: 30 }, (_, i): PodFacts => ({
      name: `api-${i}`,
      terminating: false,
      containers: [{ name: 'app', waiting: 'CrashLoopBackOff' }],
    }));
    const h = deploymentHealth(facts({ pods }), since);
    expect(h.seen.filter((l) => l.includes('CrashLoopBackOff'))).toHaveLength(MAX_SEEN_PROBLEMS);
    expect(h.seen).toContain(`… ${30 - MAX_SEEN_PROBLEMS} more crash lines`);
  });

  it('says a missing Deployment is gone', () => {
    const h = deploymentHealth({ found: false, target: 'deployment default/api' }, since);
    expect(h).toEqual({
      healthy: false,
      checked: ['the Deployment exists'],
      seen: ['deployment default/api not found'],
      summary: 'deployment default/api is gone (not found): nothing runs to verify',
    });
  });
});

describe('verifyTargetInput', () => {
  it('requires an RFC 3339 time of the fix', () => {
    const base = { cluster: 'prod', namespace: 'default', deployment: 'api' };
    expect(verifyTargetInput.safeParse({ ...base, since: '2026-03-01T10:00:00Z' }).success).toBe(true);
    expect(verifyTargetInput.safeParse({ ...base, since: 'yesterday' }).success).toBe(false);
    expect(verifyTargetInput.safeParse({ ...base, since: '2026-03-01T10:00:00Z', extra: 1 }).success).toBe(false);
  });
});
