import { hashFraction } from '../../domain/hash-fraction';

describe('hashFraction', () => {
  it('is fixed by its key and within [0, 1)', () => {
    expect(hashFraction('INC-20261127-001')).toBe(hashFraction('INC-20261127-001'));
    for (const key of ['', 'a', 'INC-20261127-001', 'x'.repeat(1000)]) {
      expect(hashFraction(key)).toBeGreaterThanOrEqual(0);
      expect(hashFraction(key)).toBeLessThan(1);
    }
  });

  it('spreads names that differ only at the end evenly (a storm opens INC-…-001 to -300 together)', () => {
    const shares = Array.from({ length: 1000 }, (_, i) =>
      hashFraction(`INC-20261127-${String(i + 1).padStart(3, '0')}`),
    );
    const tenths = Array<number>(10).fill(0);
    for (const s of shares) tenths[Math.floor(s * 10)]++;
    // 100 expected in each tenth; a fair spread of 1,000 stays well within 60–140.
    for (const n of tenths) {
      expect(n).toBeGreaterThan(60);
      expect(n).toBeLessThan(140);
    }
    expect(new Set(shares).size).toBe(1000);
  });
});
