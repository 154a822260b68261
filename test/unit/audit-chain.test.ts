import {
  AuditChainVerifier,
  auditLinkValid,
  checkpointKeyIndex,
  GENESIS_CHECKSUM,
  keyedAuditChecksum,
  legacyAuditChecksum,
  signCheckpoint,
  type AuditRecord,
  type CheckpointCandidate,
} from '../../domain/audit';

const KEY = 'unit-audit-key-0123456789abcdef0123456789';
const OLD_KEY = 'unit-retired-key-0123456789abcdef01234567';
const WRONG_KEY = 'not-the-audit-key-0123456789abcdef012345';

type Rule = 'legacy' | { key: string };

function record(seq: number, over: Partial<AuditRecord> = {}): Omit<AuditRecord, 'checksum'> {
  return {
    id: `audit-20260101-${String(seq).padStart(3, '0')}`,
    seq,
    timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, seq)),
    action: 'config.update',
    user: 'alice',
    role: 'admin',
    resource: `r-${seq}`,
    resourceType: 'Config',
    namespace: '',
    details: { seq },
    sourceIP: '10.0.0.1',
    userAgent: 'curl',
    ...over,
  };
}

function sign(unsigned: Omit<AuditRecord, 'checksum'>, previous: string, rule: Rule): AuditRecord {
  const checksum =
    rule === 'legacy' ? legacyAuditChecksum(unsigned, previous) : keyedAuditChecksum(unsigned, previous, rule.key);
  return { ...unsigned, checksum };
}

/** A chain of `rules.length` records, each signed by its rule. */
function chain(rules: Rule[]): AuditRecord[] {
  const out: AuditRecord[] = [];
  for (const [i, rule] of rules.entries())
    out.push(sign(record(i + 1), out[i - 1]?.checksum ?? GENESIS_CHECKSUM, rule));
  return out;
}

/** Recomputes every checksum from index `from` on, as someone with database access would. */
function recompute(records: AuditRecord[], from: number, rule: Rule): AuditRecord[] {
  const out = records.slice(0, from);
  for (const r of records.slice(from)) {
    const { checksum: _old, ...unsigned } = r;
    out.push(sign(unsigned, out[out.length - 1]?.checksum ?? GENESIS_CHECKSUM, rule));
  }
  return out;
}

function verify(records: AuditRecord[], keys = [KEY], checkpoints: CheckpointCandidate[] = []) {
  const verifier = new AuditChainVerifier(keys, checkpoints);
  for (const r of records) verifier.push(r);
  return verifier.result(records.length);
}

const keyed = (n: number) => chain(Array.from({ length: n }, () => ({ key: KEY })));

function checkpointOf(r: AuditRecord, key = KEY, source: 'database' | 'file' = 'database'): CheckpointCandidate {
  return {
    source,
    checkpoint: signCheckpoint(
      { database: 'foghorn', seq: r.seq, checksum: r.checksum, at: new Date('2026-01-01T01:00:00Z') },
      key,
    ),
  };
}

describe('audit chain verification', () => {
  it('accepts an untouched keyed chain and reports its head', () => {
    const records = keyed(5);
    expect(records[0].checksum).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
    expect(verify(records)).toEqual({
      intact: true,
      totalRecords: 5,
      verifiedRecords: 5,
      head: { seq: 5, checksum: records[4].checksum },
      brokenRecords: 0,
      legacyRecords: 0,
      keyedRecords: 5,
      missing: [],
      missingRecords: 0,
      invalidCheckpoints: [],
    });
  });

  it('finds an edited record; the links after it still check out', () => {
    const records = keyed(5);
    records[2] = { ...records[2], details: { seq: 300 } };
    const report = verify(records);
    expect(report).toMatchObject({
      intact: false,
      verifiedRecords: 2,
      brokenRecords: 1,
      firstBroken: { id: records[2].id, seq: 3, problem: 'checksum' },
    });
  });

  it('finds a forged user whose later checksums were recomputed with unkeyed sha256', () => {
    const records = keyed(5);
    records[2] = { ...records[2], user: 'mallory' };
    const report = verify(recompute(records, 2, 'legacy'));
    expect(report).toMatchObject({
      intact: false,
      verifiedRecords: 2,
      brokenRecords: 3,
      firstBroken: { seq: 3, problem: 'downgrade', reason: expect.stringContaining('downgrade') },
    });
  });

  it('finds a forged user whose later checksums were recomputed with HMAC under a wrong key', () => {
    const records = keyed(5);
    records[2] = { ...records[2], user: 'mallory' };
    const report = verify(recompute(records, 2, { key: WRONG_KEY }));
    expect(report).toMatchObject({
      intact: false,
      verifiedRecords: 2,
      brokenRecords: 3,
      firstBroken: { seq: 3, problem: 'checksum', reason: expect.stringContaining('checksum') },
    });
  });

  it('keeps legacy sha256 records verifiable up to the first keyed record', () => {
    const records = chain(['legacy', 'legacy', { key: KEY }, { key: KEY }]);
    expect(verify(records)).toMatchObject({ intact: true, verifiedRecords: 4, legacyRecords: 2, keyedRecords: 2 });
    // Someone with database access can rewrite the legacy part, but not the keyed link after it.
    const forged = recompute([{ ...records[0], user: 'mallory' }, ...records.slice(1)], 0, 'legacy');
    expect(verify([...forged.slice(0, 2), ...records.slice(2)])).toMatchObject({
      intact: false,
      firstBroken: { seq: 3, problem: 'checksum' },
    });
  });

  it('treats a legacy record after a keyed one as a downgrade', () => {
    expect(verify(chain([{ key: KEY }, 'legacy']))).toMatchObject({
      intact: false,
      firstBroken: { seq: 2, problem: 'downgrade' },
    });
  });

  it('rejects unknown checksum schemes', () => {
    const records = keyed(2);
    records[1] = { ...records[1], checksum: 'md5:abc' };
    expect(verify(records).firstBroken).toMatchObject({ seq: 2, problem: 'scheme' });
  });

  it('reports records missing in the middle with their range, and goes on checking', () => {
    const records = keyed(8);
    const report = verify([...records.slice(0, 2), ...records.slice(4, 6), ...records.slice(7)]);
    expect(report).toMatchObject({
      intact: false,
      verifiedRecords: 2,
      brokenRecords: 0,
      missing: [
        { fromSeq: 3, toSeq: 4 },
        { fromSeq: 7, toSeq: 7 },
      ],
      missingRecords: 3,
      firstBroken: { seq: 5, problem: 'missing', reason: expect.stringContaining('missing') },
      head: { seq: 8 },
    });
  });

  it('reports a tail cut behind the newest valid checkpoint', () => {
    const records = keyed(6);
    const checkpoints = [checkpointOf(records[2]), checkpointOf(records[4], KEY, 'file')];
    expect(verify(records, [KEY], checkpoints)).toMatchObject({
      intact: true,
      checkpoint: { seq: 5, checksum: records[4].checksum, source: 'file' },
    });
    const cut = verify(records.slice(0, 3), [KEY], checkpoints);
    expect(cut).toMatchObject({
      intact: false,
      verifiedRecords: 3,
      head: { seq: 3 },
      tailCut: { headSeq: 3, checkpointSeq: 5, missingFromSeq: 4, missingToSeq: 5 },
      checkpoint: { seq: 5, source: 'file' },
    });
    expect(cut.firstBroken).toBeUndefined();
    expect(verify([], [KEY], checkpoints)).toMatchObject({
      intact: false,
      tailCut: { headSeq: 0, checkpointSeq: 5, missingFromSeq: 1, missingToSeq: 5 },
    });
  });

  it('reports a tail cut and rewritten (valid links, but not the checksum the checkpoint saw)', () => {
    const records = keyed(5);
    const checkpoint = checkpointOf(records[4]);
    const rewritten = [...records.slice(0, 4), sign(record(5, { user: 'other' }), records[3].checksum, { key: KEY })];
    expect(verify(rewritten, [KEY], [checkpoint])).toMatchObject({
      intact: false,
      firstBroken: { seq: 5, problem: 'checkpoint' },
      tailCut: { headSeq: 5, checkpointSeq: 5, reason: expect.stringContaining('rewritten') },
    });
  });

  it('reports checkpoints with a bad signature and never compares against them', () => {
    const records = keyed(3);
    const forged = checkpointOf(records[2], WRONG_KEY, 'file');
    const altered = checkpointOf(records[1]);
    altered.checkpoint = { ...altered.checkpoint, seq: 9 };
    const report = verify(records, [KEY], [forged, altered, checkpointOf(records[0])]);
    expect(report).toMatchObject({
      intact: false,
      checkpoint: { seq: 1 },
      invalidCheckpoints: [
        { source: 'file', seq: 3, reason: expect.stringContaining('signature') },
        { source: 'database', seq: 9, reason: expect.stringContaining('signature') },
      ],
    });
    expect(report.tailCut).toBeUndefined();
    expect(report.firstBroken).toBeUndefined();
  });

  it('verifies records and checkpoints of a retired key, but not an older key after a newer one', () => {
    const rotated = chain([{ key: OLD_KEY }, { key: OLD_KEY }, { key: KEY }]);
    expect(verify(rotated, [OLD_KEY, KEY], [checkpointOf(rotated[1], OLD_KEY)])).toMatchObject({ intact: true });
    expect(verify(rotated, [KEY])).toMatchObject({ intact: false, firstBroken: { seq: 1, problem: 'checksum' } });
    const backwards = chain([{ key: KEY }, { key: OLD_KEY }]);
    expect(verify(backwards, [OLD_KEY, KEY])).toMatchObject({ intact: false, firstBroken: { seq: 2 } });
  });

  it('checks one link and one checkpoint signature on their own', () => {
    const [first] = keyed(1);
    expect(auditLinkValid(first, GENESIS_CHECKSUM, [KEY])).toBe(true);
    expect(auditLinkValid({ ...first, user: 'mallory' }, GENESIS_CHECKSUM, [KEY])).toBe(false);
    expect(auditLinkValid(first, GENESIS_CHECKSUM, [WRONG_KEY])).toBe(false);
    const { checkpoint } = checkpointOf(first);
    expect(checkpointKeyIndex(checkpoint, [OLD_KEY, KEY])).toBe(1);
    expect(checkpointKeyIndex({ ...checkpoint, database: 'other' }, [KEY])).toBe(-1);
    expect(checkpointKeyIndex({ ...checkpoint, at: new Date(NaN) }, [KEY])).toBe(-1);
  });
});
