import type { Request, Response } from 'express';
import {
  CSV_HEADER,
  csvRow,
  EMPTY_DIGEST,
  exportContentType,
  exportFilename,
  exportMetadata,
  jsonHead,
  jsonRecord,
  jsonTail,
  nextDigest,
  type ExportFilter,
  type ExportFormat,
} from '../domain/audit-export';
import { currentAuditKey } from '../store/audit';
import { exportBatches, firstExportTimestamp } from '../store/audit-exports';

/** Records read per cursor batch: memory stays flat however large the export. */
const STREAM_BATCH = 500;

/**
 * Streams a synchronous export straight from a MongoDB cursor into the response, waiting for
 * the client to drain: the same bytes the export workflow writes to GridFS. A client that goes
 * away stops the read; a failure after the first byte can only cut the connection (logged).
 */
export async function streamExport(
  req: Request,
  res: Response,
  o: { filter: ExportFilter; format: ExportFormat; headSeq: number; totalRecords: number; exportedAt: Date },
): Promise<void> {
  const key = currentAuditKey(); // before the first byte: no key, no export (a 500 the client can read)
  const metadata = exportMetadata(o.filter, {
    exportedAt: o.exportedAt,
    firstTimestamp: await firstExportTimestamp(o.filter, o.headSeq),
    totalRecords: o.totalRecords,
    format: o.format,
  });
  res.status(200);
  res.set({
    'Content-Type': exportContentType(o.format),
    'Content-Disposition': `attachment; filename="${exportFilename(o.format, o.exportedAt)}"`,
    'Cache-Control': 'no-store',
  });
  const write = async (text: string): Promise<boolean> => {
    if (res.destroyed) return false;
    if (!res.write(text)) await drainedOrClosed(res);
    return !res.destroyed;
  };
  try {
    await write(o.format === 'csv' ? CSV_HEADER : jsonHead(metadata));
    let digest = EMPTY_DIGEST;
    let written = 0;
    for await (const batch of exportBatches(o.filter, { headSeq: o.headSeq, batchSize: STREAM_BATCH })) {
      let text = '';
      for (const r of batch) {
        text += o.format === 'csv' ? csvRow(r) : jsonRecord(r, written);
        digest = nextDigest(digest, r);
        written += 1;
      }
      if (!(await write(text))) return; // the client went away: the generator closes the cursor
    }
    if (o.format === 'json') await write(jsonTail(metadata, digest, key));
    res.end();
  } catch (err) {
    req.log?.error({ err }, 'audit export failed after the response started');
    res.destroy(err as Error);
  }
}

/** Resolves when the client has taken what was written, or is gone (no listener left behind). */
function drainedOrClosed(res: Response): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done).off('close', done).off('error', done);
      resolve();
    };
    res.on('drain', done).on('close', done).on('error', done);
  });
}
