import { GENESIS_CHECKSUM, keyedAuditChecksum, legacyAuditChecksum, type AuditRecord } from '../../domain/audit';
import {
  csvField,
  csvRow,
  EMPTY_DIGEST,
  exportFilename,
  exportMetadata,
  jsonHead,
  jsonRecord,
  jsonTail,
  nextDigest,
  type ExportFilter,
  type ExportRecord,
} from '../../domain/audit-export';
import { verifyExportFile } from '../../contracts/audit';

const KEY = 'unit-audit-key-0123456789abcdef0123456789';

/** A valid keyed chain of `n` records from the genesis. */
function chain(n: number): ExportRecord[] {
  const out: ExportRecord[] = [];
  let previous = GENESIS_CHECKSUM;
  for (let seq = 1; seq <= n; seq++) {
    const unsigned = {
      id: `audit-20260101-${String(seq).padStart(3, '0')}`,
      seq,
      timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, seq)),
      action: seq % 2 ? ('incident.resolve' as const) : ('config.update' as const),
      user: seq % 2 ? 'alice' : 'bob',
      role: 'admin' as const,
      resource: `r-${seq}`,
      resourceType: 'Incident',
      namespace: 'prod',
      details: { seq },
      sourceIP: '10.0.0.1',
      userAgent: 'jest',
    };
    const checksum = keyedAuditChecksum(unsigned, previous, KEY);
    out.push({ ...unsigned, checksum, previousChecksum: previous });
    previous = checksum;
  }
  return out;
}

/** The file the API streams, built the way it is built. */
function file(records: ExportRecord[], filter: ExportFilter = { end: new Date('2026-02-01T00:00:00Z') }) {
  const metadata = exportMetadata(filter, {
    exportedAt: new Date('2026-02-01T00:00:00Z'),
    firstTimestamp: records[0]?.timestamp,
    totalRecords: records.length,
    format: 'json',
  });
  const digest = records.reduce((d, r) => nextDigest(d, r), EMPTY_DIGEST);
  return JSON.parse(jsonHead(metadata) + records.map(jsonRecord).join('') + jsonTail(metadata, digest, KEY));
}

describe('CSV', () => {
  it('quotes per RFC 4180 and neutralises formula starts', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField('cr\r')).toBe('"cr\r"');
    expect(csvField('=1+1')).toBe("'=1+1");
    expect(csvField('+1')).toBe("'+1");
    expect(csvField('-1')).toBe("'-1");
    expect(csvField('@cmd')).toBe("'@cmd");
    expect(csvField('\tx')).toBe("'\tx");
    expect(csvField('=A1,B1')).toBe(`"'=A1,B1"`);
    expect(csvField('a=b')).toBe('a=b'); // only a leading character counts
    expect(csvField('')).toBe('');
  });

  it('writes the ten columns in the spec order, CRLF-terminated', () => {
    const [r] = chain(1);
    expect(csvRow(r)).toBe(
      `audit-20260101-001,2026-01-01T00:00:01.000Z,incident.resolve,alice,admin,r-1,Incident,prod,10.0.0.1,${r.checksum}\r\n`,
    );
  });

  it('names the file after the export day (UTC)', () => {
    expect(exportFilename('csv', new Date('2026-11-23T23:59:59Z'))).toBe('audit-export-20261123.csv');
    expect(exportFilename('json', new Date('2026-01-02T00:00:00Z'))).toBe('audit-export-20260102.json');
  });
});

describe('verifyExportFile', () => {
  it('an untouched file is intact', () => {
    expect(verifyExportFile(file(chain(5)), [KEY])).toMatchObject({
      intact: true,
      totalRecords: 5,
      verifiedRecords: 5,
      brokenRecords: 0,
      sealValid: true,
      problems: [],
    });
  });

  it('an empty export is intact', () => {
    expect(verifyExportFile(file([]), [KEY])).toMatchObject({ intact: true, totalRecords: 0, sealValid: true });
  });

  it('verifies under a retired key too', () => {
    expect(verifyExportFile(file(chain(3)), ['newer-key-0123456789abcdef0123456789ab', KEY]).intact).toBe(true);
  });

  it('an edited field breaks that record', () => {
    const f = file(chain(5));
    f.records[2].details = { seq: 99 };
    const r = verifyExportFile(f, [KEY]);
    expect(r).toMatchObject({ intact: false, verifiedRecords: 2, brokenRecords: 1 });
    expect(r.firstBroken).toMatchObject({ row: 3, seq: 3 });
  });

  it('a removed record is a gap in an unfiltered export, and breaks the seal', () => {
    const f = file(chain(5));
    f.records.splice(1, 1);
    f.metadata.totalRecords = 4;
    const r = verifyExportFile(f, [KEY]);
    expect(r.intact).toBe(false);
    expect(r.missing).toEqual([{ fromSeq: 2, toSeq: 2 }]);
    expect(r.sealValid).toBe(false);
  });

  it('a filtered export skips records legitimately but still seals which ones', () => {
    const records = chain(6).filter((r) => r.user === 'alice');
    const f = file(records, { end: new Date('2026-02-01T00:00:00Z'), user: 'alice' });
    expect(verifyExportFile(f, [KEY]).intact).toBe(true);
    f.records.pop();
    f.metadata.totalRecords = 2;
    expect(verifyExportFile(f, [KEY])).toMatchObject({ intact: false, sealValid: false, missing: [] });
  });

  it('altered metadata breaks the seal', () => {
    const f = file(chain(3));
    f.metadata.to = '2030-01-01T00:00:00.000Z';
    expect(verifyExportFile(f, [KEY])).toMatchObject({ intact: false, sealValid: false, brokenRecords: 0 });
  });

  it('a legacy record after keyed ones is a downgrade', () => {
    const records = chain(3);
    const { checksum: _c, previousChecksum, ...unsigned } = records[2];
    records[2] = { ...unsigned, previousChecksum, checksum: legacyAuditChecksum(unsigned, previousChecksum!) };
    const r = verifyExportFile(file(records), [KEY]);
    expect(r.firstBroken?.reason).toContain('downgrade');
  });

  it('something that is not an export says so', () => {
    expect(verifyExportFile({ hello: 'world' }, [KEY])).toMatchObject({ intact: false, totalRecords: 0 });
    expect(verifyExportFile({ hello: 'world' }, [KEY]).problems[0]).toContain('not a Foghorn JSON audit export');
  });

  it('a record whose predecessor was missing from the log cannot be vouched for', () => {
    const records = chain(3);
    records[2] = { ...records[2], previousChecksum: null } as AuditRecord & { previousChecksum: null };
    const f = file(records.slice(2), { end: new Date('2026-02-01T00:00:00Z'), user: 'alice' });
    expect(verifyExportFile(f, [KEY]).firstBroken?.reason).toContain('predecessor was missing');
  });
});
