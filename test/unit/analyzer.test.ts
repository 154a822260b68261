import {
  RULES_PROVIDER,
  analyzeWithRules,
  scaleQuantity,
  type AnalysisContext,
  type Insight,
} from '../../domain/analyzer';
import { actionSchema } from '../../contracts/runbooks';
import { RESOURCE_KINDS, SIGNAL_TYPES, type SignalType } from '../../domain/vocabulary';

const DETECTED = new Date('2024-05-14T09:20:00Z');
const minutes = (n: number) => new Date(DETECTED.getTime() + n * 60_000);

type IncidentOverrides = Partial<AnalysisContext['incident']>;

/** A context with no enrichment data: one incident, nothing related, no runbooks. */
function ctx(
  signalType: SignalType,
  incident: IncidentOverrides = {},
  rest: Partial<Omit<AnalysisContext, 'incident'>> = {},
): AnalysisContext {
  return {
    incident: {
      name: 'INC-20240514-0042',
      namespace: 'payments',
      resource: 'Deployment/checkout-api',
      signalType,
      severity: 'high',
      description: `${signalType} detected on checkout-api`,
      labels: {},
      detectedAt: DETECTED,
      riskScore: 55,
      correlatedSignals: [],
      ...incident,
    },
    related: [],
    runbooks: [],
    ...rest,
  };
}

/** Every suggested action, parsed as a runbook step; throws with the zod issues when one is invalid. */
function parseActions(insight: Insight) {
  return insight.suggestedActions.map((a) => {
    const parsed = actionSchema.safeParse({ type: a.action, params: a.params, description: a.description });
    if (!parsed.success) throw new Error(`${a.action} ${JSON.stringify(a.params)}: ${parsed.error.message}`);
    return parsed.data;
  });
}

const actionsOf = (insight: Insight) => insight.suggestedActions.map((a) => a.action);
const find = (insight: Insight, action: string) => insight.suggestedActions.find((a) => a.action === action);

const NAMES: Record<(typeof RESOURCE_KINDS)[number], string> = {
  Deployment: 'checkout-api',
  StatefulSet: 'postgres',
  DaemonSet: 'fluent-bit',
  Pod: 'checkout-api-7d9f8b6c5d-x2x9q',
  Node: 'ip-10-0-1-23.eu-west-1.compute.internal',
};

describe('RULES_PROVIDER', () => {
  it('is the builtin rules-v1 model', () => {
    expect(RULES_PROVIDER).toEqual({ provider: 'builtin', model: 'rules-v1' });
  });
});

describe.each(SIGNAL_TYPES.map((t) => [t]))('%s', (signalType) => {
  it.each(RESOURCE_KINDS.map((k) => [k]))('on a %s yields a complete, valid insight', (kind) => {
    const name = NAMES[kind];
    const insight = analyzeWithRules(ctx(signalType, { resource: `${kind}/${name}` }));

    expect(insight.analysis).not.toBe('');
    expect(insight.analysis).toContain(`${kind}/${name}`);
    expect(insight.rootCause).not.toBe('');
    expect(insight.rootCause).toContain(name);
    expect(insight.confidence).toBeGreaterThanOrEqual(0);
    expect(insight.confidence).toBeLessThanOrEqual(1);
    expect(insight.recommendations.length).toBeGreaterThanOrEqual(3);
    expect(insight.recommendations.length).toBeLessThanOrEqual(5);
    for (const r of insight.recommendations) expect(r.trim()).not.toBe('');
    expect(insight.recommendation).toBe(insight.recommendations[0]);

    expect(insight.suggestedActions.length).toBeGreaterThanOrEqual(1);
    const steps = parseActions(insight);
    for (const a of insight.suggestedActions) {
      expect(a.name).toMatch(/^[a-z0-9-]+$/);
      expect(a.description).not.toBe('');
    }
    // A deployment is only ever named for a Deployment, and then it is the incident's own.
    for (const step of steps) {
      const params = step.params as Record<string, unknown>;
      if (kind === 'Deployment') {
        if ('deployment' in params) expect(params.deployment).toBe(name);
      } else expect(params).not.toHaveProperty('deployment');
      if ('namespace' in params) expect(params.namespace).toBe('payments');
    }

    // No data source for logs or GitOps, nothing related, nothing correlated: empty, never invented.
    expect(insight.logAnalysis).toBe('');
    expect(insight.gitOpsContext).toBe('');
    expect(insight.cascadeAnalysis).toBe('');
    expect(insight.blastRadiusPrediction).toBe('');
    expect(insight.relatedEvents).toEqual([]);
  });

  it('is less confident without a description', () => {
    const described = analyzeWithRules(ctx(signalType));
    const bare = analyzeWithRules(ctx(signalType, { description: '' }));
    expect(bare.confidence).toBeLessThan(described.confidence);
    expect(bare.analysis).toContain('no description');
  });

  it('is deterministic', () => {
    expect(analyzeWithRules(ctx(signalType))).toEqual(analyzeWithRules(ctx(signalType)));
  });
});

describe('calibrated confidence', () => {
  it.each<[SignalType, number]>([
    ['OOMKilled', 0.85],
    ['CrashLoopBackOff', 0.6],
    ['ImagePullBackOff', 0.8],
    ['Custom', 0.3],
  ])('%s starts at %d', (type, confidence) => {
    expect(analyzeWithRules(ctx(type, { description: 'something happened' })).confidence).toBe(confidence);
  });

  it('rises when labels corroborate an OOM kill', () => {
    const plain = analyzeWithRules(ctx('OOMKilled', { description: 'pod restarted' }));
    const reason = analyzeWithRules(
      ctx('OOMKilled', { description: 'pod restarted', labels: { reason: 'OOMKilled' } }),
    );
    const both = analyzeWithRules(
      ctx('OOMKilled', { description: 'pod restarted', labels: { reason: 'OOMKilled', exit_code: '137' } }),
    );
    expect(reason.confidence).toBeGreaterThan(plain.confidence);
    expect(both.confidence).toBeGreaterThan(reason.confidence);
    expect(both.confidence).toBeLessThanOrEqual(0.95);
    expect(both.analysis).toContain('reason=OOMKilled');
    expect(both.analysis).toContain('exit code 137');
  });

  it('rises when a correlated signal corroborates', () => {
    const plain = analyzeWithRules(ctx('HighLatency', { description: 'slow checkout' }));
    const withCpu = analyzeWithRules(
      ctx('HighLatency', {
        description: 'slow checkout',
        correlatedSignals: [{ signalType: 'HighCPU', description: 'CPU at 97%', at: minutes(1) }],
      }),
    );
    expect(withCpu.confidence).toBeGreaterThan(plain.confidence);
    expect(withCpu.rootCause).toContain('CPU saturation');
  });

  it('stays within [0, 1] when everything corroborates', () => {
    const insight = analyzeWithRules(
      ctx('OOMKilled', {
        description: 'Container was OOMKilled (out of memory)',
        labels: { reason: 'OOMKilled', exit_code: '137', memory_limit: '512Mi' },
        correlatedSignals: [{ signalType: 'HighMemory', description: '', at: minutes(1) }],
      }),
    );
    expect(insight.confidence).toBeLessThanOrEqual(1);
    expect(insight.confidence).toBeGreaterThan(0.85);
  });
});

describe('OOMKilled actions', () => {
  it('raises the memory limit by 50% and restarts', () => {
    const insight = analyzeWithRules(ctx('OOMKilled'));
    expect(actionsOf(insight)).toEqual(['AdjustResources', 'RestartDeployment']);
    expect(find(insight, 'AdjustResources')?.params).toEqual({
      deployment: 'checkout-api',
      namespace: 'payments',
      memoryLimitIncreasePercent: 50,
    });
    expect(find(insight, 'RestartDeployment')?.params).toEqual({ deployment: 'checkout-api', namespace: 'payments' });
    parseActions(insight);
  });

  it.each<[string, string]>([
    ['512Mi', '768Mi'],
    ['1Gi', '1536Mi'],
    ['300M', '450M'],
  ])('sets memoryLimit %s → %s from the memory_limit label, without the percent', (limit, next) => {
    const insight = analyzeWithRules(ctx('OOMKilled', { labels: { memory_limit: limit, container: 'api' } }));
    const adjust = find(insight, 'AdjustResources');
    expect(adjust?.params).toEqual({
      deployment: 'checkout-api',
      namespace: 'payments',
      container: 'api',
      memoryLimit: next,
    });
    expect(adjust?.params).not.toHaveProperty('memoryLimitIncreasePercent');
    expect(insight.recommendation).toContain(`from ${limit} to ${next}`);
    parseActions(insight);
  });

  it('falls back to the percent when memory_limit is not a quantity', () => {
    const insight = analyzeWithRules(ctx('OOMKilled', { labels: { memory_limit: 'lots' } }));
    expect(find(insight, 'AdjustResources')?.params).toMatchObject({ memoryLimitIncreasePercent: 50 });
    expect(find(insight, 'AdjustResources')?.params).not.toHaveProperty('memoryLimit');
  });

  it('targets a StatefulSet as the incident resource, without a deployment name', () => {
    const insight = analyzeWithRules(ctx('OOMKilled', { resource: 'StatefulSet/postgres' }));
    expect(find(insight, 'AdjustResources')?.params).toEqual({ namespace: 'payments', memoryLimitIncreasePercent: 50 });
  });
});

describe('actions per signal type', () => {
  it('CrashLoopBackOff: restart, then roll back', () => {
    const insight = analyzeWithRules(ctx('CrashLoopBackOff'));
    expect(actionsOf(insight)).toEqual(['RestartDeployment', 'RollbackDeployment']);
    for (const a of insight.suggestedActions)
      expect(a.params).toEqual({ deployment: 'checkout-api', namespace: 'payments' });
  });

  it('CrashLoopBackOff on a Pod: delete the pod', () => {
    const insight = analyzeWithRules(ctx('CrashLoopBackOff', { resource: 'Pod/web-5d4f-abcde' }));
    expect(find(insight, 'DeletePod')?.params).toEqual({ pod: 'web-5d4f-abcde', namespace: 'payments' });
  });

  it('CrashLoopBackOff explains the exit code', () => {
    expect(analyzeWithRules(ctx('CrashLoopBackOff', { labels: { exit_code: '127' } })).rootCause).toContain(
      'command was not found',
    );
    expect(analyzeWithRules(ctx('CrashLoopBackOff', { labels: { exit_code: '137' } })).rootCause).toContain(
      'OOM killer',
    );
  });

  it.each<SignalType>(['HighLatency', 'HighCPU'])('%s: scale out by two, at most 20', (type) => {
    const insight = analyzeWithRules(ctx(type));
    expect(find(insight, 'ScaleDeployment')?.params).toEqual({
      deployment: 'checkout-api',
      namespace: 'payments',
      replicasDelta: 2,
      maxReplicas: 20,
    });
  });

  it('HighCPU with throttling raises the CPU limit first', () => {
    const insight = analyzeWithRules(ctx('HighCPU', { labels: { alertname: 'CPUThrottlingHigh', container: 'api' } }));
    expect(actionsOf(insight)).toEqual(['AdjustResources', 'ScaleDeployment']);
    expect(find(insight, 'AdjustResources')?.params).toEqual({
      deployment: 'checkout-api',
      namespace: 'payments',
      container: 'api',
      cpuLimitIncreasePercent: 50,
    });
    expect(insight.rootCause).toContain('throttled');
  });

  it('ImagePullBackOff: roll back, and name the pull failure', () => {
    const insight = analyzeWithRules(
      ctx('ImagePullBackOff', {
        description: 'Failed to pull image "registry.example.com/checkout:v2.4.1": manifest unknown',
        labels: { image: 'registry.example.com/checkout:v2.4.1' },
      }),
    );
    expect(actionsOf(insight)[0]).toBe('RollbackDeployment');
    expect(insight.rootCause).toContain('does not exist');
    expect(insight.rootCause).toContain('registry.example.com/checkout:v2.4.1');
    expect(insight.recommendations.join('\n')).toContain('crane manifest registry.example.com/checkout:v2.4.1');
  });

  it('ImagePullBackOff: recognises expired credentials', () => {
    const insight = analyzeWithRules(ctx('ImagePullBackOff', { description: 'pull access denied: unauthorized' }));
    expect(insight.rootCause).toContain('imagePullSecret');
  });

  it('DiskPressure on a node: a cleanup script with a valid timeout, and a notification', () => {
    const insight = analyzeWithRules(ctx('DiskPressure', { resource: 'Node/worker-3', labels: { mountpoint: '/' } }));
    expect(actionsOf(insight)).toEqual(['RunScript', 'Notify']);
    const script = find(insight, 'RunScript');
    expect(script?.params).toMatchObject({ timeout: '5m' });
    expect(String(script?.params.script)).toContain('crictl rmi --prune');
    expect(insight.rootCause).toContain('Node worker-3');
    parseActions(insight);
  });

  it('DiskPressure on a workload: only a notification, never a deletion of its data', () => {
    const insight = analyzeWithRules(ctx('DiskPressure', { resource: 'StatefulSet/postgres' }));
    expect(actionsOf(insight)).toEqual(['Notify']);
  });

  it('NetworkUnavailable: recreate the pods selected by the app label', () => {
    const insight = analyzeWithRules(ctx('NetworkUnavailable', { labels: { app: 'checkout' } }));
    expect(find(insight, 'DeletePod')?.params).toEqual({ labelSelector: 'app=checkout', namespace: 'payments' });
  });

  it('NetworkUnavailable: a pod without an app label is recreated by name', () => {
    const insight = analyzeWithRules(ctx('NetworkUnavailable', { resource: 'Pod/web-1' }));
    expect(find(insight, 'DeletePod')?.params).toEqual({ pod: 'web-1', namespace: 'payments' });
  });

  it('NetworkUnavailable: an invalid app label value is not turned into a selector', () => {
    const insight = analyzeWithRules(ctx('NetworkUnavailable', { labels: { app: 'bad value!' } }));
    expect(find(insight, 'DeletePod')).toBeUndefined();
  });

  it('Custom: notifies with the source description', () => {
    const insight = analyzeWithRules(ctx('Custom', { description: 'Queue depth above 10k' }));
    expect(actionsOf(insight)).toEqual(['Notify']);
    expect(find(insight, 'Notify')?.params.message).toContain('Queue depth above 10k');
    expect(insight.rootCause).toContain('Queue depth above 10k');
  });

  it('leaves out a namespace that is not a DNS label', () => {
    const insight = analyzeWithRules(ctx('OOMKilled', { namespace: 'Not_A_Label' }));
    parseActions(insight);
    for (const a of insight.suggestedActions) expect(a.params).not.toHaveProperty('namespace');
  });
});

describe('cascade, blast radius and related events', () => {
  const related: AnalysisContext['related'] = [
    {
      name: 'INC-20240514-0040',
      resource: 'Deployment/ledger',
      signalType: 'CrashLoopBackOff',
      state: 'Remediating',
      detectedAt: minutes(-3),
    },
    {
      name: 'INC-20240514-0043',
      resource: 'Pod/ledger-worker-1',
      signalType: 'PodNotReady',
      state: 'Detected',
      detectedAt: minutes(2),
    },
  ];

  it('names each related incident with resource, type and timing, and the likely origin', () => {
    const insight = analyzeWithRules(ctx('HighErrorRate', {}, { related }));
    expect(insight.cascadeAnalysis).toContain('INC-20240514-0040 (Deployment/ledger, CrashLoopBackOff, 3m before)');
    expect(insight.cascadeAnalysis).toContain('INC-20240514-0043 (Pod/ledger-worker-1, PodNotReady, 2m after)');
    expect(insight.cascadeAnalysis).toContain('INC-20240514-0040 on Deployment/ledger (CrashLoopBackOff) came first');
    expect(insight.cascadeAnalysis).toContain('downstream effect');
    expect(insight.relatedEvents).toEqual(['INC-20240514-0040', 'INC-20240514-0043']);
    expect(insight.blastRadiusPrediction).toContain('Deployment/ledger');
    expect(insight.blastRadiusPrediction).toContain('Pod/ledger-worker-1');
    expect(insight.blastRadiusPrediction).toContain('3 resources');
  });

  it('calls this incident the origin when it came first', () => {
    const later = related.map((r) => ({ ...r, detectedAt: minutes(4) }));
    const insight = analyzeWithRules(ctx('OOMKilled', {}, { related: later }));
    expect(insight.cascadeAnalysis).toContain('This incident was detected first');
    expect(insight.cascadeAnalysis).toContain('OOMKilled commonly leads to CrashLoopBackOff and PodNotReady');
  });

  it('lists correlated signals in related events and the blast radius', () => {
    const insight = analyzeWithRules(
      ctx('OOMKilled', {
        correlatedSignals: [
          { signalType: 'HighMemory', description: 'Memory at 96% of limit', at: minutes(1) },
          { signalType: 'CrashLoopBackOff', description: '', at: minutes(2) },
        ],
      }),
    );
    expect(insight.relatedEvents).toEqual([
      'Memory at 96% of limit',
      `CrashLoopBackOff signal at ${minutes(2).toISOString()}`,
    ]);
    expect(insight.blastRadiusPrediction).toContain('2 further signals');
    expect(insight.blastRadiusPrediction).toContain('HighMemory, CrashLoopBackOff');
    expect(insight.cascadeAnalysis).toBe('');
  });
});

describe('runbooks', () => {
  it('mentions a single candidate runbook by name', () => {
    const insight = analyzeWithRules(
      ctx(
        'OOMKilled',
        {},
        {
          runbooks: [
            {
              name: 'oomkill-raise-memory-limit',
              category: 'oomkill',
              description: 'Raises the memory limit by 50% and rolls the workload. Treats the symptom.',
            },
          ],
        },
      ),
    );
    const mention = insight.recommendations.find((r) => r.includes('oomkill-raise-memory-limit'));
    expect(mention).toBe(
      'Runbook oomkill-raise-memory-limit covers this case: Raises the memory limit by 50% and rolls the workload (rests on the oomkill category).',
    );
    expect(insight.recommendations.length).toBeLessThanOrEqual(5);
  });

  it('lists several, the matching category first', () => {
    const insight = analyzeWithRules(
      ctx(
        'CrashLoopBackOff',
        {},
        {
          runbooks: [
            { name: 'generic-notify', category: 'custom', description: 'Pages the owner.' },
            {
              name: 'crashloop-restart-then-rollback',
              category: 'crashloop',
              description: 'Restarts, then rolls back.',
            },
          ],
        },
      ),
    );
    const mention = insight.recommendations.find((r) => r.startsWith('Matching runbooks'));
    expect(mention).toContain('crashloop-restart-then-rollback, generic-notify');
    expect(mention).toContain('crashloop-restart-then-rollback fits best');
  });

  it('does not claim a runbook of another category covers the case', () => {
    const insight = analyzeWithRules(
      ctx(
        'DiskPressure',
        {},
        { runbooks: [{ name: 'generic-notify', category: 'custom', description: 'Pages the owner.' }] },
      ),
    );
    expect(insight.recommendations).toContain(
      'Candidate runbook generic-notify (category custom): Pages the owner (rests on the disk category).',
    );
  });

  it('tells how to find the pods behind a workload', () => {
    const withApp = analyzeWithRules(ctx('ImagePullBackOff', { labels: { app: 'checkout' } }));
    expect(withApp.recommendations[0]).toContain('kubectl -n payments describe pods -l app=checkout');
    const pod = analyzeWithRules(ctx('ImagePullBackOff', { resource: 'Pod/web-1' }));
    expect(pod.recommendations[0]).toContain('kubectl -n payments describe pod/web-1');
  });

  it('mentions none when there are none', () => {
    expect(analyzeWithRules(ctx('OOMKilled')).recommendations.join('\n')).not.toMatch(/[Rr]unbook/);
  });
});

describe('scaleQuantity', () => {
  it.each<[string, number, string | undefined]>([
    ['512Mi', 1.5, '768Mi'],
    ['1Gi', 1.5, '1536Mi'],
    ['1.5Gi', 1.5, '2304Mi'],
    ['3Mi', 1.5, '4608Ki'],
    ['256Mi', 1.25, '320Mi'],
    ['500M', 1.5, '750M'],
    ['1G', 1.5, '1500M'],
    ['100', 1.5, '150'],
    ['101', 1.5, '152'],
    ['500m', 1.5, undefined],
    ['1e3', 1.5, undefined],
    ['', 1.5, undefined],
    ['lots', 1.5, undefined],
  ])('%s × %d → %s', (q, factor, expected) => {
    expect(scaleQuantity(q, factor)).toBe(expected);
  });
});
