import {
  autoGranularity,
  bucketPlan,
  bucketStart,
  formatMttr,
  parseGranularity,
  parsePeriod,
  PeriodError,
} from '../../domain/mttr';

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;

const at = (iso: string) => new Date(iso);

describe('parsePeriod', () => {
  it.each<[string, number]>([
    ['24h', 24 * H],
    ['7d', 7 * D],
    ['30d', 30 * D],
    ['4w', 28 * D],
    ['90m', 90 * M],
    ['1h30m', 90 * M],
    ['1.5d', 36 * H],
    ['1w2d', 9 * D],
    ['1d12h', 36 * H],
    [' 7d ', 7 * D],
    ['366d', 366 * D],
  ])('%j is %d ms', (text, ms) => {
    expect(parsePeriod(text)).toBe(ms);
  });

  it.each<[string, string]>([
    ['', 'empty'],
    ['abc', 'expected a duration'],
    ['7', 'expected a duration'],
    ['d', 'expected a duration'],
    ['-7d', 'expected a duration'],
    ['7days', 'unknown unit "days"'],
    ['7D', 'unknown unit "D"'],
    ['1y', 'unknown unit "y"'],
    ['30s', 'at least 1h'],
    ['0d', 'at least 1h'],
    ['367d', 'at most 366d'],
    ['9999999999999999999h', 'at most 366d'],
  ])('rejects %j (%s)', (text, why) => {
    expect(() => parsePeriod(text)).toThrow(PeriodError);
    expect(() => parsePeriod(text)).toThrow(`Invalid period ${JSON.stringify(text)}: `);
    expect(() => parsePeriod(text)).toThrow(why);
  });
});

describe('granularity', () => {
  it('is chosen from the period: ≤48h hourly, ≤60d daily, else weekly', () => {
    expect(autoGranularity(24 * H)).toBe('hourly');
    expect(autoGranularity(48 * H)).toBe('hourly');
    expect(autoGranularity(48 * H + 1)).toBe('daily');
    expect(autoGranularity(60 * D)).toBe('daily');
    expect(autoGranularity(60 * D + 1)).toBe('weekly');
    expect(bucketPlan({ now: at('2026-03-15T10:30:00Z'), periodMs: 90 * D }).granularity).toBe('weekly');
  });

  it('parses the three names and nothing else', () => {
    expect(parseGranularity('daily')).toBe('daily');
    expect(() => parseGranularity('monthly')).toThrow('Invalid granularity "monthly": use hourly, daily, weekly');
  });

  it('aligns buckets to UTC hours, days and ISO weeks (Monday)', () => {
    const t = at('2026-03-12T17:45:10Z').getTime(); // a Thursday
    expect(new Date(bucketStart(t, 'hourly')).toISOString()).toBe('2026-03-12T17:00:00.000Z');
    expect(new Date(bucketStart(t, 'daily')).toISOString()).toBe('2026-03-12T00:00:00.000Z');
    expect(new Date(bucketStart(t, 'weekly')).toISOString()).toBe('2026-03-09T00:00:00.000Z');
    const monday = at('2026-03-09T00:00:00Z').getTime();
    expect(bucketStart(monday, 'weekly')).toBe(monday);
    expect(new Date(bucketStart(monday - 1, 'weekly')).toISOString()).toBe('2026-03-02T00:00:00.000Z');
  });
});

describe('formatMttr', () => {
  it('formats durations as Go text rounded to seconds', () => {
    expect(formatMttr(3_723_456.7)).toBe('1h2m3s');
    expect(formatMttr(350)).toBe('350ms');
    expect(formatMttr(0)).toBe('0s');
  });
});
