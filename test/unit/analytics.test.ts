import { improvement, trendSeries } from '../../domain/analytics';
import { ConfigError, parseConfig } from '../../config/env';
import { DEFAULT_SLA_TARGETS, parseSlaTargets, SlaError } from '../../domain/sla';

const M = 60_000;
const H = 60 * M;

describe('SLA targets', () => {
  it('default to respond/resolve critical 5m/1h, high 15m/4h, medium 1h/24h, low 4h/72h', () => {
    expect(DEFAULT_SLA_TARGETS).toEqual({
      critical: { respondMs: 5 * M, resolveMs: 1 * H },
      high: { respondMs: 15 * M, resolveMs: 4 * H },
      medium: { respondMs: 1 * H, resolveMs: 24 * H },
      low: { respondMs: 4 * H, resolveMs: 72 * H },
    });
  });

  it('parse FOGHORN_SLA_TARGETS; the severities left out keep their defaults', () => {
    expect(parseSlaTargets('critical=2m/30m, low=1h30m/48h')).toEqual({
      ...DEFAULT_SLA_TARGETS,
      critical: { respondMs: 2 * M, resolveMs: 30 * M },
      low: { respondMs: 90 * M, resolveMs: 48 * H },
    });
    expect(parseSlaTargets('')).toEqual(DEFAULT_SLA_TARGETS);
  });

  it.each([
    ['critical=5m', 'expected <severity>=<respond>/<resolve>'],
    ['urgent=5m/1h', 'severity must be one of critical, high, medium, low'],
    ['high=soon/4h', '"soon" is not a positive duration'],
    ['high=0s/4h', '"0s" is not a positive duration'],
    ['high=5h/4h', 'must not exceed the resolution target'],
  ])('refuse %j (%s)', (text, why) => {
    expect(() => parseSlaTargets(text)).toThrow(SlaError);
    expect(() => parseSlaTargets(text)).toThrow(why);
  });

  it('a bad FOGHORN_SLA_TARGETS stops the process like any bad variable', () => {
    expect(parseConfig({ FOGHORN_SLA_TARGETS: 'high=15m/4h' }).FOGHORN_SLA_TARGETS?.high).toEqual({
      respondMs: 15 * M,
      resolveMs: 4 * H,
    });
    expect(() => parseConfig({ FOGHORN_SLA_TARGETS: 'high=4h' })).toThrow(ConfigError);
  });
});

describe('improvement', () => {
  it('is how much shorter MTTR got, signed, one decimal', () => {
    expect(improvement(30 * M, 40 * M)).toBe('+25.0%'); // (40 - 30) / 40
    expect(improvement(48 * M, 40 * M)).toBe('-20.0%'); // (40 - 48) / 40
    expect(improvement(40 * M, 40 * M)).toBe('0.0%');
    expect(improvement(1000, 3000)).toBe('+66.7%'); // 2/3
  });

  it('is null without data on either side, or against a zero reference', () => {
    expect(improvement(null, 40 * M)).toBeNull();
    expect(improvement(30 * M, null)).toBeNull();
    expect(improvement(30 * M, 0)).toBeNull();
  });
});

describe('trendSeries', () => {
  it('zero-fills every bucket and counts unknown severities in the total only', () => {
    const series = trendSeries({ first: Date.UTC(2025, 0, 1), step: 24 * H, count: 3 }, [
      { bucket: 1, severity: 'high', count: 2 },
      { bucket: 1, severity: 'custom', count: 1 },
      { bucket: 2, severity: 'low', count: 1 },
    ]);
    expect(series).toEqual([
      { date: '2025-01-01T00:00:00.000Z', total: 0, bySeverity: { critical: 0, high: 0, medium: 0, low: 0 } },
      { date: '2025-01-02T00:00:00.000Z', total: 3, bySeverity: { critical: 0, high: 2, medium: 0, low: 0 } },
      { date: '2025-01-03T00:00:00.000Z', total: 1, bySeverity: { critical: 0, high: 0, medium: 0, low: 1 } },
    ]);
  });
});
