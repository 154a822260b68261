/**
 * Go time.Duration text <-> milliseconds.
 *
 * Why: the spec's durations (timeouts, retry intervals, ...) are Go time.Duration
 * strings, so we must accept and print exactly what Go's time.ParseDuration and
 * Duration.String() do (src/time/format.go). Internally everything is integer
 * nanoseconds in BigInt, mirroring Go's int64/uint64 arithmetic, overflow checks
 * included.
 */

/** Thrown for text that is not a Go time.Duration. */
export class DurationError extends Error {
  override name = 'DurationError';
}

const NS_PER_MS = 1_000_000;
const LIMIT = 1n << 63n; // |Duration| <= 2^63 (int64 range)

const UNITS: Readonly<Record<string, bigint>> = {
  ns: 1n,
  us: 1_000n,
  '\u00b5s': 1_000n, // µs micro sign
  '\u03bcs': 1_000n, // μs Greek mu
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';

/** Parses Go's time.ParseDuration grammar; returns milliseconds (may be fractional for µs/ns). */
export function parseDuration(text: string): number {
  const invalid = (why = 'invalid duration') => new DurationError(`time: ${why} ${JSON.stringify(text)}`);
  let s = text;
  let neg = false;
  if (s[0] === '-' || s[0] === '+') {
    neg = s[0] === '-';
    s = s.slice(1);
  }
  if (s === '0') return 0; // special case: bare zero needs no unit
  if (s === '') throw invalid();

  let d = 0n;
  let i = 0;
  while (i < s.length) {
    if (!(s[i] === '.' || isDigit(s[i]))) throw invalid();

    // Integer part [0-9]* (Go: leadingInt, errors on overflow).
    const intStart = i;
    let v = 0n;
    while (isDigit(s[i])) {
      v = v * 10n + BigInt(s.charCodeAt(i) - 48);
      if (v > LIMIT) throw invalid();
      i++;
    }
    const pre = i > intStart;

    // Fraction (\.[0-9]*)? (Go: leadingFraction, silently drops digits past int64 precision).
    let f = 0n;
    let scale = 1; // float64 in Go, kept as a JS number for identical rounding
    let post = false;
    if (s[i] === '.') {
      i++;
      const fracStart = i;
      let overflow = false;
      while (isDigit(s[i])) {
        if (!overflow) {
          const y = f * 10n + BigInt(s.charCodeAt(i) - 48);
          if (y > LIMIT) overflow = true;
          else {
            f = y;
            scale *= 10;
          }
        }
        i++;
      }
      post = i > fracStart;
    }
    if (!pre && !post) throw invalid(); // e.g. "." or ".s"

    // Unit: everything up to the next digit or '.'.
    const unitStart = i;
    while (i < s.length && s[i] !== '.' && !isDigit(s[i])) i++;
    if (i === unitStart) throw invalid('missing unit in duration');
    const u = s.slice(unitStart, i);
    const unit = UNITS[u];
    if (unit === undefined) throw invalid(`unknown unit ${JSON.stringify(u)} in duration`);

    if (v > LIMIT / unit) throw invalid();
    v *= unit;
    if (f > 0n) {
      // Go: v += uint64(float64(f) * (float64(unit) / scale)) — truncates below 1ns.
      v += BigInt(Math.trunc(Number(f) * (Number(unit) / scale)));
      if (v > LIMIT) throw invalid();
    }
    d += v;
    if (d > LIMIT) throw invalid();
  }
  if (!neg && d > LIMIT - 1n) throw invalid();
  if (d === 0n) return 0; // never -0
  return (neg ? -Number(d) : Number(d)) / NS_PER_MS;
}

/** Nanoseconds (integer) for a millisecond value, for APIs that expose Go durations as integers. */
export function toNanoseconds(ms: number): number {
  if (!Number.isFinite(ms)) throw new RangeError(`duration must be finite, got ${ms}`);
  return Math.round(ms * NS_PER_MS) || 0; // `|| 0` normalises -0
}

/** Formats milliseconds exactly as Go's time.Duration.String() does (input rounded to whole nanoseconds). */
export function formatDuration(ms: number): string {
  const ns = BigInt(toNanoseconds(ms));
  if (ns < -LIMIT || ns >= LIMIT) throw new RangeError(`duration ${ms}ms is outside Go's int64 nanosecond range`);
  const neg = ns < 0n;
  let u = neg ? -ns : ns;
  let out: string;
  if (u === 0n) return '0s';
  if (u < 1_000_000_000n) {
    // Under a second: smallest fitting unit with a trimmed fraction, e.g. "1.2ms".
    const [prec, suffix] = u < 1_000n ? [0, 'ns'] : u < 1_000_000n ? [3, '\u00b5s'] : [6, 'ms'];
    const pow = 10n ** BigInt(prec);
    out = `${u / pow}${fraction(u % pow, prec)}${suffix}`;
  } else {
    let str = `${fraction(u % 1_000_000_000n, 9)}s`;
    u /= 1_000_000_000n; // whole seconds
    str = `${u % 60n}${str}`;
    u /= 60n; // whole minutes
    if (u > 0n) {
      str = `${u % 60n}m${str}`;
      u /= 60n; // whole hours; Go stops here since days vary in length
      if (u > 0n) str = `${u}h${str}`;
    }
    out = str;
  }
  return neg ? `-${out}` : out;
}

/** Go's fmtFrac: `.digits` of a `prec`-digit fraction, trailing zeros dropped; '' when zero. */
function fraction(rem: bigint, prec: number): string {
  const digits = prec === 0 ? '' : rem.toString().padStart(prec, '0').replace(/0+$/, '');
  return digits === '' ? '' : `.${digits}`;
}
