import { auditChecksum, canonicalJson, GENESIS_CHECKSUM } from '../../domain/audit';
import { dayKey, formatName, parseName } from '../../domain/names';
import { roleAtLeast } from '../../domain/roles';

describe('names', () => {
  it('formats <PREFIX>-<yyyymmdd>-<nnn> in UTC, growing past 999', () => {
    const at = new Date('2026-01-02T23:59:59-05:00'); // already Jan 3 in UTC
    expect(dayKey(at)).toBe('20260103');
    expect(formatName('INC', at, 7)).toBe('INC-20260103-007');
    expect(formatName('audit', at, 1234)).toBe('audit-20260103-1234');
    expect(parseName('PM-20260103-042')).toEqual({ prefix: 'PM', day: '20260103', seq: 42 });
    expect(parseName('INC-2026-01')).toBeUndefined();
  });
});

describe('roles', () => {
  it('orders viewer < operator < admin and keeps system out of user checks', () => {
    expect(roleAtLeast('admin', 'operator')).toBe(true);
    expect(roleAtLeast('operator', 'operator')).toBe(true);
    expect(roleAtLeast('viewer', 'operator')).toBe(false);
    expect(roleAtLeast('system', 'viewer')).toBe(false);
  });
});

describe('audit checksum', () => {
  const record = {
    id: 'audit-20260101-001',
    seq: 1,
    timestamp: new Date('2026-01-01T00:00:00Z'),
    action: 'runbook.create' as const,
    user: 'alice',
    role: 'admin' as const,
    resource: 'r',
    resourceType: 'Runbook',
    namespace: '',
    details: { b: 1, a: { d: [1, 2], c: null } },
    sourceIP: '10.0.0.1',
    userAgent: 'curl',
  };

  it('is independent of key order', () => {
    expect(canonicalJson({ b: 1, a: { y: 2, x: [3, { q: 1, p: 2 }] } })).toBe(
      '{"a":{"x":[3,{"p":2,"q":1}],"y":2},"b":1}',
    );
    const reordered = { ...record, details: { a: { c: null, d: [1, 2] }, b: 1 } };
    expect(auditChecksum(reordered, GENESIS_CHECKSUM)).toBe(auditChecksum(record, GENESIS_CHECKSUM));
  });

  it('changes with any field and with the previous checksum', () => {
    const base = auditChecksum(record, GENESIS_CHECKSUM);
    expect(base).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(auditChecksum({ ...record, user: 'mallory' }, GENESIS_CHECKSUM)).not.toBe(base);
    expect(auditChecksum({ ...record, details: { b: 2, a: record.details.a } }, GENESIS_CHECKSUM)).not.toBe(base);
    expect(auditChecksum(record, base)).not.toBe(base);
  });
});
