// Go compatibility: the spec's durations are Go time.Duration strings, so these
// cases mirror what Go's time.ParseDuration / Duration.String() accept and print.
import { DurationError, formatDuration, parseDuration, toNanoseconds } from '../../domain/duration';

const S = 1000;
const M = 60 * S;
const H = 60 * M;

describe('parseDuration', () => {
  it.each<[string, number]>([
    ['0', 0],
    ['+0', 0],
    ['-0', 0],
    ['0s', 0],
    ['5s', 5 * S],
    ['+5s', 5 * S],
    ['-5s', -5 * S],
    ['1h2m3s', H + 2 * M + 3 * S],
    ['1.5h', 1.5 * H],
    ['.5s', 500],
    ['1.s', S],
    ['350ms', 350],
    ['1.5ms', 1.5],
    ['2ns', 0.000002],
    ['1us', 0.001],
    ['1\u00b5s', 0.001], // µ micro sign
    ['1\u03bcs', 0.001], // μ Greek mu
    ['1h0m0s', H],
    ['2h30m', 2.5 * H],
    ['1.0000000001s', S], // Go truncates below 1ns
    ['-1h2m3.5s', -(H + 2 * M + 3.5 * S)],
  ])('%j -> %p ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each([
    '',
    '5',
    '5d',
    '1w',
    ' 1s',
    '1s ',
    '1 s',
    '--1s',
    '1h-2m',
    '.',
    's',
    '-',
    '+',
    '.s',
    '1.2.3s',
    '1S',
    '9223372036854775808ns', // > int64
    '2562048h',
  ])('rejects %j', (text) => {
    expect(() => parseDuration(text)).toThrow(DurationError);
    expect(() => parseDuration(text)).toThrow(JSON.stringify(text));
  });

  it('accepts the int64 extremes', () => {
    // 2^63 - 1 is not representable as a double; it rounds to 2^63, as Number(BigInt) does.
    expect(toNanoseconds(parseDuration('9223372036854775807ns'))).toBe(Number(9223372036854775807n));
    expect(toNanoseconds(parseDuration('-9223372036854775808ns'))).toBe(-9223372036854775808);
  });
});

describe('formatDuration', () => {
  it.each<[number, string]>([
    [0, '0s'],
    [-0, '0s'],
    [H + 2 * M + 3 * S, '1h2m3s'],
    [4 * M + 5 * S, '4m5s'],
    [H, '1h0m0s'],
    [2.5 * H, '2h30m0s'],
    [1.5 * S, '1.5s'],
    [H + 2 * M + 3.5 * S, '1h2m3.5s'],
    [350, '350ms'],
    [1.5, '1.5ms'],
    [0.001, '1\u00b5s'],
    [0.0015, '1.5\u00b5s'],
    [0.000002, '2ns'],
    [0.0000004, '0s'], // rounds to 0ns
    [999.999999, '999.999999ms'],
    [S + 0.000001, '1.000000001s'],
    [-5 * S, '-5s'],
    [-1.5, '-1.5ms'],
    [-(H + 2 * M + 3.5 * S), '-1h2m3.5s'],
    [24 * H + 0.000001, '24h0m0.000000001s'], // ns-exact while ms * 1e6 < 2^53 (~104 days)
    [3 * 365 * 24 * H + 1, '26280h0m0.001s'], // whole ms exact at years
  ])('%p ms -> %j', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  it.each([NaN, Infinity, 1e20])('rejects %p', (ms) => {
    expect(() => formatDuration(ms)).toThrow(RangeError);
  });
});

describe('round trip', () => {
  it.each([
    0,
    0.000001,
    0.001,
    0.0015,
    1,
    1.5,
    350,
    999.999999,
    S,
    1.5 * S,
    4 * M + 5 * S,
    H,
    2.5 * H,
    H + 2 * M + 3.5 * S,
    3 * 365 * 24 * H,
    -0.000002,
    -1.5,
    -(H + 2 * M + 3.5 * S),
  ])('parse(format(%p)) === x', (ms) => {
    expect(parseDuration(formatDuration(ms))).toBe(ms);
  });
});

describe('toNanoseconds', () => {
  it.each<[number, number]>([
    [0, 0],
    [-0, 0],
    [1, 1e6],
    [0.0015, 1500],
    [0.0000004, 0],
    [-1.5, -1.5e6],
  ])('%p ms -> %p ns', (ms, ns) => {
    expect(Object.is(toNanoseconds(ms), ns)).toBe(true);
  });
});
