import type { Command } from 'commander';
import { readFile } from 'fs/promises';
import { text as streamText } from 'stream/consumers';
import { parseAllDocuments } from 'yaml';
import { ageOf, type Column } from '../../domain/table';
import { act, clientCommand, clientGroup, withPaging } from './command';
import { ApiFailure, ClientError } from './errors';
import { pathOf, type ApiClient } from './http';
import { printAnswer, printList, printOne, show, type ListAnswer } from './output';

/* eslint-disable @typescript-eslint/no-explicit-any -- API JSON, shown as the API sends it */
type Json = any;

const now = new Date();

const listColumns: Column<Json>[] = [
  { header: 'NAME', value: (r) => r.name },
  { header: 'CATEGORY', value: (r) => r.category },
  { header: 'VERSION', value: (r) => r.version },
  { header: 'AUTOMATED', value: (r) => show(r.automated) },
  { header: 'APPROVAL', value: (r) => show(r.approvalRequired) },
  { header: 'STEPS', value: (r) => show(r.stepsCount) },
  { header: 'SEVERITY', value: (r) => show(r.severity) },
  { header: 'AGE', value: (r) => ageOf(r.createdAt, now) },
  { header: 'SUCCESS', value: (r) => (r.successRate === null ? show(null) : `${r.successRate}%`), wide: true },
  { header: 'LAST-USED', value: (r) => show(r.lastUsed), wide: true },
  { header: 'DESCRIPTION', value: (r) => show(r.description), wide: true },
];

const detailColumns: Column<Json>[] = [
  { header: 'NAME', value: (r) => r.metadata.name },
  { header: 'CATEGORY', value: (r) => r.spec.category },
  { header: 'VERSION', value: (r) => r.spec.version },
  { header: 'AUTOMATED', value: (r) => show(r.spec.automated) },
  { header: 'APPROVAL', value: (r) => show(r.spec.approvalRequired) },
  { header: 'STEPS', value: (r) => show(r.status.stepsCount) },
  { header: 'SEVERITY', value: (r) => show(r.spec.severity) },
  { header: 'AGE', value: (r) => ageOf(r.metadata.createdAt, now) },
  {
    header: 'SUCCESS',
    value: (r) => (r.status.successRate === null ? show(null) : `${r.status.successRate}%`),
    wide: true,
  },
  { header: 'EXECUTIONS', value: (r) => show(r.status.executions), wide: true },
  { header: 'DESCRIPTION', value: (r) => show(r.spec.description), wide: true },
];

/**
 * One runbook of a file, in either shape: the Runbook object `runbooks get -o yaml` prints
 * (`metadata.name` + `spec`), or the flat body of POST /runbooks (`name`, `category`, …).
 */
export function runbookOfDocument(doc: unknown, where: string): { name: string; spec: Record<string, unknown> } {
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new ClientError(`${where}: not a runbook object`);
  const d = doc as Record<string, any>;
  if (d.spec && typeof d.spec === 'object') {
    if (d.kind !== undefined && d.kind !== 'Runbook') throw new ClientError(`${where}: kind ${d.kind} is not Runbook`);
    const name = d.metadata?.name;
    if (typeof name !== 'string' || !name) throw new ClientError(`${where}: metadata.name is missing`);
    return { name, spec: { ...d.spec } };
  }
  const { name, ...spec } = d;
  if (typeof name !== 'string' || !name) throw new ClientError(`${where}: name is missing`);
  return { name, spec };
}

/** The runbooks of a YAML or JSON file (YAML may hold several documents, `---` apart). */
async function readRunbooks(file: string) {
  const text = await (file === '-' ? streamText(process.stdin) : readFile(file, 'utf8')).catch(
    (err: NodeJS.ErrnoException) => {
      throw new ClientError(`cannot read ${file}: ${err.code ?? err.message}`);
    },
  );
  const docs = parseAllDocuments(text);
  const list = Array.isArray(docs) ? docs : [docs];
  return list
    .map((doc, i) => {
      if (doc.errors.length) throw new ClientError(`${file}: not YAML or JSON: ${doc.errors[0].message}`);
      return { doc: doc.toJS() as unknown, where: list.length > 1 ? `${file} (document ${i + 1})` : file };
    })
    .filter(({ doc }) => doc !== null && doc !== undefined)
    .map(({ doc, where }) => runbookOfDocument(doc, where));
}

/** kubectl apply: PUT when the runbook exists, else POST. */
async function apply(client: ApiClient, name: string, spec: Record<string, unknown>) {
  try {
    await client.get(pathOf('/runbooks', name));
  } catch (err) {
    if (!(err instanceof ApiFailure && err.status === 404)) throw err;
    return { verb: 'created', answer: await client.post<Json>('/runbooks', { name, ...spec }) };
  }
  return { verb: 'configured', answer: await client.put<Json>(pathOf('/runbooks', name), spec) };
}

/** `foghorn runbooks list|get|apply|delete`. */
export function runbooksCommand(): Command {
  const runbooks = clientGroup('runbooks')
    .alias('runbook')
    .description('runbooks: list, show, apply from a file, delete');
  runbooks.addCommand(
    withPaging(
      clientCommand('list', 'list runbooks, by name')
        .option('--category <category>', 'only this category')
        .option('--severity <severity>', 'only runbooks for this severity')
        .option('--automated <bool>', 'true or false'),
    ).action(
      act<{ category?: string; severity?: string; automated?: string; page?: number; pageSize?: number }>(
        async ({ client, opts, output }) => {
          const { category, severity, automated, page, pageSize } = opts;
          const list = await client.get<ListAnswer<Json>>('/runbooks', {
            category,
            severity,
            automated,
            page,
            pageSize,
          });
          printList(output, list, listColumns, 'runbooks');
        },
      ),
    ),
  );
  runbooks.addCommand(
    clientCommand('get', 'show one runbook (-o yaml gives a file `apply -f` takes back)')
      .argument('<name>', 'runbook name')
      .action(
        act<object, [string]>(async ({ client, output }, name) => {
          printOne(output, await client.get(pathOf('/runbooks', name)), detailColumns);
        }),
      ),
  );
  runbooks.addCommand(
    clientCommand('apply', 'create or replace runbooks from a YAML or JSON file (admin)')
      .requiredOption('-f, --filename <file>', 'the file (- for stdin)')
      .action(
        act<{ filename: string }>(async ({ client, opts, output }) => {
          const items = await readRunbooks(opts.filename);
          if (items.length === 0) throw new ClientError(`${opts.filename}: no runbook in it`);
          const answers: Json[] = [];
          for (const { name, spec } of items) {
            const { verb, answer } = await apply(client, name, spec);
            answers.push(answer);
            if (output === 'table' || output === 'wide') process.stdout.write(`runbook/${name} ${verb}\n`);
          }
          if (output === 'json' || output === 'yaml')
            printAnswer(output, answers.length === 1 ? answers[0] : { kind: 'List', items: answers }, () => '');
        }),
      ),
  );
  runbooks.addCommand(
    clientCommand('delete', 'delete a runbook (admin)', { output: false })
      .argument('<name>', 'runbook name')
      .action(
        act<object, [string]>(async ({ client }, name) => {
          await client.delete(pathOf('/runbooks', name));
          process.stdout.write(`runbook/${name} deleted\n`);
        }),
      ),
  );
  return runbooks;
}
