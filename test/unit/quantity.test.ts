import {
  cpuMillis,
  formatCpu,
  formatMemory,
  memoryBytes,
  parseQuantity,
  QuantityError,
  sumQuantities,
} from '../../domain/quantity';

describe('Kubernetes quantities', () => {
  it.each([
    ['2', 2],
    ['500m', 0.5],
    ['1.5', 1.5],
    ['.5', 0.5],
    ['1e3', 1000],
    ['1E-3', 0.001],
    ['1k', 1000],
    ['1Ki', 1024],
    ['16Gi', 16 * 2 ** 30],
    ['1M', 1e6],
    ['100u', 1e-4],
  ])('parses %s', (text, value) => {
    expect(parseQuantity(text)).toBeCloseTo(value, 9);
  });

  it.each(['', 'abc', '1Gb', '1 Gi', '--1', 'Gi'])('refuses %j', (text) => {
    expect(() => parseQuantity(text)).toThrow(QuantityError);
  });

  it('counts CPU in millicores and memory in bytes, rounding up', () => {
    expect(cpuMillis('100m')).toBe(100);
    expect(cpuMillis('0.1')).toBe(100);
    expect(cpuMillis('1n')).toBe(1);
    expect(cpuMillis('4')).toBe(4000);
    expect(memoryBytes('128974848')).toBe(128974848);
    expect(memoryBytes('129M')).toBe(129e6);
    expect(memoryBytes('123Mi')).toBe(123 * 2 ** 20);
  });

  it('formats as Kubernetes does', () => {
    expect(formatCpu(8000)).toBe('8');
    expect(formatCpu(3500)).toBe('3500m');
    expect(formatCpu(0)).toBe('0');
    expect(formatMemory(16 * 2 ** 30)).toBe('16Gi');
    expect(formatMemory(1536 * 2 ** 20)).toBe('1536Mi');
    expect(formatMemory(16393684 * 1024)).toBe('16393684Ki');
    expect(formatMemory(1000)).toBe('1000');
    expect(formatMemory(0)).toBe('0');
  });

  it('sums, skipping absent and malformed values', () => {
    expect(formatCpu(sumQuantities(['250m', '1', undefined, 'bogus', '0.25'], cpuMillis))).toBe('1500m');
    expect(formatMemory(sumQuantities(['1Gi', '512Mi', '512Mi'], memoryBytes))).toBe('2Gi');
  });
});
