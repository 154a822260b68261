import { signalSchema } from '../../contracts/incidents';
import { detectionEvent, newIncidentRecord, recoveredIncidentRecord } from '../../domain/incident-record';

const at = new Date('2026-03-01T10:00:00Z');

describe('newIncidentRecord', () => {
  it('takes the severity from the source when it has one', () => {
    const signal = signalSchema.parse({
      resource: 'Pod/api-1',
      namespace: 'shop',
      signalType: 'OOMKilled',
      severity: 'low',
    });
    const record = newIncidentRecord('INC-20260301-001', signal, at);
    expect(record).toMatchObject({
      name: 'INC-20260301-001',
      resourceKey: 'local/shop/Pod/api-1',
      correlationId: 'local/shop/Pod/api-1',
      severity: 'low',
      severitySource: 'source',
      state: 'Detected',
      acknowledged: false,
      snoozed: false,
      detectedAt: at,
      createdAt: at,
      lastUpdated: at,
      correlatedSignals: [],
      annotations: {},
    });
  });

  it('derives the severity from the risk score otherwise, and shares no objects between records', () => {
    const signal = signalSchema.parse({ resource: 'Pod/api-1', signalType: 'OOMKilled' });
    const a = newIncidentRecord('INC-20260301-001', signal, at);
    const b = newIncidentRecord('INC-20260301-002', signal, at);
    expect(a.severitySource).toBe('risk');
    expect(a.riskScore).toBeGreaterThan(0);
    a.annotations.x = 'y';
    a.correlatedSignals.push({ signalType: 'Custom', description: '', source: 'x', labels: {}, at });
    expect(b.annotations).toEqual({});
    expect(b.correlatedSignals).toEqual([]);
  });
});

describe('detectionEvent', () => {
  it('names the signal, resource and namespace', () => {
    const signal = signalSchema.parse({
      resource: 'Pod/api-1',
      signalType: 'HighCPU',
      detectionSource: 'alertmanager',
    });
    expect(detectionEvent(signal, 'high', at)).toMatchObject({
      type: 'Detection',
      source: 'alertmanager',
      message: 'HighCPU detected on Pod/api-1 in default',
      severity: 'high',
    });
  });
});

describe('recoveredIncidentRecord', () => {
  it('keeps what the workflow knows and marks the rest as lost', () => {
    const now = new Date('2026-03-01T11:00:00Z');
    const record = recoveredIncidentRecord(
      { name: 'INC-20260301-003', namespace: 'shop', resource: 'Deployment/api', severity: 'high', startedAt: at },
      {
        state: 'Escalated',
        acknowledged: true,
        acknowledgedBy: 'alice',
        acknowledgedAt: now.toISOString(),
        correlatedSignals: 0,
      },
      now,
    );
    expect(record).toMatchObject({
      state: 'Escalated',
      severity: 'high',
      signalType: 'Custom',
      detectionSource: 'reconciler',
      acknowledged: true,
      acknowledgedBy: 'alice',
      acknowledgedAt: now,
      snoozed: false,
      detectedAt: at,
      createdAt: now,
    });
    expect(record).not.toHaveProperty('snoozeUntil');
  });
});
