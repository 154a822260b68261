import type { AvailabilitySample, Change } from '../../domain/changes';
import type { IncidentEvidence, PodEvidence, SuspectedChange } from '../../domain/evidence';
import type { TimelineEvent } from '../../domain/incident';
import {
  ACTION_ITEM_PRIORITIES,
  ACTION_ITEM_STATUSES,
  availabilitySnapshots,
  buildPostmortemReport,
  cascadeChain,
  commitShaOf,
  currentReport,
  dueDate,
  gitCorrelationOf,
  podsAffected,
  replicasAffected,
  reportChanges,
  ROOT_CAUSE_CATEGORIES,
  rootCauseCategory,
  shortDuration,
  summarizeTrending,
  unavailableReplicaMinutes,
  type LegacyPostmortemReport,
  type PostmortemInput,
  type PostmortemInsight,
  type PostmortemReport,
  type RelatedIncident,
} from '../../domain/postmortem';
import {
  postmortemFeedbackSchema,
  postmortemPatchSchema,
  postmortemReportSchema,
  postmortemReviewSchema,
} from '../../contracts/postmortems';
import { editBody } from '../../cli/client/postmortems';

const T0 = new Date('2025-03-10T09:00:00.000Z');
const at = (ms: number) => new Date(T0.getTime() + ms);
const S = 1000;
const M = 60 * S;

const NO_TRENDING = { occurrenceCount: 0, windowDays: 30, relatedPostMortems: [], pattern: '' };

function input(overrides: Partial<PostmortemInput> = {}): PostmortemInput {
  return {
    incident: {
      name: 'INC-20250310-004',
      namespace: 'shop',
      resource: 'Deployment/checkout-api',
      signalType: 'OOMKilled',
      severity: 'critical',
      description: 'container app exceeded its 512Mi memory limit',
      detectedAt: T0,
      resolvedAt: at(12 * M + 30 * S),
      resolution: 'Raised the memory limit to 1Gi',
      resolvedBy: 'alice',
    },
    timeline: [],
    trending: NO_TRENDING,
    related: [],
    availability: [],
    ...overrides,
  };
}

const INSIGHT: PostmortemInsight = {
  rootCause: 'The container exceeded its memory limit under peak load.',
  analysis: 'Deployment/checkout-api in namespace shop reports OOMKilled.',
  confidence: 0.82,
  recommendations: ['Raise the memory limit of container app.', 'Add a memory usage alert at 80% of the limit'],
  cascadeAnalysis: '',
  relatedEvents: [],
  logAnalysis: 'java.lang.OutOfMemoryError: Java heap space (x14)',
  gitOpsContext: 'Argo CD app checkout synced 10m before detection',
};

const ev = (ms: number, type: TimelineEvent['type'], message: string): TimelineEvent => ({
  timestamp: at(ms),
  type,
  source: 'detector',
  message,
});

const related = (name: string, ms: number, extra: Partial<RelatedIncident> = {}): RelatedIncident => ({
  name,
  resource: 'Deployment/cart',
  signalType: 'HighLatency',
  severity: 'high',
  namespace: 'shop',
  detectedAt: at(ms),
  ...extra,
});

describe('buildPostmortemReport', () => {
  it('fills every spec field and matches the report schema', () => {
    const report = buildPostmortemReport(
      input({
        insight: INSIGHT,
        timeline: [ev(0, 'Detection', 'OOMKilled detected'), ev(12 * M + 30 * S, 'Resolved', 'Resolved by alice')],
        related: [related('INC-20250310-003', -2 * M)],
        trending: {
          occurrenceCount: 1,
          windowDays: 30,
          relatedPostMortems: ['PM-20250301-001'],
          pattern: 'x',
        },
      }),
    );
    expect(postmortemReportSchema.strict().parse(report)).toEqual(report);
    expect(Object.keys(report).sort()).toEqual(
      [
        'title',
        'severity',
        'duration',
        'detectedAt',
        'resolvedAt',
        'summary',
        'impact',
        'rootCause',
        'timeline',
        'remediationApplied',
        'actionItems',
        'lessonsLearned',
        'metricSnapshots',
        'blastRadius',
        'gitCorrelation',
        'trending',
        'gitOpsContext',
        'logAnalysisSummary',
        'cascadeChain',
        'dataNotes',
      ].sort(),
    );
    expect(report).toMatchObject({
      title: 'OOMKilled on Deployment/checkout-api (INC-20250310-004)',
      severity: 'critical',
      duration: '12m30s',
      detectedAt: '2025-03-10T09:00:00.000Z',
      resolvedAt: '2025-03-10T09:12:30.000Z',
      rootCause: { description: INSIGHT.rootCause, category: 'oomkill', confidence: 0.82 },
      timeline: [
        { time: '2025-03-10T09:00:00.000Z', event: 'Detection: OOMKilled detected' },
        { time: '2025-03-10T09:12:30.000Z', event: 'Resolved: Resolved by alice' },
      ],
      gitOpsContext: INSIGHT.gitOpsContext,
      logAnalysisSummary: INSIGHT.logAnalysis,
      trending: { occurrenceCount: 1, windowDays: 30, relatedPostMortems: ['PM-20250301-001'], pattern: 'x' },
      blastRadius: [
        {
          resource: { kind: 'Deployment', name: 'cart', namespace: 'shop' },
          impact: 'HighLatency (INC-20250310-003)',
          severity: 'high',
        },
      ],
      cascadeChain: ['INC-20250310-003', 'INC-20250310-004'],
    });
    expect(report.summary).toBe(
      'OOMKilled was detected on Deployment/checkout-api in namespace shop at 2025-03-10T09:00:00.000Z ' +
        '(severity critical): container app exceeded its 512Mi memory limit. ' +
        'Resolved by alice at 2025-03-10T09:12:30.000Z, 12m30s after detection: Raised the memory limit to 1Gi.',
    );
  });

  it('leaves fields without data empty or null, never invented, and says why', () => {
    const report = buildPostmortemReport(input({ incident: { ...input().incident, signalType: 'Mystery' } }));
    expect(report).toMatchObject({
      impact: {
        usersAffected: null,
        requestsAffected: '',
        revenueImpact: '',
        slosBreached: [],
        podsAffected: null,
        replicasAffected: null,
        unavailableReplicaMinutes: null,
      },
      rootCause: { description: '', category: '', confidence: 0 },
      timeline: [],
      remediationApplied: { runbook: '', steps: [], result: '' },
      actionItems: [],
      metricSnapshots: [],
      blastRadius: [],
      gitCorrelation: {
        commitSHA: '',
        commitMessage: '',
        author: '',
        timestamp: '',
        confidence: 0,
        filesChanged: [],
        change: '',
        reason: 'No evidence was collected: the incident has no analysis',
      },
      trending: NO_TRENDING,
      gitOpsContext: '',
      logAnalysisSummary: '',
      cascadeChain: [],
    });
    expect(report.dataNotes).toEqual([
      'impact.usersAffected: unknown; no source reports affected users (an operator may set it)',
      "impact.podsAffected: unknown; neither the evidence nor the incident's signals name a pod",
      'impact.replicasAffected: unknown; no availability samples were recorded for Deployment/checkout-api',
      'impact.unavailableReplicaMinutes: unknown; no availability samples were recorded for Deployment/checkout-api',
      'metricSnapshots: none; no availability samples were recorded for Deployment/checkout-api',
    ]);
    expect(postmortemReportSchema.strict().parse(report)).toEqual(report);
    // Only facts: the unacknowledged state and the time to resolve.
    expect(report.lessonsLearned).toEqual([
      'The incident was not acknowledged before it was resolved.',
      'Time to resolve: 12m30s.',
    ]);
  });

  it.each<[number, string]>([
    [0, '0s'],
    [350, '350ms'],
    [4 * M + 5 * S, '4m5s'],
    [60 * M + 2 * M + 3 * S, '1h2m3s'],
    [26 * 60 * M, '26h0m0s'],
  ])('formats a %p ms incident as the Go duration %p', (ms, text) => {
    expect(buildPostmortemReport(input({ incident: { ...input().incident, resolvedAt: at(ms) } })).duration).toBe(text);
  });

  it('turns recommendations into open action items, high and due in 7 days for critical/high', () => {
    for (const severity of ['critical', 'high'] as const) {
      const report = buildPostmortemReport(input({ insight: INSIGHT, incident: { ...input().incident, severity } }));
      expect(report.actionItems).toEqual(
        INSIGHT.recommendations.map((description) => ({
          priority: 'high',
          description,
          assignee: '',
          status: 'open',
          dueDate: '2025-03-17',
        })),
      );
    }
  });

  it('makes medium action items due in 14 days for medium/low incidents, skipping blank recommendations', () => {
    for (const severity of ['medium', 'low'] as const) {
      const report = buildPostmortemReport(
        input({
          insight: { ...INSIGHT, recommendations: ['Tune the HPA', '  '] },
          incident: { ...input().incident, severity },
        }),
      );
      expect(report.actionItems).toEqual([
        { priority: 'medium', description: 'Tune the HPA', assignee: '', status: 'open', dueDate: '2025-03-24' },
      ]);
    }
  });

  it('derives lessons only from recorded facts', () => {
    const report = buildPostmortemReport(
      input({
        insight: { ...INSIGHT, cascadeAnalysis: 'INC-20250310-003 on Deployment/cart came first.' },
        incident: {
          ...input().incident,
          acknowledgedAt: at(2 * M),
          acknowledgedBy: 'bob',
          escalatedAt: at(30 * S),
          correlatedSignals: [
            { signalType: 'HighMemory', at: at(M) },
            { signalType: 'PodNotReady', at: at(2 * M) },
            { signalType: 'HighMemory', at: at(3 * M) },
          ],
        },
        related: [related('INC-20250310-003', -2 * M)],
        trending: {
          occurrenceCount: 2,
          windowDays: 30,
          relatedPostMortems: [],
          pattern: '2 earlier incidents on Deployment/checkout-api in the 30 days before detection',
        },
      }),
    );
    expect(report.lessonsLearned).toEqual([
      'Time to acknowledge: 2m0s (bob).',
      'Time to resolve: 12m30s.',
      'Automation did not resolve it; escalated to on-call after 30s.',
      '3 correlated signals (HighMemory, PodNotReady) joined the incident: Deployment/checkout-api showed more than one symptom.',
      '1 other incident in namespace shop was detected within 10m0s (INC-20250310-003): investigate them together.',
      'INC-20250310-003 on Deployment/cart came first.',
      'Recurring problem: 2 earlier incidents on Deployment/checkout-api in the 30 days before detection.',
      'The analysis recommends 2 follow-ups, tracked as action items due 2025-03-17: ' +
        'Raise the memory limit of container app; Add a memory usage alert at 80% of the limit.',
    ]);
    expect(report.summary).toContain('3 further signals joined the incident (HighMemory, PodNotReady).');
    expect(report.summary).toContain('Acknowledged by bob 2m0s after detection.');
    expect(report.summary).toContain('Escalated to on-call 30s after detection.');
  });

  it('orders the timeline by time whatever order the events come in', () => {
    const report = buildPostmortemReport(
      input({ timeline: [ev(2 * M, 'Escalation', 'b'), ev(0, 'Detection', 'a'), ev(M, 'Analysis', 'c')] }),
    );
    expect(report.timeline.map((t) => t.event)).toEqual(['Detection: a', 'Analysis: c', 'Escalation: b']);
  });

  it('builds the cascade chain and blast radius in detection order', () => {
    const report = buildPostmortemReport(
      input({
        related: [
          related('INC-20250310-009', 4 * M, { resource: 'StatefulSet/db', signalType: 'DiskPressure' }),
          related('INC-20250310-001', -8 * M),
          related('INC-20250310-002', -1 * M, { resource: 'Pod/worker-0', severity: 'low' }),
        ],
      }),
    );
    expect(report.cascadeChain).toEqual([
      'INC-20250310-001',
      'INC-20250310-002',
      'INC-20250310-004',
      'INC-20250310-009',
    ]);
    expect(report.blastRadius.map((b) => [b.resource.kind, b.resource.name, b.impact, b.severity])).toEqual([
      ['Deployment', 'cart', 'HighLatency (INC-20250310-001)', 'high'],
      ['Pod', 'worker-0', 'HighLatency (INC-20250310-002)', 'low'],
      ['StatefulSet', 'db', 'DiskPressure (INC-20250310-009)', 'high'],
    ]);
  });
});

describe('cascadeChain', () => {
  it('is empty without related incidents and puts a simultaneous one first', () => {
    const self = { name: 'INC-1', detectedAt: T0 };
    expect(cascadeChain(self, [])).toEqual([]);
    expect(cascadeChain(self, [related('INC-2', 0)])).toEqual(['INC-2', 'INC-1']);
  });
});

describe('summarizeTrending', () => {
  const self = { resource: 'Deployment/checkout-api', signalType: 'OOMKilled' };
  it('is empty when nothing happened before', () => {
    expect(summarizeTrending(self, { onResource: 0, elsewhere: 0, postmortems: [] })).toEqual(NO_TRENDING);
  });
  it('counts the same resource and the same category separately in the pattern', () => {
    expect(summarizeTrending(self, { onResource: 2, elsewhere: 1, postmortems: ['PM-1'] })).toEqual({
      occurrenceCount: 3,
      windowDays: 30,
      relatedPostMortems: ['PM-1'],
      pattern:
        '2 earlier incidents on Deployment/checkout-api and 1 earlier oomkill incident on other resources in the 30 days before detection',
    });
  });
});

describe('vocabularies and helpers', () => {
  it('exports the decided values', () => {
    expect(ROOT_CAUSE_CATEGORIES).toEqual(['oomkill', 'crashloop', 'latency', 'scaling', 'disk', 'network', 'custom']);
    expect(ACTION_ITEM_PRIORITIES).toEqual(['high', 'medium', 'low']);
    expect(ACTION_ITEM_STATUSES).toEqual(['open', 'in-progress', 'done']);
    expect(rootCauseCategory('HighErrorRate')).toBe('latency');
    expect(rootCauseCategory('nope')).toBe('');
    expect(dueDate(new Date('2025-12-28T23:59:59Z'), 7)).toBe('2026-01-04');
  });

  it('validates review and feedback bodies', () => {
    expect(postmortemReviewSchema.parse({ reviewer: 'alice' })).toEqual({ reviewer: 'alice', notes: '' });
    expect(postmortemReviewSchema.safeParse({ reviewer: '' }).success).toBe(false);
    expect(postmortemReviewSchema.safeParse({ reviewer: 'a', extra: 1 }).success).toBe(false);
    expect(postmortemFeedbackSchema.safeParse({}).success).toBe(false);
    expect(postmortemFeedbackSchema.safeParse({ remediationAccuracy: 6 }).success).toBe(false);
    expect(postmortemFeedbackSchema.safeParse({ remediationAccuracy: 2.5 }).success).toBe(false);
    expect(postmortemFeedbackSchema.parse({ remediationAccuracy: 5 })).toEqual({ remediationAccuracy: 5 });
  });
});

// ---------------------------------------------------------------------------------------------
// Impact, change correlation and snapshots from observations (issue 60)
// ---------------------------------------------------------------------------------------------

const RESOLVED = at(12 * M + 30 * S);

const sample = (ms: number, desired: number, available: number): AvailabilitySample => ({
  cluster: 'prod',
  namespace: 'shop',
  resource: 'Deployment/checkout-api',
  at: at(ms),
  desired,
  available,
});

/** 3/3 before detection, 1 then 0 available, back to 3 at 10m, and a sample after resolution. */
const OUTAGE = [
  sample(20 * M, 3, 3),
  sample(-5 * M, 3, 3),
  sample(1 * M, 3, 1),
  sample(4 * M, 3, 0),
  sample(10 * M, 3, 3),
];

const pod = (name: string, extra: Partial<PodEvidence> = {}): PodEvidence => ({
  name,
  node: 'node-a',
  phase: 'Running',
  restarts: 0,
  waitingReason: '',
  previousLogs: [],
  currentLogs: [],
  ...extra,
});

const CHANGE: Change = {
  id: 'chg-7f3a',
  cluster: 'prod',
  namespace: 'shop',
  resource: 'Deployment/checkout-api',
  type: 'Rollout',
  at: at(-9 * M),
  revision: 8,
  previousRevision: 7,
  summary: 'image app: shop/checkout:1.4.1 → shop/checkout:1.4.2',
  diff: [{ field: 'image app', from: 'shop/checkout:1.4.1', to: 'shop/checkout:1.4.2' }],
  by: { manager: 'argocd-controller', changeCause: '', source: 'argocd revision 1A2B3C4D', foghorn: false },
  workloads: ['Deployment/checkout-api'],
};

const SUSPECT: SuspectedChange = {
  change: CHANGE.id,
  resource: CHANGE.resource,
  type: 'Rollout',
  revision: 8,
  previousRevision: 7,
  summary: CHANGE.summary,
  at: CHANGE.at,
  leadMs: 9 * M,
  confidence: 0.85,
  reason: 'The rollout reached the cluster 9m before the first failure and the new revision failed.',
  by: CHANGE.by,
  evidence: 'E1',
};

function evidence(extra: Partial<IncidentEvidence> = {}): IncidentEvidence {
  return {
    collectedAt: at(30 * S),
    firstSignalAt: T0,
    windowMs: 2 * 60 * M,
    ownerChain: ['Pod/checkout-api-7d9f-abcde', 'ReplicaSet/checkout-api-7d9f', 'Deployment/checkout-api'],
    changes: [CHANGE],
    suspect: SUSPECT,
    revisions: [],
    pods: [],
    events: [],
    nodes: [],
    items: [],
    notes: [],
    ...extra,
  };
}

describe('podsAffected', () => {
  const incident = { resource: 'Deployment/checkout-api' };

  it('is null when no source names a pod', () => {
    expect(podsAffected(incident)).toBeNull();
    expect(podsAffected(incident, { pods: [] })).toBeNull();
    expect(podsAffected({ ...incident, labels: { object: 'Deployment/checkout-api' } })).toBeNull();
  });

  it("counts the distinct pods the evidence and the incident's signals name as failing", () => {
    // The evidence lists failing pods only (not ready or restarted).
    const pods = [pod('checkout-api-1', { restarts: 4 }), pod('checkout-api-2', { waitingReason: 'CrashLoopBackOff' })];
    expect(
      podsAffected(
        {
          ...incident,
          labels: { object: 'Pod/checkout-api-1', reason: 'OOMKilled' },
          correlatedSignals: [
            { signalType: 'OOMKilled', at: at(M), labels: { object: 'Pod/checkout-api-6' } },
            { signalType: 'CrashLoopBackOff', at: at(2 * M), labels: { pod: 'checkout-api-7' } },
            { signalType: 'OOMKilled', at: at(3 * M), labels: { object: 'Pod/checkout-api-2', pod: 'checkout-api-2' } },
            { signalType: 'HighMemory', at: at(4 * M) },
          ],
        },
        { pods },
      ),
    ).toBe(4);
    expect(podsAffected(incident, { pods })).toBe(2);
  });

  it('counts a Pod incident itself', () => {
    expect(podsAffected({ resource: 'Pod/worker-0' })).toBe(1);
    expect(podsAffected({ resource: 'Pod/worker-0', labels: { object: 'Pod/worker-0', pod: 'worker-0' } })).toBe(1);
  });
});

describe('availability: replicasAffected, unavailableReplicaMinutes, snapshots', () => {
  it('integrates desired − available over detection → resolution from the state at detection', () => {
    // [0,1m) 0 · [1m,4m) 2 × 3 · [4m,10m) 3 × 6 · [10m,12m30s) 0 → 24 replica-minutes.
    expect(unavailableReplicaMinutes(OUTAGE, T0, RESOLVED)).toBe(24);
    expect(replicasAffected(OUTAGE, T0, RESOLVED)).toBe(3);
  });

  it('rounds to one decimal and never counts more available than desired as negative', () => {
    const samples = [sample(-M, 2, 1), sample(20 * S, 2, 3)];
    expect(unavailableReplicaMinutes(samples, T0, RESOLVED)).toBe(0.3); // 1 replica × 20s
    expect(replicasAffected(samples, T0, RESOLVED)).toBe(1);
  });

  it('starts at the first sample when none precedes detection, and ignores samples after resolution', () => {
    const samples = [sample(2 * M, 3, 1), sample(15 * M, 3, 0)];
    expect(unavailableReplicaMinutes(samples, T0, RESOLVED)).toBe(21); // 2 × 10m30s
    expect(replicasAffected(samples, T0, RESOLVED)).toBe(2);
  });

  it('is null without samples, and 0 when every sample was fully available', () => {
    expect(unavailableReplicaMinutes([], T0, RESOLVED)).toBeNull();
    expect(replicasAffected([], T0, RESOLVED)).toBeNull();
    expect(replicasAffected([sample(15 * M, 3, 0)], T0, RESOLVED)).toBeNull();
    expect(unavailableReplicaMinutes([sample(-M, 3, 3)], T0, RESOLVED)).toBe(0);
    expect(replicasAffected([sample(-M, 3, 3)], T0, RESOLVED)).toBe(0);
  });

  it('snapshots availableReplicas before (at detection), during (lowest) and after (resolution)', () => {
    expect(availabilitySnapshots('Deployment/checkout-api', OUTAGE, T0, RESOLVED)).toEqual([
      {
        name: 'Deployment/checkout-api availableReplicas',
        value: '3/3',
        timestamp: at(-5 * M).toISOString(),
        phase: 'before',
      },
      {
        name: 'Deployment/checkout-api availableReplicas',
        value: '0/3',
        timestamp: at(4 * M).toISOString(),
        phase: 'during',
      },
      {
        name: 'Deployment/checkout-api availableReplicas',
        value: '3/3',
        timestamp: at(20 * M).toISOString(),
        phase: 'after',
      },
    ]);
    // Down already at detection: the lowest is the state at detection, stamped at detection.
    expect(
      availabilitySnapshots('Deployment/x', [sample(-M, 2, 0), sample(5 * M, 2, 2)], T0, RESOLVED).map((s) => [
        s.phase,
        s.value,
        s.timestamp,
      ]),
    ).toEqual([
      ['before', '0/2', at(-M).toISOString()],
      ['during', '0/2', T0.toISOString()],
    ]);
    expect(availabilitySnapshots('Deployment/x', [], T0, RESOLVED)).toEqual([]);
  });
});

describe('gitCorrelation from the suspected change', () => {
  it('takes a revision or sha the source names', () => {
    expect(commitShaOf('argocd revision 1a2b3c4')).toBe('1a2b3c4');
    expect(commitShaOf('argocd revision 1A2B3C4D')).toBe('1a2b3c4d');
    expect(commitShaOf('flux main@sha1:0123456789abcdef0123456789abcdef01234567')).toBe(
      '0123456789abcdef0123456789abcdef01234567',
    );
    expect(commitShaOf('deployed commit=deadbee1')).toBe('deadbee1');
    expect(commitShaOf('helm chart shop-1.4.2')).toBe('');
    expect(commitShaOf('argocd revision main')).toBe('');
    expect(commitShaOf('')).toBe('');
  });

  it('fills the spec fields, the change id and the reason from the suspect', () => {
    expect(gitCorrelationOf(evidence(), true)).toEqual({
      commitSHA: '1a2b3c4d',
      commitMessage: CHANGE.summary,
      author: 'argocd-controller',
      timestamp: at(-9 * M).toISOString(),
      confidence: 0.85,
      filesChanged: [],
      change: 'chg-7f3a',
      reason: SUSPECT.reason,
    });
    const byCause = { ...SUSPECT, by: { manager: '', changeCause: 'kubectl set image', source: '', foghorn: false } };
    expect(gitCorrelationOf(evidence({ suspect: byCause }), true)).toMatchObject({
      commitSHA: '',
      author: 'kubectl set image',
    });
  });

  it('has confidence 0 only without a suspect, and then says why', () => {
    const none = { commitSHA: '', commitMessage: '', author: '', timestamp: '', confidence: 0, change: '' };
    expect(gitCorrelationOf(evidence({ suspect: undefined, changes: [] }), true)).toMatchObject({
      ...none,
      reason: 'No change reached the cluster in the 2h before the first failure',
    });
    expect(gitCorrelationOf(evidence({ suspect: undefined }), true)).toMatchObject({
      ...none,
      reason: '1 change reached the cluster in the 2h before the first failure; the evidence points at none of them',
    });
    expect(gitCorrelationOf(undefined, true).reason).toBe(
      'No evidence was collected with the analysis (evidence is collected for workloads in registered clusters)',
    );
    expect(gitCorrelationOf(undefined, false).reason).toBe('No evidence was collected: the incident has no analysis');
  });

  it('says windows as people do', () => {
    expect(shortDuration(2 * 60 * M)).toBe('2h');
    expect(shortDuration(90 * M)).toBe('1h30m');
    expect(shortDuration(45 * M)).toBe('45m');
    expect(shortDuration(90 * S)).toBe('1m30s');
  });
});

describe('a report built from evidence and availability samples', () => {
  const report = buildPostmortemReport(
    input({
      insight: INSIGHT,
      evidence: evidence({ pods: [pod('checkout-api-1', { restarts: 3 })] }),
      availability: OUTAGE,
    }),
  );

  it('reports observed impact, the suspected change and real snapshots', () => {
    expect(postmortemReportSchema.strict().parse(report)).toEqual(report);
    expect(report.impact).toEqual({
      usersAffected: null,
      requestsAffected: '',
      revenueImpact: '',
      slosBreached: [],
      podsAffected: 1,
      replicasAffected: 3,
      unavailableReplicaMinutes: 24,
    });
    expect(report.gitCorrelation).toMatchObject({ change: 'chg-7f3a', confidence: 0.85, commitSHA: '1a2b3c4d' });
    expect(report.metricSnapshots.map((m) => m.phase)).toEqual(['before', 'during', 'after']);
    expect(report.dataNotes).toEqual([
      'impact.usersAffected: unknown; no source reports affected users (an operator may set it)',
    ]);
  });

  it('notes a count that starts after detection, a partial pod count, and unsampled kinds', () => {
    const late = buildPostmortemReport(
      input({
        availability: [sample(2 * M, 3, 1)],
        incident: {
          ...input().incident,
          labels: { object: 'Pod/checkout-api-1' },
          correlatedSignals: [{ signalType: 'OOMKilled', at: at(M), labels: { object: 'Pod/checkout-api-2' } }],
          correlatedSignalCount: 40,
        },
      }),
    );
    const first = at(2 * M).toISOString();
    expect(late.impact).toMatchObject({ podsAffected: 2, replicasAffected: 2, unavailableReplicaMinutes: 21 });
    expect(late.dataNotes.slice(1)).toEqual([
      'impact.podsAffected: a lower bound; the incident keeps the newest 1 of its 40 joined signals',
      `impact.replicasAffected: from ${first} on; no availability sample of Deployment/checkout-api precedes detection, the first is from ${first}`,
      `impact.unavailableReplicaMinutes: counted from ${first}; no availability sample of Deployment/checkout-api precedes detection, the first is from ${first}`,
      `metricSnapshots: no 'before' snapshot; no availability sample of Deployment/checkout-api precedes detection, the first is from ${first}`,
    ]);

    const statefulSet = buildPostmortemReport(
      input({ incident: { ...input().incident, resource: 'StatefulSet/ledger' } }),
    );
    expect(statefulSet.dataNotes).toContain(
      'metricSnapshots: none; availability is sampled for Deployments only, not for StatefulSet/ledger',
    );
  });
});

describe('currentReport (reports stored before impact was measured)', () => {
  it('reads the placeholder zeros of a legacy report as unknown, with notes', () => {
    const built = buildPostmortemReport(input());
    const { dataNotes: _notes, ...rest } = built;
    const legacy: LegacyPostmortemReport = {
      ...rest,
      impact: { usersAffected: 0, requestsAffected: '', revenueImpact: '', slosBreached: [] },
      gitCorrelation: { commitSHA: '', commitMessage: '', author: '', timestamp: '', confidence: 0, filesChanged: [] },
    };
    const current = currentReport(legacy);
    expect(postmortemReportSchema.strict().parse(current)).toEqual(current);
    expect(current.impact.usersAffected).toBeNull();
    expect(current.impact.podsAffected).toBeNull();
    expect(current.gitCorrelation.reason).toBe('Not recorded: the report was generated before Foghorn measured impact');
    expect(current.dataNotes).toHaveLength(5);
    // A current report comes back as it is.
    expect(currentReport(built)).toBe(built);
  });
});

describe('reportChanges (PATCH)', () => {
  const report: PostmortemReport = buildPostmortemReport(input({ insight: INSIGHT }));

  it('lists each changed field with its previous and new value; equal values are no change', () => {
    expect(reportChanges(report, {})).toEqual([]);
    expect(
      reportChanges(report, {
        title: report.title,
        impact: { requestsAffected: '' },
        rootCause: { category: 'oomkill' },
        // The same items with their keys in another order.
        actionItems: report.actionItems.map((a) => ({
          status: a.status,
          dueDate: a.dueDate,
          assignee: a.assignee,
          description: a.description,
          priority: a.priority,
        })),
      }),
    ).toEqual([]);
    expect(
      reportChanges(report, {
        title: 'Checkout ran out of memory',
        impact: { requestsAffected: '12k failed checkouts', slosBreached: ['checkout-availability'] },
        rootCause: { description: 'A heap leak in 1.4.2' },
        lessonsLearned: ['Canary memory-heavy releases'],
      }),
    ).toEqual([
      { field: 'title', from: report.title, to: 'Checkout ran out of memory' },
      { field: 'impact.requestsAffected', from: '', to: '12k failed checkouts' },
      { field: 'impact.slosBreached', from: [], to: ['checkout-availability'] },
      { field: 'rootCause.description', from: INSIGHT.rootCause, to: 'A heap leak in 1.4.2' },
      { field: 'lessonsLearned', from: report.lessonsLearned, to: ['Canary memory-heavy releases'] },
    ]);
  });

  it('drops the notes of a field it fills, as a dataNotes change', () => {
    const changes = reportChanges(report, { impact: { usersAffected: 1200, podsAffected: null } });
    expect(changes).toEqual([
      { field: 'impact.usersAffected', from: null, to: 1200 },
      { field: 'dataNotes', from: report.dataNotes, to: report.dataNotes.slice(1) },
    ]);
    // Setting a field to null (unknown) keeps its notes; so does an empty list.
    expect(reportChanges(report, { impact: { podsAffected: null }, metricSnapshots: [] })).toEqual([]);
  });
});

describe('the edit body (postmortemPatchSchema)', () => {
  it('takes a partial report and refuses unknown keys and wrong types', () => {
    expect(postmortemPatchSchema.parse({})).toEqual({});
    expect(
      postmortemPatchSchema.parse({
        impact: { usersAffected: 1200 },
        gitCorrelation: { timestamp: '2025-03-10T10:00:00+01:00' },
        metricSnapshots: [{ name: 'n', value: '1', timestamp: '2025-03-10T09:00:00Z', phase: 'during' }],
      }),
    ).toEqual({
      impact: { usersAffected: 1200 },
      gitCorrelation: { timestamp: '2025-03-10T09:00:00.000Z' },
      metricSnapshots: [{ name: 'n', value: '1', timestamp: '2025-03-10T09:00:00.000Z', phase: 'during' }],
    });
    for (const bad of [
      { severity: 'low' },
      { impact: { users: 1 } },
      { impact: { usersAffected: -1 } },
      { impact: { usersAffected: 1.5 } },
      { impact: { usersAffected: '1200' } },
      { rootCause: { confidence: 0.9 } },
      { rootCause: { category: 'mystery' } },
      { actionItems: [{ priority: 'urgent', description: 'x', assignee: '', status: 'open', dueDate: '2025-03-01' }] },
      { gitCorrelation: { timestamp: 'yesterday' } },
      { lessonsLearned: 'one' },
      { dataNotes: [] },
    ])
      expect({ bad, ok: postmortemPatchSchema.safeParse(bad).success }).toEqual({ bad, ok: false });
  });
});

describe('foghorn postmortems edit: the body it sends', () => {
  it('sets dotted fields, text as written and the rest as JSON, on top of a file', () => {
    expect(
      editBody(
        ['impact.usersAffected=1200', 'title=404', 'gitCorrelation.commitSHA=1234567', 'lessonsLearned=["a","b"]'],
        { impact: { revenueImpact: 'none' }, summary: 's' },
      ),
    ).toEqual({
      impact: { revenueImpact: 'none', usersAffected: 1200 },
      summary: 's',
      title: '404',
      gitCorrelation: { commitSHA: '1234567' },
      lessonsLearned: ['a', 'b'],
    });
    expect(editBody(['impact.usersAffected=null'])).toEqual({ impact: { usersAffected: null } });
    expect(() => editBody(['impact.usersAffected=many'])).toThrow(/must be JSON/);
    expect(() => editBody(['title'])).toThrow(/expected <field>=<value>/);
    expect(() => editBody([], ['not', 'an', 'object'])).toThrow(/JSON object/);
  });
});
