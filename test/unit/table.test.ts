import { ageOf, formatTable, humanDuration } from '../../domain/table';

describe('formatTable (kubectl get style)', () => {
  const columns = [
    { header: 'name', value: (r: { n: string; s: string }) => r.n },
    { header: 'state', value: (r: { n: string; s: string }) => r.s },
    { header: 'note', value: () => 'multi\nline', wide: true },
  ];

  it('upper-cases headers, pads columns three blanks apart, leaves no trailing blanks', () => {
    expect(
      formatTable(columns, [
        { n: 'INC-1', s: 'Resolved' },
        { n: 'INC-10', s: '' },
      ]),
    ).toBe(['NAME     STATE', 'INC-1    Resolved', 'INC-10'].join('\n'));
  });

  it('shows wide columns only when asked, each cell on one line', () => {
    expect(formatTable(columns, [{ n: 'a', s: 'b' }], true)).toBe('NAME   STATE   NOTE\na      b       multi line');
  });
});

describe('humanDuration (kubectl AGE)', () => {
  const S = 1000;
  const M = 60 * S;
  const H = 60 * M;
  const D = 24 * H;
  it.each([
    [-5 * S, '<invalid>'],
    [0, '0s'],
    [119 * S, '119s'],
    [2 * M, '2m'],
    [5 * M + 30 * S, '5m30s'],
    [42 * M, '42m'],
    [3 * H + 10 * M, '3h10m'],
    [20 * H, '20h'],
    [3 * D + 4 * H, '3d4h'],
    [41 * D, '41d'],
    [2 * 365 * D + 30 * D, '2y30d'],
    [9 * 365 * D, '9y'],
  ])('%d ms → %s', (ms, text) => expect(humanDuration(ms)).toBe(text));

  it('ageOf: the age of a timestamp, <unknown> without one', () => {
    const now = new Date('2026-01-01T12:00:00Z');
    expect(ageOf('2026-01-01T11:00:00Z', now)).toBe('60m');
    expect(ageOf(undefined, now)).toBe('<unknown>');
  });
});
