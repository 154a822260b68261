import type { Command } from 'commander';
import { ageOf, formatTable, type Column } from '../../domain/table';
import { act, clientCommand, clientGroup, withPaging } from './command';
import { pathOf } from './http';
import { printAnswer, printList, printOne, show, type ListAnswer } from './output';

/* eslint-disable @typescript-eslint/no-explicit-any -- API JSON, shown as the API sends it */
type Json = any;

const now = new Date();

const listColumns: Column<Json>[] = [
  { header: 'NAME', value: (i) => i.name },
  { header: 'NAMESPACE', value: (i) => i.namespace },
  { header: 'SEVERITY', value: (i) => i.severity },
  { header: 'STATE', value: (i) => i.state },
  { header: 'RESOURCE', value: (i) => i.resource },
  { header: 'RISK', value: (i) => show(i.riskScore) },
  { header: 'AGE', value: (i) => ageOf(i.detectedAt, now) },
  { header: 'ASSIGNED', value: (i) => show(i.assignedTo), wide: true },
  { header: 'DESCRIPTION', value: (i) => show(i.description), wide: true },
];

const detailColumns: Column<Json>[] = [
  { header: 'NAME', value: (i) => i.metadata.name },
  { header: 'NAMESPACE', value: (i) => i.metadata.namespace },
  { header: 'SEVERITY', value: (i) => i.spec.severity },
  { header: 'STATE', value: (i) => i.status.state },
  { header: 'RESOURCE', value: (i) => i.spec.resource },
  { header: 'RISK', value: (i) => show(i.status.riskScore) },
  { header: 'ACK', value: (i) => show(i.status.acknowledged) },
  { header: 'AGE', value: (i) => ageOf(i.status.detectedAt, now) },
  { header: 'SIGNAL', value: (i) => i.spec.signalType, wide: true },
  { header: 'RUNBOOK', value: (i) => show(i.spec.runbook), wide: true },
  { header: 'POSTMORTEM', value: (i) => show(i.status.postmortem), wide: true },
  { header: 'DESCRIPTION', value: (i) => show(i.spec.description), wide: true },
];

const timelineColumns: Column<Json>[] = [
  { header: 'TIME', value: (e) => e.timestamp },
  { header: 'TYPE', value: (e) => e.type },
  { header: 'SOURCE', value: (e) => e.source },
  { header: 'MESSAGE', value: (e) => e.message },
  { header: 'SEVERITY', value: (e) => show(e.severity), wide: true },
];

const namespaceOption = (c: Command) => c.option('-n, --namespace <namespace>', "the incident's namespace");

interface ListOpts {
  severity?: string;
  state?: string;
  namespace?: string;
  resource?: string;
  since?: string;
  page?: number;
  pageSize?: number;
}

/** `foghorn incidents list|get|timeline|ack|snooze|resolve`. */
export function incidentsCommand(): Command {
  const incidents = clientGroup('incidents').alias('incident').description('list, inspect and act on incidents');

  incidents.addCommand(
    withPaging(
      clientCommand('list', 'list incidents, newest first')
        .option('--severity <severity>', 'critical, high, medium or low')
        .option('--state <state>', 'e.g. Detecting, Remediating, Escalated, Resolved')
        .option('-n, --namespace <namespace>', 'only this namespace')
        .option('--resource <kind/name>', 'only this resource, e.g. Deployment/checkout')
        .option('--since <time>', 'detected at or after this RFC 3339 time'),
    ).action(
      act<ListOpts>(async ({ client, opts, output }) => {
        const { severity, state, namespace, resource, since, page, pageSize } = opts;
        const list = await client.get<ListAnswer<Json>>('/incidents', {
          severity,
          state,
          namespace,
          resource,
          since,
          page,
          pageSize,
        });
        printList(output, list, listColumns, 'incidents');
      }),
    ),
  );

  incidents.addCommand(
    namespaceOption(clientCommand('get', 'show one incident'))
      .argument('<name>', 'incident name, e.g. INC-20260101-001')
      .action(
        act<{ namespace?: string }, [string]>(async ({ client, opts, output }, name) => {
          const incident = await client.get(pathOf('/incidents', name), { namespace: opts.namespace });
          printOne(output, incident, detailColumns);
        }),
      ),
  );

  incidents.addCommand(
    namespaceOption(clientCommand('timeline', "an incident's timeline, oldest first"))
      .argument('<name>', 'incident name')
      .action(
        act<{ namespace?: string }, [string]>(async ({ client, opts, output }, name) => {
          const timeline = await client.get<Json>(pathOf('/incidents', name, 'timeline'), {
            namespace: opts.namespace,
          });
          printAnswer(output, timeline, () =>
            timeline.events.length ? formatTable(timelineColumns, timeline.events, output === 'wide') : '',
          );
          if (output === 'table' && !timeline.events.length) process.stderr.write('No events found.\n');
        }),
      ),
  );

  incidents.addCommand(
    namespaceOption(clientCommand('ack', 'acknowledge: pauses escalation'))
      .alias('acknowledge')
      .argument('<name>', 'incident name')
      .option('-m, --message <text>', 'a note for the timeline')
      .option('--by <user>', "who acknowledges (default: the token's user)")
      .action(
        act<{ namespace?: string; message?: string; by?: string }, [string]>(async (ctx, name) => {
          const { client, opts, output } = ctx;
          const acknowledgedBy = opts.by ?? (await ctx.whoami()).user;
          const after = await client.post<Json>(
            pathOf('/incidents', name, 'acknowledge'),
            { acknowledgedBy, ...(opts.message !== undefined && { message: opts.message }) },
            { namespace: opts.namespace },
          );
          printAnswer(
            output,
            after,
            () => `incident/${after.metadata.name} acknowledged by ${after.status.acknowledgedBy}`,
          );
        }),
      ),
  );

  incidents.addCommand(
    namespaceOption(clientCommand('snooze', 'snooze notifications for a while (at most 24h)'))
      .argument('<name>', 'incident name')
      .requiredOption('-d, --duration <duration>', 'Go duration, e.g. 30m or 2h30m')
      .option('--reason <text>', 'why')
      .option('--by <user>', "who snoozes (default: the token's user)")
      .action(
        act<{ namespace?: string; duration: string; reason?: string; by?: string }, [string]>(async (ctx, name) => {
          const { client, opts, output } = ctx;
          const snoozedBy = opts.by ?? (await ctx.whoami()).user;
          const after = await client.post<Json>(
            pathOf('/incidents', name, 'snooze'),
            { duration: opts.duration, snoozedBy, ...(opts.reason !== undefined && { reason: opts.reason }) },
            { namespace: opts.namespace },
          );
          printAnswer(output, after, () => `incident/${after.metadata.name} snoozed until ${after.status.snoozeUntil}`);
        }),
      ),
  );

  incidents.addCommand(
    namespaceOption(clientCommand('resolve', 'resolve by hand (writes the postmortem)'))
      .argument('<name>', 'incident name')
      .option('-r, --resolution <text>', 'what fixed it')
      .action(
        act<{ namespace?: string; resolution?: string }, [string]>(async ({ client, opts, output }, name) => {
          // The API resolves in `default` unless told: without -n, the incident says where it lives.
          const namespace = opts.namespace ?? (await client.get<Json>(pathOf('/incidents', name))).metadata.namespace;
          const after = await client.post<Json>(
            pathOf('/incidents', name, 'resolve'),
            { ...(opts.resolution !== undefined && { resolution: opts.resolution }) },
            { namespace },
          );
          printAnswer(output, after, () => `incident/${after.metadata.name} resolved`);
        }),
      ),
  );

  return incidents;
}
