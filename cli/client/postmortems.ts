import type { Command } from 'commander';
import { readFile } from 'fs/promises';
import { text as streamText } from 'stream/consumers';
import { ageOf, type Column } from '../../domain/table';
import { act, clientCommand, clientGroup, withPaging } from './command';
import { ClientError } from './errors';
import { pathOf } from './http';
import { printAnswer, printList, printOne, show, type ListAnswer } from './output';

/* eslint-disable @typescript-eslint/no-explicit-any -- API JSON, shown as the API sends it */
type Json = any;

const now = new Date();

const listColumns: Column<Json>[] = [
  { header: 'NAME', value: (p) => p.name },
  { header: 'NAMESPACE', value: (p) => p.namespace },
  { header: 'INCIDENT', value: (p) => p.incident },
  { header: 'STATE', value: (p) => p.state },
  { header: 'SEVERITY', value: (p) => show(p.severity) },
  { header: 'REVIEWER', value: (p) => show(p.reviewedBy) },
  { header: 'AGE', value: (p) => ageOf(p.createdAt, now) },
  { header: 'TITLE', value: (p) => show(p.title), wide: true },
];

const detailColumns: Column<Json>[] = [
  { header: 'NAME', value: (p) => p.metadata.name },
  { header: 'NAMESPACE', value: (p) => p.metadata.namespace },
  { header: 'INCIDENT', value: (p) => p.metadata.incident },
  { header: 'STATE', value: (p) => p.status.state },
  { header: 'SEVERITY', value: (p) => show(p.report?.severity) },
  { header: 'REVIEWER', value: (p) => show(p.status.reviewer) },
  { header: 'AGE', value: (p) => ageOf(p.metadata.createdAt, now) },
  { header: 'TITLE', value: (p) => show(p.report?.title), wide: true },
];

type ReviewOpts = { namespace?: string; reviewer?: string; notes?: string };

function reviewCommand(verb: 'review' | 'close'): Command {
  return clientCommand(
    verb,
    verb === 'review' ? 'start (or update) the review: Open or InReview → InReview' : 'close a reviewed postmortem',
  )
    .argument('<name>', 'postmortem name')
    .option('--reviewer <user>', "who reviews (default: the token's user)")
    .option('--notes <text>', 'review notes')
    .option('-n, --namespace <namespace>', "the postmortem's namespace")
    .action(
      act<ReviewOpts, [string]>(async (ctx, name) => {
        const { client, opts, output } = ctx;
        const reviewer = opts.reviewer ?? (await ctx.whoami()).user;
        const after = await client.post<Json>(
          pathOf('/postmortems', name, verb),
          { reviewer, ...(opts.notes !== undefined && { notes: opts.notes }) },
          { namespace: opts.namespace },
        );
        printAnswer(
          output,
          after,
          () =>
            `postmortem/${after.metadata.name} ${verb === 'review' ? 'in review' : 'closed'} (reviewer ${after.status.reviewer})`,
        );
      }),
    );
}

/** Report fields whose values are text: `--set title=404` sends the string "404". */
const TEXT_FIELDS = new Set([
  'title',
  'summary',
  'impact.requestsAffected',
  'impact.revenueImpact',
  'rootCause.description',
  'rootCause.category',
  'gitCorrelation.commitSHA',
  'gitCorrelation.commitMessage',
  'gitCorrelation.author',
  'gitCorrelation.timestamp',
  'gitCorrelation.change',
  'gitCorrelation.reason',
]);

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * The body of `postmortems edit`: the file's patch (a JSON object), then each `--set
 * <path>=<value>` on top. A text field takes the value as written; any other field takes JSON
 * (`impact.usersAffected=1200`, `impact.usersAffected=null`, `lessonsLearned=["a","b"]`). The
 * server validates the rest (unknown fields are a 400).
 */
export function editBody(sets: readonly string[], file?: unknown): Record<string, unknown> {
  if (file !== undefined && !isObject(file)) throw new ClientError('the patch file must hold a JSON object');
  const body: Record<string, unknown> = structuredClone(file ?? {});
  for (const set of sets) {
    const eq = set.indexOf('=');
    if (eq < 1) throw new ClientError(`--set ${set}: expected <field>=<value>, e.g. impact.usersAffected=1200`);
    const field = set.slice(0, eq);
    const text = set.slice(eq + 1);
    let value: unknown = text;
    if (!TEXT_FIELDS.has(field)) {
      try {
        value = JSON.parse(text);
      } catch {
        throw new ClientError(`--set ${field}: the value must be JSON (a number, null, a list, …), got ${text}`);
      }
    }
    const path = field.split('.');
    let at = body;
    for (const key of path.slice(0, -1)) {
      if (!isObject(at[key])) at[key] = {};
      at = at[key] as Record<string, unknown>;
    }
    at[path[path.length - 1]] = value;
  }
  return body;
}

async function readPatch(file: string): Promise<unknown> {
  const text = await (file === '-' ? streamText(process.stdin) : readFile(file, 'utf8')).catch(
    (err: NodeJS.ErrnoException) => {
      throw new ClientError(`cannot read ${file}: ${err.code ?? err.message}`);
    },
  );
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ClientError(`${file}: not JSON: ${(err as Error).message}`);
  }
}

const collect = (value: string, previous: string[]) => [...previous, value];

function editCommand(): Command {
  return clientCommand('edit', 'correct or complete the report of an Open or InReview postmortem (operator)')
    .argument('<name>', 'postmortem name')
    .option(
      '--set <field=value>',
      'set a report field (repeatable): title=…, impact.usersAffected=1200, rootCause.category=oomkill, lessonsLearned=["…"]',
      collect,
      [],
    )
    .option('-f, --file <file>', 'a JSON patch of report fields (- for stdin); --set applies on top')
    .option('-n, --namespace <namespace>', "the postmortem's namespace")
    .action(
      act<{ set: string[]; file?: string; namespace?: string }, [string]>(async ({ client, opts, output }, name) => {
        if (opts.set.length === 0 && opts.file === undefined)
          throw new ClientError('give --set <field=value> or --file');
        const body = editBody(opts.set, opts.file === undefined ? undefined : await readPatch(opts.file));
        const after = await client.request<Json>('PATCH', pathOf('/postmortems', name), {
          body,
          query: { namespace: opts.namespace },
        });
        const edited = after.metadata.lastEditedBy
          ? ` (last edited by ${after.metadata.lastEditedBy} at ${after.metadata.lastEditedAt})`
          : '';
        printAnswer(output, after, () => `postmortem/${after.metadata.name} saved${edited}`);
      }),
    );
}

/** `foghorn postmortems list|get|edit|review|close`. */
export function postmortemsCommand(): Command {
  const postmortems = clientGroup('postmortems')
    .alias('postmortem')
    .description('postmortems: read, edit, review, close');
  postmortems.addCommand(
    withPaging(
      clientCommand('list', 'list postmortems, newest first')
        .option('--state <state>', 'Open, InReview or Closed')
        .option('--incident <name>', 'the postmortem of this incident'),
    ).action(
      act<{ state?: string; incident?: string; page?: number; pageSize?: number }>(async ({ client, opts, output }) => {
        const { state, incident, page, pageSize } = opts;
        const list = await client.get<ListAnswer<Json>>('/postmortems', { state, incident, page, pageSize });
        printList(output, list, listColumns, 'postmortems');
      }),
    ),
  );
  postmortems.addCommand(
    clientCommand('get', 'show one postmortem (the full report in -o yaml|json)')
      .argument('<name>', 'postmortem name')
      .option('-n, --namespace <namespace>', "the postmortem's namespace")
      .action(
        act<{ namespace?: string }, [string]>(async ({ client, opts, output }, name) => {
          printOne(
            output,
            await client.get(pathOf('/postmortems', name), { namespace: opts.namespace }),
            detailColumns,
          );
        }),
      ),
  );
  postmortems.addCommand(editCommand());
  postmortems.addCommand(reviewCommand('review'));
  postmortems.addCommand(reviewCommand('close'));
  return postmortems;
}
