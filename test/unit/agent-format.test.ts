import {
  formatIncidentDetail,
  formatIncidentList,
  formatPostmortem,
  formatShellRun,
  type IncidentFacts,
  type PostmortemFacts,
} from '../../domain/agent-format';
import type { TimelineEvent } from '../../domain/incident';

const now = new Date('2026-03-01T12:00:00.000Z');
const minutesAgo = (m: number) => new Date(now.getTime() - m * 60_000);

const line = (n: number) => ({
  name: `INC-20260301-${String(n).padStart(3, '0')}`,
  state: 'Escalated' as const,
  severity: 'high' as const,
  resource: `Deployment/app-${n}`,
  namespace: 'shop',
  detectedAt: minutesAgo(n),
});

describe('formatIncidentList', () => {
  it('says so when nothing is open, or nothing is in the asked state', () => {
    expect(formatIncidentList([], { total: 0, now })).toBe('No open incidents.');
    expect(formatIncidentList([], { total: 0, now, state: 'Failed' })).toBe('No Failed incidents.');
  });

  it('shows one line per incident: name, state, severity, resource, age', () => {
    const text = formatIncidentList([line(1), { ...line(90), state: 'Detected', severity: 'critical' }], {
      total: 2,
      now,
    });
    expect(text.split('\n')).toEqual([
      '2 open incidents:',
      'INC-20260301-001  Escalated  high  shop/Deployment/app-1  age 1m0s',
      'INC-20260301-090  Detected  critical  shop/Deployment/app-90  age 1h30m0s',
    ]);
    expect(formatIncidentList([line(1)], { total: 1, now, state: 'Escalated' })).toMatch(/^1 Escalated incident:\n/);
  });

  it('caps the list at 20 lines and counts the rest', () => {
    const items = Array.from({ length: 25 }, (_, i) => line(i + 1));
    const lines = formatIncidentList(items, { total: 42, now }).split('\n');
    expect(lines[0]).toBe('42 open incidents:');
    expect(lines.filter((l) => l.startsWith('INC-'))).toHaveLength(20);
    expect(lines.at(-1)).toBe('…and 22 more');
    expect(formatIncidentList(items.slice(0, 20), { total: 20, now })).not.toContain('more');
  });
});

describe('formatIncidentDetail', () => {
  const incident: IncidentFacts = {
    ...line(30),
    signalType: 'OOMKilled',
    description: 'container api was OOMKilled',
    riskScore: 65,
    analysisResult: { rootCause: 'memory limit too low', recommendation: 'raise it to 768Mi', confidence: 0.82 },
    insight: 'AI-20260301-001',
    acknowledged: true,
    acknowledgedBy: 'webhook:alice',
    acknowledgedAt: minutesAgo(10),
    acknowledgeMessage: 'on it',
    snoozeUntil: new Date(now.getTime() + 3_600_000),
    snoozedBy: 'webhook:bob',
    snoozeReason: 'deploy window',
    postmortem: '',
  };
  const events: TimelineEvent[] = Array.from({ length: 8 }, (_, i) => ({
    timestamp: minutesAgo(30 - i),
    type: 'Analysis',
    source: 'ai-engine',
    message: `event ${i + 1}`,
  }));

  it('names state, severity, risk, resource, who acted, the analysis and the latest events', () => {
    const text = formatIncidentDetail(incident, events, now);
    expect(text.split('\n')).toEqual([
      'INC-20260301-030: OOMKilled on Deployment/app-30 in shop',
      'state: Escalated  severity: high  risk: 65',
      'detected: 2026-03-01T11:30:00Z (30m0s ago)',
      'description: container api was OOMKilled',
      'acknowledged by webhook:alice at 2026-03-01T11:50:00Z: on it',
      'snoozed until 2026-03-01T13:00:00Z by webhook:bob: deploy window',
      'root cause: memory limit too low (confidence 82%)',
      'recommendation: raise it to 768Mi',
      'insight: AI-20260301-001',
      'latest events (5 of 8):',
      '  2026-03-01T11:33:00Z Analysis (ai-engine): event 4',
      '  2026-03-01T11:34:00Z Analysis (ai-engine): event 5',
      '  2026-03-01T11:35:00Z Analysis (ai-engine): event 6',
      '  2026-03-01T11:36:00Z Analysis (ai-engine): event 7',
      '  2026-03-01T11:37:00Z Analysis (ai-engine): event 8',
    ]);
  });

  it('leaves out what has no data, and a snooze that is over', () => {
    const bare: IncidentFacts = {
      ...incident,
      description: '',
      analysisResult: { rootCause: '', recommendation: '', confidence: 0 },
      insight: '',
      acknowledged: false,
      snoozeUntil: minutesAgo(1),
      state: 'Resolved',
      resolvedAt: minutesAgo(5),
      resolvedBy: 'webhook:alice',
      resolution: 'Manually resolved via dashboard',
      postmortem: 'PM-20260301-001',
    };
    expect(formatIncidentDetail(bare, [], now).split('\n')).toEqual([
      'INC-20260301-030: OOMKilled on Deployment/app-30 in shop',
      'state: Resolved  severity: high  risk: 65',
      'detected: 2026-03-01T11:30:00Z (30m0s ago)',
      'resolved at 2026-03-01T11:55:00Z by webhook:alice: Manually resolved via dashboard',
      'postmortem: PM-20260301-001',
    ]);
  });
});

describe('formatPostmortem', () => {
  const pm: PostmortemFacts = {
    name: 'PM-20260301-001',
    incident: 'INC-20260301-030',
    state: 'InReview',
    reviewer: 'alice',
    report: {
      title: 'OOMKilled on Deployment/app-30',
      severity: 'high',
      duration: '25m0s',
      detectedAt: '2026-03-01T11:30:00Z',
      resolvedAt: '2026-03-01T11:55:00Z',
      summary: 'The api container ran out of memory.',
      impact: {
        usersAffected: null,
        requestsAffected: '',
        revenueImpact: '',
        slosBreached: [],
        podsAffected: null,
        replicasAffected: null,
        unavailableReplicaMinutes: null,
      },
      rootCause: { description: 'memory limit too low', category: 'oomkill', confidence: 0.8 },
      timeline: [],
      remediationApplied: { runbook: '', steps: [], result: '' },
      actionItems: [
        {
          priority: 'high',
          description: 'Raise the memory limit',
          assignee: '',
          status: 'open',
          dueDate: '2026-03-08',
        },
      ],
      lessonsLearned: ['Size limits from observed peaks'],
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
      trending: { occurrenceCount: 0, windowDays: 30, relatedPostMortems: [], pattern: '' },
      gitOpsContext: '',
      logAnalysisSummary: '',
      cascadeChain: [],
      dataNotes: [],
    },
  };

  it('gives the headline facts, action items and lessons, and nothing empty', () => {
    expect(formatPostmortem(pm).split('\n')).toEqual([
      'PM-20260301-001 (InReview) for INC-20260301-030: OOMKilled on Deployment/app-30',
      'severity: high  duration: 25m0s  detected: 2026-03-01T11:30:00Z  resolved: 2026-03-01T11:55:00Z',
      'summary: The api container ran out of memory.',
      'root cause: memory limit too low [oomkill] (confidence 80%)',
      'reviewer: alice',
      'action items:',
      '  - [high] Raise the memory limit (due 2026-03-08, open)',
      'lessons learned:',
      '  - Size limits from observed peaks',
    ]);
  });
});

describe('formatShellRun', () => {
  it('fences the output and says how the command ended', () => {
    expect(formatShellRun('echo hi', { exitCode: 0, signal: null, output: 'hi\n', timedOut: false })).toBe(
      '$ echo hi\n```\nhi\n```\nexit code 0',
    );
    expect(formatShellRun('true', { exitCode: 0, signal: null, output: '', timedOut: false })).toContain('(no output)');
    expect(formatShellRun('sleep 9', { exitCode: null, signal: 'SIGKILL', output: '', timedOut: true })).toMatch(
      /timed out and was killed \(SIGKILL\)$/,
    );
    expect(formatShellRun('kill $$', { exitCode: null, signal: 'SIGTERM', output: '', timedOut: false })).toMatch(
      /killed by SIGTERM$/,
    );
  });
});
