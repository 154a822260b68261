import { SEVERITIES, SIGNAL_TYPES, type Severity, type SignalType } from '../../domain/vocabulary';
import { riskScore, severityFromRisk, signalWeight } from '../../domain/risk';

describe('signalWeight', () => {
  it.each<[SignalType, number]>([
    ['OOMKilled', 40],
    ['HighErrorRate', 30],
    ['CrashLoopBackOff', 25],
    ['DeploymentFailing', 25],
    ['HighLatency', 20],
    ['PodNotReady', 20],
    ['HighCPU', 15],
    ['HighMemory', 15],
    ['ImagePullBackOff', 10],
    ['DiskPressure', 10],
    ['NetworkUnavailable', 10],
    ['Custom', 10],
  ])('%s weighs %i', (type, weight) => {
    expect(signalWeight(type)).toBe(weight);
  });

  it('covers every signal type', () => {
    for (const type of SIGNAL_TYPES) expect(signalWeight(type)).toBeGreaterThan(0);
  });
});

describe('riskScore', () => {
  it.each<[SignalType, Severity | undefined, number, number]>([
    // signal weight alone
    ['OOMKilled', undefined, 0, 40],
    ['Custom', undefined, 0, 10],
    ['HighCPU', 'low', 0, 15],
    // severity bonus
    ['OOMKilled', 'critical', 0, 80],
    ['HighErrorRate', 'high', 0, 55],
    ['CrashLoopBackOff', 'medium', 0, 35],
    ['PodNotReady', 'low', 0, 20],
    ['HighLatency', 'critical', 0, 60],
    // correlated signals: 10 each
    ['HighMemory', undefined, 1, 25],
    ['DeploymentFailing', 'medium', 2, 55],
    ['DiskPressure', 'high', 3, 65],
    // cap at 100
    ['OOMKilled', 'critical', 2, 100],
    ['OOMKilled', 'critical', 1, 90],
    ['Custom', 'low', 50, 100],
    ['HighErrorRate', 'critical', 3, 100],
    // defensive inputs
    ['Custom', undefined, -3, 10],
    ['Custom', undefined, 1.9, 20],
    ['Custom', undefined, Number.NaN, 10],
    ['Custom', undefined, Number.POSITIVE_INFINITY, 100],
  ])('%s / %s / %d correlated → %i', (type, severity, correlated, expected) => {
    expect(riskScore(type, severity, correlated)).toBe(expected);
  });

  it('is always an integer in [0, 100]', () => {
    for (const type of SIGNAL_TYPES)
      for (const severity of [...SEVERITIES, undefined])
        for (const correlated of [0, 1, 2, 5, 20]) {
          const score = riskScore(type, severity, correlated);
          expect(Number.isInteger(score)).toBe(true);
          expect(score).toBeGreaterThanOrEqual(0);
          expect(score).toBeLessThanOrEqual(100);
        }
  });

  it('never decreases as signals correlate or severity rises', () => {
    const order: (Severity | undefined)[] = [undefined, 'low', 'medium', 'high', 'critical'];
    for (const type of SIGNAL_TYPES) {
      for (let i = 1; i < order.length; i++)
        expect(riskScore(type, order[i], 0)).toBeGreaterThanOrEqual(riskScore(type, order[i - 1], 0));
      for (let n = 1; n < 10; n++)
        expect(riskScore(type, 'medium', n)).toBeGreaterThanOrEqual(riskScore(type, 'medium', n - 1));
    }
  });
});

describe('severityFromRisk', () => {
  it.each<[number, Severity]>([
    [100, 'critical'],
    [80, 'critical'],
    [79, 'high'],
    [79.9, 'high'],
    [60, 'high'],
    [59, 'medium'],
    [30, 'medium'],
    [29, 'low'],
    [10, 'low'],
    [0, 'low'],
  ])('%d → %s', (score, severity) => {
    expect(severityFromRisk(score)).toBe(severity);
  });

  it.each<[SignalType, number, Severity]>([
    ['OOMKilled', 0, 'medium'], // 40
    ['OOMKilled', 2, 'high'], // 60
    ['OOMKilled', 4, 'critical'], // 80
    ['HighErrorRate', 0, 'medium'], // 30
    ['HighCPU', 0, 'low'], // 15
    ['Custom', 2, 'medium'], // 30
  ])('an unrated %s with %i correlated signals is %s', (type, correlated, severity) => {
    expect(severityFromRisk(riskScore(type, undefined, correlated))).toBe(severity);
  });
});
