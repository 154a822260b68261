import type { Command } from 'commander';
import { ageOf, type Column } from '../../domain/table';
import { act, clientCommand, clientGroup, withPaging } from './command';
import { pathOf } from './http';
import { printList, printOne, show, type ListAnswer } from './output';

/* eslint-disable @typescript-eslint/no-explicit-any -- API JSON, shown as the API sends it */
type Json = any;

const now = new Date();

const listColumns: Column<Json>[] = [
  { header: 'NAME', value: (p) => p.name },
  { header: 'NAMESPACE', value: (p) => p.namespace },
  { header: 'INCIDENT', value: (p) => p.issueRef },
  { header: 'RUNBOOK', value: (p) => show(p.runbook) },
  { header: 'STATE', value: (p) => p.state },
  { header: 'ATTEMPT', value: (p) => show(p.attempt) },
  { header: 'RISK', value: (p) => show(p.riskScore) },
  { header: 'AGE', value: (p) => ageOf(p.creationTimestamp, now) },
  { header: 'STRATEGY', value: (p) => show(p.strategy), wide: true },
  { header: 'APPROVAL', value: (p) => show(p.approval), wide: true },
  { header: 'RESULT', value: (p) => show(p.result), wide: true },
];

const detailColumns: Column<Json>[] = [
  { header: 'NAME', value: (p) => p.metadata.name },
  { header: 'NAMESPACE', value: (p) => p.metadata.namespace },
  { header: 'INCIDENT', value: (p) => p.spec.issueRef },
  { header: 'RUNBOOK', value: (p) => show(p.spec.runbook) },
  { header: 'STATE', value: (p) => p.status.state },
  { header: 'ATTEMPT', value: (p) => show(p.spec.attempt) },
  { header: 'RISK', value: (p) => show(p.spec.riskScore) },
  { header: 'AGE', value: (p) => ageOf(p.metadata.creationTimestamp, now) },
  { header: 'STRATEGY', value: (p) => show(p.spec.strategy), wide: true },
  { header: 'STEPS', value: (p) => show((p.spec.actions ?? []).map((a: Json) => a.type)), wide: true },
  { header: 'RESULT', value: (p) => show(p.status.result), wide: true },
];

/** `foghorn remediations list|get`. */
export function remediationsCommand(): Command {
  const remediations = clientGroup('remediations')
    .alias('remediation')
    .description('remediation plans (read-only: the incident workflows run them)');
  remediations.addCommand(
    withPaging(
      clientCommand('list', 'list remediation plans, newest first')
        .option('--incident <name>', 'only the plans of this incident')
        .option('--state <state>', 'e.g. Pending, Executing, Completed, Failed')
        .option('-n, --namespace <namespace>', 'only this namespace'),
    ).action(
      act<{ incident?: string; state?: string; namespace?: string; page?: number; pageSize?: number }>(
        async ({ client, opts, output }) => {
          const { incident, state, namespace, page, pageSize } = opts;
          const list = await client.get<ListAnswer<Json>>('/remediations', {
            incident,
            state,
            namespace,
            page,
            pageSize,
          });
          printList(output, list, listColumns, 'remediation plans');
        },
      ),
    ),
  );
  remediations.addCommand(
    clientCommand('get', 'show one remediation plan')
      .argument('<name>', 'plan name, e.g. RP-20260101-001')
      .action(
        act<object, [string]>(async ({ client, output }, name) => {
          printOne(output, await client.get(pathOf('/remediations', name)), detailColumns);
        }),
      ),
  );
  return remediations;
}
