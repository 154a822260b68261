import {
  deploymentHealth,
  judgedPods,
  MAX_LOG_READS,
  MAX_SEEN_LOG_NOTES,
  MAX_SEEN_PROBLEMS,
  type DeploymentFacts,
  type FailureSignature,
  type PodFacts,
} from '../../domain/kube-health';
import { verifyTargetInput } from '../../contracts/kube-actions';

const since = new Date('2026-03-01T10:00:00.500Z');
const before = '2026-03-01T09:59:00Z';
const after = '2026-03-01T10:02:00Z';

const running = (name: string, templateHash = 'h3'): PodFacts => ({
  name,
  terminating: false,
  templateHash,
  containers: [{ name: 'app' }],
});

type Found = Extract<DeploymentFacts, { found: true }>;

function facts(over: Partial<Found> = {}): Found {
  return {
    found: true,
    target: 'deployment default/api',
    generation: 4,
    observedGeneration: 4,
    revision: 3,
    currentTemplate: { replicaSet: 'api-h3', hash: 'h3' },
    progressing: { status: 'True', reason: 'NewReplicaSetAvailable' },
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
    expect(h.final).toBeUndefined();
    expect(h.checked).toEqual([
      'the controller has observed the latest generation',
      'the rollout has not exceeded its progress deadline',
      'all 3 desired replicas updated, no old replica left, every updated replica available (kubectl rollout status)',
      'only pods of the current template (revision 3) are judged',
      'no container waiting in CrashLoopBackOff',
      'no container OOMKilled or restarted since 2026-03-01T10:00:00.000Z',
    ]);
    expect(h.seen).toEqual([
      'generation 4, observed 4',
      '3/3 updated, 3/3 available, 3 current',
      'Progressing True (NewReplicaSetAvailable)',
      'current template: ReplicaSet api-h3 (revision 3, h3)',
      '3 pods: no crash since 2026-03-01T10:00:00.000Z',
    ]);
  });

  it('is unhealthy while the controller has not observed the latest generation', () => {
    const h = deploymentHealth(facts({ observedGeneration: 3 }), since);
    expect(h.healthy).toBe(false);
    expect(h.summary).toContain('has not observed generation 4');
  });

  it.each([
    ['not all updated', { updated: 2, current: 2, available: 2 }, '2 of 3 replicas updated'],
    ['not all available', { available: 2 }, '2 of 3 updated replicas available'],
    ['old replicas remain', { current: 4 }, '1 old replica left'],
    ['old replicas remain beside updated ones', { updated: 2, current: 5, available: 2 }, '3 old replicas left'],
  ])('is unhealthy when %s (kubectl rollout status)', (_what, over, why) => {
    const h = deploymentHealth(facts(over), since);
    expect(h.healthy).toBe(false);
    expect(h.final).toBeUndefined();
    expect(h.summary).toContain('rollout incomplete (');
    expect(h.summary).toContain(why);
  });

  it('is healthy, as kubectl says, while surplus updated replicas scale down', () => {
    expect(deploymentHealth(facts({ updated: 4, available: 4, current: 4 }), since).healthy).toBe(true);
  });

  it('judges only the pods of the current template: crashing pods of a replaced ReplicaSet do not fail it', () => {
    const oldCrashing = (name: string): PodFacts => ({
      name,
      terminating: false,
      templateHash: 'h2',
      containers: [
        {
          name: 'app',
          waiting: 'CrashLoopBackOff',
          lastTerminated: { reason: 'Error', exitCode: 1, finishedAt: after },
        },
      ],
    });
    const pods = [running('api-a'), running('api-b'), running('api-c'), oldCrashing('api-x'), oldCrashing('api-y')];
    // While the rollback rolls out: unhealthy for the old replicas left, never for their crashes.
    const during = deploymentHealth(facts({ pods, current: 5 }), since);
    expect(during.healthy).toBe(false);
    expect(during.summary).toBe('deployment default/api is unhealthy: rollout incomplete (2 old replicas left)');
    expect(during.seen).toContain('2 pods of replaced ReplicaSets not judged');
    expect(during.seen.some((l) => l.includes('CrashLoopBackOff'))).toBe(false);
    // Once the controller counts them gone (status.replicas = updated), their pods are no verdict.
    const h = deploymentHealth(facts({ pods }), since);
    expect(h.healthy).toBe(true);
    expect(judgedPods(facts({ pods })).map((p) => p.name)).toEqual(['api-a', 'api-b', 'api-c']);
  });

  it('judges every pod when the current template is not known, and counts none as replaced', () => {
    const crashing: PodFacts = {
      name: 'api-x',
      terminating: false,
      templateHash: 'h2',
      containers: [{ name: 'app', waiting: 'CrashLoopBackOff' }],
    };
    const { currentTemplate: _none, ...rest } = facts({ pods: [running('api-a'), crashing] });
    const h = deploymentHealth(rest, since);
    expect(h.healthy).toBe(false);
    expect(h.seen).toContain('no ReplicaSet of revision 3 found: every pod judged');
    expect(h.seen).toContain('pod api-x container app CrashLoopBackOff');
    expect(h.seen.some((l) => l.includes('replaced'))).toBe(false);
  });

  it('is unhealthy and final when the rollout exceeded its progress deadline', () => {
    const progressing = {
      status: 'False',
      reason: 'ProgressDeadlineExceeded',
      message: 'ReplicaSet "api-h3" has timed out progressing.',
    };
    const h = deploymentHealth(facts({ progressing, available: 0, pods: [] }), since);
    expect(h.healthy).toBe(false);
    expect(h.final).toBe(true);
    expect(h.summary).toBe(
      'deployment default/api is unhealthy: its rollout exceeded its progress deadline (ProgressDeadlineExceeded: ReplicaSet "api-h3" has timed out progressing.); rollout incomplete (0 of 3 updated replicas available)',
    );
    expect(h.seen).toContain('Progressing False (ProgressDeadlineExceeded)');
    // A stale condition (the controller has not seen the fix's spec yet) says nothing about the fix.
    const stale = deploymentHealth(facts({ progressing, observedGeneration: 3 }), since);
    expect(stale.final).toBeUndefined();
    expect(stale.summary).not.toContain('deadline');
  });

  it('is healthy scaled to zero', () => {
    const h = deploymentHealth(facts({ desired: 0, updated: 0, available: 0, current: 0, pods: [] }), since);
    expect(h.healthy).toBe(true);
  });

  it('is unhealthy with a container in CrashLoopBackOff, whenever its last crash was', () => {
    const crashing: PodFacts = {
      name: 'api-b',
      terminating: false,
      templateHash: 'h3',
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
      templateHash: 'h3',
      containers: [{ name: 'app', lastTerminated: { reason: 'OOMKilled', exitCode: 137, finishedAt: after } }],
    };
    const h = deploymentHealth(facts({ pods: [oom, running('api-b'), running('api-c')] }), since);
    expect(h.healthy).toBe(false);
    expect(h.seen).toContain(`pod api-a container app restarted after OOMKilled, exit 137 at ${after}`);

    const down: PodFacts = {
      name: 'api-a',
      terminating: false,
      templateHash: 'h3',
      containers: [{ name: 'app', terminated: { reason: 'OOMKilled', finishedAt: after } }],
    };
    expect(deploymentHealth(facts({ pods: [down] }), since).seen).toContain(
      `pod api-a container app terminated OOMKilled at ${after}`,
    );

    const old: PodFacts = {
      name: 'api-a',
      terminating: false,
      templateHash: 'h3',
      containers: [{ name: 'app', lastTerminated: { reason: 'OOMKilled', exitCode: 137, finishedAt: before } }],
    };
    expect(deploymentHealth(facts({ pods: [old, running('api-b'), running('api-c')] }), since).healthy).toBe(true);
  });

  it('counts a crash within the second of the fix as after it (Kubernetes writes whole seconds)', () => {
    const sameSecond: PodFacts = {
      name: 'api-a',
      terminating: false,
      templateHash: 'h3',
      containers: [{ name: 'app', lastTerminated: { reason: 'Error', finishedAt: '2026-03-01T10:00:00Z' } }],
    };
    expect(deploymentHealth(facts({ pods: [sameSecond] }), since).healthy).toBe(false);
  });

  it('does not judge terminating pods', () => {
    const leaving: PodFacts = {
      name: 'api-old',
      terminating: true,
      templateHash: 'h3',
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
      templateHash: 'h3',
      containers: [{ name: 'app', waiting: 'CrashLoopBackOff' }],
    }));
    const h = deploymentHealth(facts({ pods }), since);
    expect(h.seen.filter((l) => l.includes('CrashLoopBackOff'))).toHaveLength(MAX_SEEN_PROBLEMS);
    expect(h.seen).toContain(`… ${30 - MAX_SEEN_PROBLEMS} more crash lines`);
  });

  describe('with the failure signature', () => {
    const oomSig: FailureSignature = { reasons: ['OOMKilled'], exitCode: 137 };
    const withContainer = (c: PodFacts['containers'][number], templateHash = 'h3'): PodFacts => ({
      name: 'api-a',
      terminating: false,
      templateHash,
      containers: [c],
    });
    const podsWith = (p: PodFacts) => [p, running('api-b'), running('api-c')];

    it('names the signature in what was checked and is healthy when no judged pod shows it', () => {
      const h = deploymentHealth(facts(), since, { ...oomSig, logLine: '  FATAL: out of memory  ' });
      expect(h.healthy).toBe(true);
      expect(h.checked).toContain(
        'the failure signature (OOMKilled, exit 137, log line "FATAL: out of memory") is gone',
      );
      expect(h.summary).toBe(
        'deployment default/api is healthy: 3/3 updated and available, no crash since the fix, the failure signature is gone',
      );
      expect(h.seen).toContain('3 pods: no sign of the failure signature');
    });

    it('treats an empty signature as none', () => {
      const h = deploymentHealth(facts(), since, { reasons: [] });
      expect(h.checked.some((l) => l.includes('signature'))).toBe(false);
      expect(h.summary).not.toContain('signature');
    });

    it('is unhealthy when a judged container ended with the signature reason since the fix, naming it', () => {
      const oom = withContainer({
        name: 'app',
        lastTerminated: { reason: 'OOMKilled', exitCode: 137, finishedAt: after },
      });
      const h = deploymentHealth(facts({ pods: podsWith(oom) }), since, { reasons: ['OOMKilled'] });
      expect(h.healthy).toBe(false);
      const line = `pod api-a container app restarted after OOMKilled, exit 137 at ${after} (the failure signature)`;
      expect(h.seen).toContain(line);
      expect(h.summary).toBe(`deployment default/api is unhealthy: the failure signature is back (1): ${line}`);
    });

    it('matches the exit code alone, and a container down now whenever it went down', () => {
      const down = withContainer({ name: 'app', terminated: { reason: 'Error', exitCode: 3, finishedAt: before } });
      const h = deploymentHealth(facts({ pods: podsWith(down) }), since, { reasons: [], exitCode: 3 });
      expect(h.healthy).toBe(false);
      expect(h.summary).toContain(
        `the failure signature is back (1): pod api-a container app terminated Error, exit 3 at ${before} (the failure signature)`,
      );
      // Without the signature, a container that went down before the fix is the incident's history.
      expect(deploymentHealth(facts({ pods: podsWith(down) }), since).healthy).toBe(true);
    });

    it('matches a waiting reason of the signature (an image that still does not pull)', () => {
      const pulling = withContainer({ name: 'app', waiting: 'ImagePullBackOff' });
      const h = deploymentHealth(facts({ pods: podsWith(pulling) }), since, { reasons: ['ImagePullBackOff'] });
      expect(h.healthy).toBe(false);
      expect(h.seen).toContain('pod api-a container app ImagePullBackOff (the failure signature)');
      expect(deploymentHealth(facts({ pods: podsWith(pulling) }), since).healthy).toBe(true);
    });

    it('ignores the signature on pods of replaced ReplicaSets and terminations before the fix', () => {
      const oldPod = withContainer(
        { name: 'app', lastTerminated: { reason: 'OOMKilled', exitCode: 137, finishedAt: after } },
        'h2',
      );
      const earlier = withContainer({
        name: 'app',
        lastTerminated: { reason: 'OOMKilled', exitCode: 137, finishedAt: before },
      });
      const pods = [earlier, running('api-b'), running('api-c'), { ...oldPod, name: 'api-old' }];
      const h = deploymentHealth(facts({ pods }), since, oomSig);
      expect(h.healthy).toBe(true);
      expect(h.seen).toContain('1 pod of replaced ReplicaSets not judged');
    });

    it('is unhealthy when the log line is still in a judged container log, quoting it redacted and short', () => {
      const secret = 'fh_abcdefghijklmnopqrstuvwxyz012345';
      const text = [
        'starting',
        `2026-03-01 FATAL: out of connections token=${secret} ${'x'.repeat(300)}`,
        'retrying',
      ].join('\n');
      const logging = withContainer({ name: 'app', log: { readable: true, text } });
      const h = deploymentHealth(facts({ pods: podsWith(logging) }), since, {
        reasons: [],
        logLine: 'FATAL: out of connections',
      });
      expect(h.healthy).toBe(false);
      const line = h.seen.find((l) => l.includes('log still prints'))!;
      expect(line).toMatch(
        /^pod api-a container app log still prints "2026-03-01 FATAL: out of connections token=\[REDACTED\] x+…" \(the failure signature\)$/,
      );
      expect(line).not.toContain(secret);
      expect(line.length).toBeLessThan(220);
      expect(h.summary).toContain('the failure signature is back (1): pod api-a container app log still prints');
      expect(h.seen).toContain('1 container log searched (last 200 lines)');
    });

    it('matches the log line case-sensitively', () => {
      const logging = withContainer({ name: 'app', log: { readable: true, text: 'fatal: out of connections\n' } });
      const h = deploymentHealth(facts({ pods: podsWith(logging) }), since, {
        reasons: [],
        logLine: 'FATAL: out of connections',
      });
      expect(h.healthy).toBe(true);
    });

    it('notes a log that cannot be read, not failing for it, and the logs not read', () => {
      const unreadable = withContainer({
        name: 'app',
        log: { readable: false, reason: 'HTTP 400: container "app" is waiting to start' },
      });
      const h = deploymentHealth(facts({ pods: podsWith(unreadable) }), since, {
        reasons: [],
        logLine: 'FATAL: out of connections',
      });
      expect(h.healthy).toBe(true);
      expect(h.seen).toEqual(
        expect.arrayContaining([
          '0 container logs searched (last 200 lines)',
          'pod api-a container app log not readable (HTTP 400: container "app" is waiting to start): no evidence either way',
          `2 container logs not read (at most ${MAX_LOG_READS} are read)`,
        ]),
      );
    });

    it('bounds the notes about unreadable logs', () => {
      const pods = Array.from({ length: 8 }, (_, i): PodFacts => ({
        name: `api-${i}`,
        terminating: false,
        templateHash: 'h3',
        containers: [{ name: 'app', log: { readable: false, reason: 'HTTP 404' } }],
      }));
      const h = deploymentHealth(facts({ pods }), since, { reasons: [], logLine: 'FATAL' });
      expect(h.seen.filter((l) => l.endsWith('no evidence either way'))).toHaveLength(MAX_SEEN_LOG_NOTES);
      expect(h.seen).toContain(`… ${8 - MAX_SEEN_LOG_NOTES} more logs not readable`);
    });
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

  it('takes an optional failure signature with bounded strings, its log line trimmed', () => {
    const base = { cluster: 'prod', namespace: 'default', deployment: 'api', since: '2026-03-01T10:00:00Z' };
    const parse = (signature: unknown) => verifyTargetInput.safeParse({ ...base, signature });
    const ok = parse({ reasons: ['OOMKilled'], exitCode: 137, logLine: '  FATAL: out of memory ' });
    expect(ok.success && ok.data.signature).toEqual({
      reasons: ['OOMKilled'],
      exitCode: 137,
      logLine: 'FATAL: out of memory',
    });
    expect(parse({ reasons: [] }).success).toBe(true);
    expect(parse({ reasons: ['Out Of Memory'] }).success).toBe(false);
    expect(parse({ reasons: ['x'.repeat(65)] }).success).toBe(false);
    expect(parse({ reasons: Array.from({ length: 11 }, (_, i) => `R${i}`) }).success).toBe(false);
    expect(parse({ reasons: [], logLine: 'x'.repeat(301) }).success).toBe(false);
    expect(parse({ reasons: [], logLine: 'two\nlines' }).success).toBe(false);
    expect(parse({ reasons: [], logLine: '   ' }).success).toBe(false);
    expect(parse({ reasons: [], exitCode: 1.5 }).success).toBe(false);
    expect(parse({ reasons: [], other: 1 }).success).toBe(false);
  });
});
