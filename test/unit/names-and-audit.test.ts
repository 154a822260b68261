import { canonicalJson, GENESIS_CHECKSUM, keyedAuditChecksum, legacyAuditChecksum } from '../../domain/audit';
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
  const KEY = 'unit-test-audit-key-0123456789abcdef';
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
    expect(legacyAuditChecksum(reordered, GENESIS_CHECKSUM)).toBe(legacyAuditChecksum(record, GENESIS_CHECKSUM));
    expect(keyedAuditChecksum(reordered, GENESIS_CHECKSUM, KEY)).toBe(
      keyedAuditChecksum(record, GENESIS_CHECKSUM, KEY),
    );
  });

  it('changes with any field, with the previous checksum and with the key', () => {
    const base = keyedAuditChecksum(record, GENESIS_CHECKSUM, KEY);
    expect(base).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
    expect(keyedAuditChecksum({ ...record, user: 'mallory' }, GENESIS_CHECKSUM, KEY)).not.toBe(base);
    expect(keyedAuditChecksum({ ...record, details: { b: 2, a: record.details.a } }, GENESIS_CHECKSUM, KEY)).not.toBe(
      base,
    );
    expect(keyedAuditChecksum(record, base, KEY)).not.toBe(base);
    expect(keyedAuditChecksum(record, GENESIS_CHECKSUM, KEY.replace('k', 'K'))).not.toBe(base);
  });

  it('keeps the legacy rule verifiable: unkeyed sha256 over content and the previous checksum', () => {
    const legacy = legacyAuditChecksum(record, GENESIS_CHECKSUM);
    expect(legacy).toMatch(/^sha256:[0-9a-f]{64}$/);
    // The value the pre-key writer computed for this record: existing records keep verifying.
    expect(legacy).toBe('sha256:8e6973af91ba6a74cff7468f9f0b697d3eee0ef7be76a5e4562d0dfa34def3d4');
    expect(legacyAuditChecksum({ ...record, user: 'mallory' }, GENESIS_CHECKSUM)).not.toBe(legacy);
  });
});
