import type { TimelineEvent } from '../../domain/incident';
import {
  ACTION_ITEM_PRIORITIES,
  ACTION_ITEM_STATUSES,
  buildPostmortemReport,
  cascadeChain,
  dueDate,
  ROOT_CAUSE_CATEGORIES,
  rootCauseCategory,
  summarizeTrending,
  type PostmortemInput,
  type PostmortemInsight,
  type RelatedIncident,
} from '../../domain/postmortem';
import { postmortemFeedbackSchema, postmortemReportSchema, postmortemReviewSchema } from '../../contracts/postmortems';

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

  it('leaves fields without data empty, never invented', () => {
    const report = buildPostmortemReport(input({ incident: { ...input().incident, signalType: 'Mystery' } }));
    expect(report).toMatchObject({
      impact: { usersAffected: 0, requestsAffected: '', revenueImpact: '', slosBreached: [] },
      rootCause: { description: '', category: '', confidence: 0 },
      timeline: [],
      remediationApplied: { runbook: '', steps: [], result: '' },
      actionItems: [],
      metricSnapshots: [],
      blastRadius: [],
      gitCorrelation: { commitSHA: '', commitMessage: '', author: '', timestamp: '', confidence: 0, filesChanged: [] },
      trending: NO_TRENDING,
      gitOpsContext: '',
      logAnalysisSummary: '',
      cascadeChain: [],
    });
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
