import type { Command } from 'commander';
import { ageOf, type Column } from '../../domain/table';
import { act, clientCommand, clientGroup, withPaging } from './command';
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

/** `foghorn postmortems list|get|review|close`. */
export function postmortemsCommand(): Command {
  const postmortems = clientGroup('postmortems').alias('postmortem').description('postmortems: read, review, close');
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
  postmortems.addCommand(reviewCommand('review'));
  postmortems.addCommand(reviewCommand('close'));
  return postmortems;
}
