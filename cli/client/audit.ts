import { Command, Option } from 'commander';
import { createWriteStream } from 'fs';
import { rename, unlink } from 'fs/promises';
import { Readable } from 'stream';
import { pipeline } from 'stream/promises';
import type { ReadableStream as WebReadableStream } from 'stream/web';
import type { Column } from '../../domain/table';
import { act, clientCommand, positiveInt, withPaging } from './command';
import { failureOf, type ApiClient } from './http';
import { keyValues, printAnswer, printList, show, type ListAnswer } from './output';

/* eslint-disable @typescript-eslint/no-explicit-any -- API JSON, shown as the API sends it */
type Json = any;

const columns: Column<Json>[] = [
  { header: 'TIME', value: (r) => r.timestamp },
  { header: 'ACTION', value: (r) => r.action },
  { header: 'USER', value: (r) => r.user },
  { header: 'ROLE', value: (r) => r.role },
  { header: 'TYPE', value: (r) => show(r.resourceType) },
  { header: 'RESOURCE', value: (r) => show(r.resource) },
  { header: 'NAMESPACE', value: (r) => show(r.namespace) },
  { header: 'SOURCE-IP', value: (r) => show(r.sourceIP), wide: true },
  { header: 'USER-AGENT', value: (r) => show(r.userAgent), wide: true },
  { header: 'ID', value: (r) => r.id, wide: true },
];

/** The filename of `Content-Disposition: attachment; filename="…"`, without any path. */
function attachmentName(res: Response): string | undefined {
  const match = /filename="?([^";]+)"?/.exec(res.headers.get('content-disposition') ?? '');
  const name = match?.[1].split(/[\\/]/).pop();
  return name && name !== '.' && name !== '..' ? name : undefined;
}

/** Streams a 200 answer's body to `file` (via a temporary file), or to stdout for `-`. */
async function saveBody(res: Response, file: string): Promise<void> {
  const body = Readable.fromWeb(res.body as unknown as WebReadableStream);
  if (file === '-') return pipeline(body, process.stdout, { end: false });
  const temp = `${file}.part`;
  try {
    await pipeline(body, createWriteStream(temp, { mode: 0o600 }));
    await rename(temp, file);
  } catch (err) {
    await unlink(temp).catch(() => undefined);
    throw err;
  }
}

interface ExportOpts {
  format: 'csv' | 'json';
  start?: string;
  end?: string;
  action?: string;
  user?: string;
  namespace?: string;
  outputFile?: string;
  wait: boolean;
  interval: number;
}

/**
 * GET /audit/export: 200 is the file; 202 is a job, whose download URL answers 202 until the
 * file is ready (polled every `interval` seconds unless `--no-wait`).
 */
async function exportAudit(client: ApiClient, opts: ExportOpts): Promise<void> {
  const { format, start, end, action, user, namespace } = opts;
  let res = await client.send('GET', '/audit/export', { query: { format, start, end, action, user, namespace } });
  let job: Json | undefined;
  while (res.status === 202) {
    job = await res.json();
    if (!opts.wait) {
      printAnswer('json', job, () => '');
      process.stderr.write(
        `export job ${job.metadata.jobId} is ${job.status.state}; download it later: ${client.url(job.status.downloadUrl)}\n`,
      );
      return;
    }
    process.stderr.write(
      `export job ${job.metadata.jobId}: ${job.status.state}, ${job.status.exportedRecords}/${job.status.estimatedRecords} records\n`,
    );
    await new Promise((r) => setTimeout(r, opts.interval * 1000));
    res = await client.send('GET', job.status.downloadUrl);
  }
  if (!res.ok) throw await failureOf(res);
  const file = opts.outputFile ?? attachmentName(res) ?? `audit-export.${format}`;
  await saveBody(res, file);
  if (file !== '-')
    process.stderr.write(`audit export written to ${file}${job ? ` (job ${job.metadata.jobId})` : ''}\n`);
}

function describeVerification(v: Json): string {
  const s = v.status;
  const pairs: [string, unknown][] = [
    ['intact', s.intact],
    ['records', s.totalRecords],
    ['verified', s.verifiedRecords],
    ['broken', s.brokenRecords],
    ['missing', s.missingRecords],
    ['keyed', s.keyedRecords],
    ['legacy', s.legacyRecords],
    ['head', s.head && `seq ${s.head.seq}`],
    ['checkpoint', s.checkpoint && `seq ${s.checkpoint.seq} at ${s.checkpoint.at} (${s.checkpoint.source})`],
  ];
  if (s.firstBroken)
    pairs.push([
      'first broken',
      `${s.firstBroken.id} (seq ${s.firstBroken.seq}, ${s.firstBroken.problem}): ${s.firstBroken.reason}`,
    ]);
  if (s.tailCut) pairs.push(['tail cut', s.tailCut.reason]);
  for (const c of s.invalidCheckpoints ?? []) pairs.push(['bad checkpoint', `${c.source} seq ${c.seq}: ${c.reason}`]);
  return keyValues(pairs);
}

/** `foghorn audit list|export|verify` (beside the offline `verify-file`). */
export function addAuditClientCommands(audit: Command): void {
  audit.addCommand(
    withPaging(
      clientCommand('list', 'list audit records, newest first (operator)')
        .option('--action <action>', 'e.g. incident.acknowledge')
        .option('--user <user>', 'only what this user did')
        .option('--resource <name>', 'only records of this resource')
        .option('--from <time>', 'at or after this RFC 3339 time')
        .option('--to <time>', 'at or before this RFC 3339 time'),
    ).action(
      act<{
        action?: string;
        user?: string;
        resource?: string;
        from?: string;
        to?: string;
        page?: number;
        pageSize?: number;
      }>(async ({ client, opts, output }) => {
        const { action, user, resource, from, to, page, pageSize } = opts;
        const list = await client.get<ListAnswer<Json>>('/audit', { action, user, resource, from, to, page, pageSize });
        printList(output, list, columns, 'audit records');
      }),
    ),
  );
  audit.addCommand(
    clientCommand('export', 'download the audit log as CSV or JSON, oldest first (admin); large exports run as a job', {
      output: false,
    })
      .addOption(new Option('--format <format>', 'file format').choices(['csv', 'json']).default('json'))
      .option('--start <time>', 'from this RFC 3339 time')
      .option('--end <time>', 'up to this RFC 3339 time (default: now)')
      .option('--action <action>', 'only this action')
      .option('--user <user>', 'only this user')
      .option('-n, --namespace <namespace>', 'only this namespace')
      .option('-f, --output-file <file>', "where to write it (- for stdout; default: the server's filename)")
      .option('--no-wait', 'for a job: print it and exit instead of waiting for the file')
      .option('--interval <seconds>', 'for a job: seconds between polls', positiveInt, 2)
      .action(act<ExportOpts>(async ({ client, opts }) => exportAudit(client, opts))),
  );
  audit.addCommand(
    clientCommand('verify', 'verify the audit chain on the server (admin); exit 1 when it is not intact').action(
      act<object>(async ({ client, output }) => {
        const verification = await client.get<Json>('/audit/verify');
        printAnswer(output, verification, () => describeVerification(verification));
        if (!verification.status.intact) process.exitCode = 1;
      }),
    ),
  );
}
