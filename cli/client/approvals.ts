import type { Command } from 'commander';
import { ageOf, type Column } from '../../domain/table';
import { act, clientCommand, clientGroup, withPaging } from './command';
import { pathOf } from './http';
import { printAnswer, printList, printOne, show, type ListAnswer } from './output';

/* eslint-disable @typescript-eslint/no-explicit-any -- API JSON, shown as the API sends it */
type Json = any;

const now = new Date();

/** List items and the detail share their fields (the detail adds previews). */
const columns: Column<Json>[] = [
  { header: 'NAME', value: (a) => a.name },
  { header: 'NAMESPACE', value: (a) => a.namespace },
  { header: 'STATUS', value: (a) => a.status },
  { header: 'INCIDENT', value: (a) => a.incident },
  { header: 'ACTION', value: (a) => a.action },
  { header: 'RISK', value: (a) => show(a.riskScore) },
  { header: 'ROLE', value: (a) => a.requiredRole },
  { header: 'AGE', value: (a) => ageOf(a.requestedAt, now) },
  { header: 'RUNBOOK', value: (a) => show(a.runbook), wide: true },
  { header: 'DECIDED-BY', value: (a) => show(a.decidedBy), wide: true },
  { header: 'EXPIRES', value: (a) => show(a.expiresAt), wide: true },
];

function decideCommand(decision: 'approve' | 'reject'): Command {
  return clientCommand(
    decision,
    decision === 'approve' ? 'approve: the remediation plan goes on' : 'reject: the remediation plan does not run',
  )
    .argument('<name>', 'approval name, e.g. APR-20260101-001')
    .option('-c, --comment <text>', decision === 'approve' ? 'why it is fine' : 'why not')
    .action(
      act<{ comment?: string }, [string]>(async ({ client, opts, output }, name) => {
        const after = await client.post<Json>(pathOf('/approvals', name, decision), {
          ...(opts.comment !== undefined && { comment: opts.comment }),
        });
        printAnswer(output, after, () => `approval/${after.name} ${after.status} by ${after.decidedBy}`);
      }),
    );
}

/** `foghorn approvals list|get|approve|reject`. */
export function approvalsCommand(): Command {
  const approvals = clientGroup('approvals').alias('approval').description('remediation approvals: list and decide');
  approvals.addCommand(
    withPaging(
      clientCommand('list', 'list approvals, newest first')
        .option('--status <status>', 'pending, approved, rejected or expired')
        .option('--incident <name>', 'only this incident')
        .option('-n, --namespace <namespace>', 'only this namespace'),
    ).action(
      act<{ status?: string; incident?: string; namespace?: string; page?: number; pageSize?: number }>(
        async ({ client, opts, output }) => {
          const { status, incident, namespace, page, pageSize } = opts;
          const list = await client.get<ListAnswer<Json>>('/approvals', {
            status,
            incident,
            namespace,
            page,
            pageSize,
          });
          printList(output, list, columns, 'approvals');
        },
      ),
    ),
  );
  approvals.addCommand(
    clientCommand('get', 'show one approval (with previews of its changes in -o yaml|json)')
      .argument('<name>', 'approval name')
      .action(
        act<object, [string]>(async ({ client, output }, name) => {
          printOne(output, await client.get(pathOf('/approvals', name)), columns);
        }),
      ),
  );
  approvals.addCommand(decideCommand('approve'));
  approvals.addCommand(decideCommand('reject'));
  return approvals;
}
