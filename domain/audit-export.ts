import { createHash, createHmac } from 'crypto';
import {
  auditLinkValid,
  auditRecordView,
  canonicalJson,
  GENESIS_CHECKSUM,
  KEYED_PREFIX,
  LEGACY_PREFIX,
  sameText,
  type AuditRecord,
  type AuditRecordView,
} from './audit';
import { API_VERSION } from './envelope';

/**
 * Audit export files (DESIGN §9): the same bytes whether streamed synchronously or written by
 * the export workflow. A JSON export holds what the chain's checksums cover, so whoever holds
 * the audit key can re-verify it without the database (`foghorn audit verify-file`); a CSV
 * export is the spreadsheet view with the spec's ten columns.
 */

/** Up to this many records an export is answered at once; above it, a job (the spec's ceiling). */
export const SYNC_EXPORT_LIMIT = 10_000;
/** An async export's file is kept this long (the spec: 24h). */
export const EXPORT_TTL_MS = 24 * 3_600_000;

export const EXPORT_FORMATS = ['json', 'csv'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const CSV_COLUMNS = [
  'id',
  'timestamp',
  'action',
  'user',
  'role',
  'resource',
  'resourceType',
  'namespace',
  'sourceIP',
  'checksum',
] as const;

export interface ExportFilter {
  start?: Date;
  end: Date;
  action?: string;
  user?: string;
  namespace?: string;
}

/** A record as exported: the stored record and its predecessor's checksum (null: predecessor missing). */
export interface ExportRecord extends AuditRecord {
  previousChecksum: string | null;
}

/** `audit-export-20261123.csv`: the UTC day the export was made. */
export function exportFilename(format: ExportFormat, at: Date): string {
  return `audit-export-${at.toISOString().slice(0, 10).replace(/-/g, '')}.${format}`;
}

export const exportContentType = (format: ExportFormat) =>
  format === 'csv' ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8';

// ---------------------------------------------------------------------------------------------
// CSV (RFC 4180)
// ---------------------------------------------------------------------------------------------

/** Characters a spreadsheet reads as the start of a formula (OWASP CSV injection), tab and CR included. */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * One CSV field: a value a spreadsheet would run as a formula gets a leading `'` (shown as
 * text, never evaluated); a value with a comma, quote, CR or LF is quoted, quotes doubled.
 */
export function csvField(value: string): string {
  const safe = FORMULA_START.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** Lines end with CRLF, as RFC 4180 says. */
export const CSV_HEADER = CSV_COLUMNS.join(',') + '\r\n';

export function csvRow(r: AuditRecord): string {
  const view = auditRecordView(r);
  return CSV_COLUMNS.map((c) => csvField(view[c])).join(',') + '\r\n';
}

// ---------------------------------------------------------------------------------------------
// JSON
// ---------------------------------------------------------------------------------------------

export interface ExportMetadata {
  exportedAt: Date;
  from: Date;
  to: Date;
  totalRecords: number;
  format: ExportFormat;
  filters: { action?: string; user?: string; namespace?: string };
  jobId?: string;
}

/**
 * An exported record: the spec's export fields, then what the checksum also covers (so the file
 * verifies). contracts/audit.ts exportedRecordSchema describes it, fields in file order.
 */
export interface ExportedRecordView extends AuditRecordView {
  /** The record's place in the chain. */
  seq: number;
  /** The checksum this record chains from (null: its predecessor was missing from the log). */
  previousChecksum: string | null;
}

export function exportRecordView(r: ExportRecord): ExportedRecordView {
  const { details, userAgent, ...exported } = auditRecordView(r);
  return { ...exported, seq: r.seq, previousChecksum: r.previousChecksum, details, userAgent };
}

/** The metadata of an export of `filter`: `from` is the start asked for, else the first record's time. */
export function exportMetadata(
  filter: ExportFilter,
  o: { exportedAt: Date; firstTimestamp?: Date; totalRecords: number; format: ExportFormat; jobId?: string },
): ExportMetadata {
  return {
    exportedAt: o.exportedAt,
    from: filter.start ?? o.firstTimestamp ?? filter.end,
    to: filter.end,
    totalRecords: o.totalRecords,
    format: o.format,
    filters: {
      ...(filter.action && { action: filter.action }),
      ...(filter.user && { user: filter.user }),
      ...(filter.namespace && { namespace: filter.namespace }),
    },
    ...(o.jobId && { jobId: o.jobId }),
  };
}

function metadataView(m: ExportMetadata) {
  return {
    exportedAt: m.exportedAt.toISOString(),
    from: m.from.toISOString(),
    to: m.to.toISOString(),
    totalRecords: m.totalRecords,
    format: m.format,
    filters: m.filters,
    ...(m.jobId && { jobId: m.jobId }),
  };
}

/** Everything before the first record: `{"apiVersion":…,"metadata":{…},"records":[`. */
export function jsonHead(m: ExportMetadata): string {
  const head = JSON.stringify({ apiVersion: API_VERSION, kind: 'AuditExport', metadata: metadataView(m) });
  return `${head.slice(0, -1)},"records":[`;
}

/** One record, with the separator that precedes it (`index` counts from 0 over the whole file). */
export function jsonRecord(r: ExportRecord, index: number): string {
  return `${index === 0 ? '\n' : ',\n'}${JSON.stringify(exportRecordView(r))}`;
}

/** Everything after the last record: the seal over metadata, record order and checksums. */
export function jsonTail(m: ExportMetadata, digest: string, key: string): string {
  return `\n],"integrity":${JSON.stringify(sealExport(m, digest, key))}}\n`;
}

// ---------------------------------------------------------------------------------------------
// The seal: each record's checksum proves its content; the seal proves which records, in which order
// ---------------------------------------------------------------------------------------------

/** The records digest before any record. */
export const EMPTY_DIGEST = 'sha256:' + '0'.repeat(64);

/**
 * The records digest after one more record: a hash chain over `seq` and checksum, so it can be
 * carried across the batches of a resumed export as one short string.
 */
export function nextDigest(digest: string, r: Pick<AuditRecord, 'seq' | 'checksum'>): string {
  return 'sha256:' + createHash('sha256').update(`${digest}\n${r.seq}\n${r.checksum}`).digest('hex');
}

function sealExport(m: ExportMetadata, recordsDigest: string, key: string) {
  return {
    scheme: 'hmac-sha256',
    recordsDigest,
    seal: sealOf(canonicalJson(metadataView(m)), recordsDigest, key),
  };
}

function sealOf(metadataJson: string, recordsDigest: string, key: string): string {
  return (
    KEYED_PREFIX +
    createHmac('sha256', key)
      .update('foghorn-audit-export-v1\n')
      .update(metadataJson)
      .update('\n')
      .update(recordsDigest)
      .digest('hex')
  );
}

// ---------------------------------------------------------------------------------------------
// Verifying a file (foghorn audit verify-file)
// ---------------------------------------------------------------------------------------------

export interface FileVerification {
  intact: boolean;
  totalRecords: number;
  /** Records verified in file order before the first problem. */
  verifiedRecords: number;
  brokenRecords: number;
  /** The first record that does not check out; `row` counts from 1 in file order. */
  firstBroken?: { row: number; id: string; seq: number | null; reason: string };
  /** Sequence gaps inside an unfiltered export (records removed from the file or the log). */
  missing: Array<{ fromSeq: number; toSeq: number }>;
  /** The seal covers the metadata and exactly these records in this order. */
  sealValid: boolean;
  problems: string[];
}

const MAX_LISTED = 100;

/** A record of an export file that does not parse as one: what can be told of it. */
export interface MalformedExportRecord {
  malformed: true;
  id: string;
  seq: number | null;
}

/** An export file once its shape is checked and each record parsed (contracts/audit.ts verifyExportFile). */
export interface ExportFileContent {
  metadata: { totalRecords: number; filters: { action?: string; user?: string; namespace?: string } };
  /** The metadata exactly as the file holds it: the seal covers it. */
  rawMetadata: unknown;
  records: (ExportedRecordView | MalformedExportRecord)[];
  integrity: { recordsDigest: string; seal: string };
}

const emptyVerification = (): FileVerification => ({
  intact: false,
  totalRecords: 0,
  verifiedRecords: 0,
  brokenRecords: 0,
  missing: [],
  sealValid: false,
  problems: [],
});

/** The verification of a file that is not a Foghorn JSON audit export at all. */
export function unreadableExport(problem: string): FileVerification {
  return { ...emptyVerification(), problems: [problem] };
}

/**
 * Re-verifies an export file with the audit keys: every record's link (content + previous
 * checksum), consecutive records against each other, gaps when nothing was filtered out, the
 * record count, and the seal. Needs no database.
 */
export function verifyExportContent(file: ExportFileContent, keys: readonly string[]): FileVerification {
  if (keys.length === 0) throw new Error('no audit key to verify with');
  const report = emptyVerification();
  const { metadata, records, integrity } = file;
  report.totalRecords = records.length;
  const filtered = Object.values(metadata.filters).some((v) => v !== undefined && v !== '');
  let digest = EMPTY_DIGEST;
  let previous: { seq: number; checksum: string } | undefined;
  let seenKeyed = false;
  const fail = (row: number, id: string, seq: number | null, reason: string) => {
    report.brokenRecords += 1;
    report.firstBroken ??= { row, id, seq, reason };
  };

  records.forEach((r, i) => {
    const row = i + 1;
    if ('malformed' in r) {
      fail(row, r.id, r.seq, 'malformed record');
      previous = undefined;
      return;
    }
    digest = nextDigest(digest, r);
    const { previousChecksum, timestamp, ...fields } = r;
    // The checksum reads exactly the record's own fields (domain/audit.ts recordContent).
    const record = { ...fields, timestamp: new Date(timestamp) } as AuditRecord;
    const problem = recordProblem(record, previousChecksum, previous, keys, seenKeyed, filtered, report);
    if (r.checksum.startsWith(KEYED_PREFIX)) seenKeyed = true;
    if (problem) fail(row, r.id, r.seq, problem);
    else if (report.brokenRecords === 0) report.verifiedRecords += 1;
    previous = { seq: r.seq, checksum: r.checksum };
  });

  if (metadata.totalRecords !== records.length)
    report.problems.push(
      `metadata.totalRecords is ${metadata.totalRecords} but the file holds ${records.length} records`,
    );
  if (digest !== integrity.recordsDigest)
    report.problems.push('the records are not the ones sealed (added, removed or reordered)');
  else {
    const expected = keys.map((key) => sealOf(canonicalJson(file.rawMetadata), digest, key));
    report.sealValid = expected.some((s) => sameText(s, integrity.seal));
    if (!report.sealValid) report.problems.push('the seal does not match the metadata and records (altered)');
  }
  if (report.missing.length > 0) report.problems.push('records are missing from the sequence');
  if (report.firstBroken) report.problems.unshift(`row ${report.firstBroken.row}: ${report.firstBroken.reason}`);
  report.intact = report.problems.length === 0 && report.brokenRecords === 0 && report.sealValid;
  return report;
}

function recordProblem(
  record: AuditRecord,
  previousChecksum: string | null,
  previous: { seq: number; checksum: string } | undefined,
  keys: readonly string[],
  seenKeyed: boolean,
  filtered: boolean,
  report: FileVerification,
): string | undefined {
  if (previous && record.seq <= previous.seq) return `seq ${record.seq} is not after seq ${previous.seq} (reordered)`;
  if (previous && !filtered && record.seq !== previous.seq + 1) {
    if (report.missing.length < MAX_LISTED) report.missing.push({ fromSeq: previous.seq + 1, toSeq: record.seq - 1 });
  }
  if (previous && record.seq === previous.seq + 1 && previousChecksum !== previous.checksum)
    return 'previousChecksum differs from the checksum of the record before it';
  if (record.seq === 1 && previousChecksum !== GENESIS_CHECKSUM) return 'the first record must chain from the genesis';
  if (previousChecksum === null)
    return 'its predecessor was missing from the log when exported: the link cannot be checked';
  if (record.checksum.startsWith(LEGACY_PREFIX) && seenKeyed)
    return 'unkeyed sha256 checksum after keyed records (downgrade)';
  if (!record.checksum.startsWith(LEGACY_PREFIX) && !record.checksum.startsWith(KEYED_PREFIX))
    return 'checksum has an unknown scheme';
  if (!auditLinkValid(record, previousChecksum, keys))
    return 'checksum does not match the content and previous checksum (edited, or forged without the key)';
  return undefined;
}
