import { InvalidArgumentError, type Command } from 'commander';
import { DurationError, parseDuration } from '../../domain/duration';
import { ageOf, type Column } from '../../domain/table';
import { act, clientCommand, withPaging } from './command';
import { printList, show, type ListAnswer } from './output';

/* eslint-disable @typescript-eslint/no-explicit-any -- API JSON, shown as the API sends it */
type Json = any;

const now = new Date();

const revisionOf = (c: Json) =>
  c.revision === undefined
    ? '<none>'
    : `${c.revision}${c.previousRevision === undefined ? '' : `<-${c.previousRevision}`}`;

/** The revision's health: `Healthy`, `Failed(CrashLoopBackOff,exit=1)`, `Progressing`, or `<none>`. */
function healthOf(c: Json): string {
  const h = c.revisionHealth;
  if (!h) return '<none>';
  const f = h.failure;
  return f ? `${h.state}(${f.signal}${f.exitCode === undefined ? '' : `,exit=${f.exitCode}`})` : h.state;
}

const byOf = (c: Json) => (c.by?.foghorn ? 'foghorn' : show(c.by?.manager));

const columns: Column<Json>[] = [
  { header: 'AGE', value: (c) => ageOf(c.at, now) },
  { header: 'CLUSTER', value: (c) => c.cluster },
  { header: 'NAMESPACE', value: (c) => show(c.namespace) },
  { header: 'RESOURCE', value: (c) => c.resource },
  { header: 'TYPE', value: (c) => c.type },
  { header: 'REVISION', value: revisionOf },
  { header: 'HEALTH', value: healthOf },
  { header: 'BY', value: byOf },
  { header: 'TIME', value: (c) => c.at, wide: true },
  { header: 'CHANGE-CAUSE', value: (c) => show(c.by?.changeCause), wide: true },
  { header: 'SOURCE', value: (c) => show(c.by?.source), wide: true },
  {
    header: 'DIFF',
    value: (c) => show((c.diff ?? []).map((d: Json) => `${d.field}: ${d.from || '""'} -> ${d.to || '""'}`).join('; ')),
    wide: true,
  },
  { header: 'SUMMARY', value: (c) => c.summary },
];

/**
 * `--since`: an RFC 3339 time as it is, or a Go duration (`2h`, `90m`) back from now. The API
 * takes the time; the duration is resolved here, on the caller's clock.
 */
export function parseSince(text: string, at = new Date()): string {
  if (/^\d{4}-\d{2}-\d{2}T/.test(text)) {
    if (Number.isNaN(Date.parse(text)))
      throw new InvalidArgumentError('must be an RFC 3339 time or a duration like 2h');
    return text;
  }
  let ms: number;
  try {
    ms = parseDuration(text);
  } catch (err) {
    if (err instanceof DurationError) throw new InvalidArgumentError('must be an RFC 3339 time or a duration like 2h');
    throw err;
  }
  if (ms < 0) throw new InvalidArgumentError('must not be negative');
  return new Date(at.getTime() - ms).toISOString();
}

interface ChangesOpts {
  cluster?: string;
  namespace?: string;
  resource?: string;
  since?: string;
  page?: number;
  pageSize?: number;
}

/** `foghorn changes`: the change record of watched clusters, newest first (GET /changes). */
export function changesCommand(): Command {
  return withPaging(
    clientCommand(
      'changes',
      'what changed in watched clusters (rollouts, restarts, scaling, config, nodes), newest first',
    )
      .alias('change')
      .option('--cluster <cluster>', 'only this cluster')
      .option('-n, --namespace <namespace>', 'only this namespace')
      .option('--resource <kind/name>', 'the changed object or a workload it concerns, e.g. Deployment/checkout')
      .option('--since <time>', 'at or after this RFC 3339 time, or this long ago (e.g. 2h, 30m)', (t) =>
        parseSince(t),
      ),
  ).action(
    act<ChangesOpts>(async ({ client, opts, output }) => {
      const { cluster, namespace, resource, since, page, pageSize } = opts;
      const list = await client.get<ListAnswer<Json>>('/changes', {
        cluster,
        namespace,
        resource,
        since,
        page,
        pageSize,
      });
      printList(output, list, columns, 'changes');
    }),
  );
}
