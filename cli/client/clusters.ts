import type { Command } from 'commander';
import { ageOf, type Column } from '../../domain/table';
import { act, clientCommand, clientGroup, withPaging } from './command';
import { pathOf } from './http';
import { printList, printOne, show, type ListAnswer } from './output';

/* eslint-disable @typescript-eslint/no-explicit-any -- API JSON, shown as the API sends it */
type Json = any;

const now = new Date();

const listColumns: Column<Json>[] = [
  { header: 'NAME', value: (c) => c.name },
  { header: 'NAMESPACE', value: (c) => c.namespace },
  { header: 'TIER', value: (c) => c.tier },
  { header: 'REGION', value: (c) => show(c.region) },
  { header: 'CONNECTED', value: (c) => show(c.connected) },
  { header: 'VERSION', value: (c) => show(c.version) },
  { header: 'NODES', value: (c) => show(c.nodeCount) },
  { header: 'ISSUES', value: (c) => show(c.activeIssues) },
  { header: 'AGE', value: (c) => ageOf(c.creationTimestamp, now) },
  { header: 'DISPLAY-NAME', value: (c) => show(c.displayName), wide: true },
  { header: 'LAST-CHECK', value: (c) => show(c.lastHealthCheck), wide: true },
];

const detailColumns: Column<Json>[] = [
  { header: 'NAME', value: (c) => c.metadata.name },
  { header: 'NAMESPACE', value: (c) => c.metadata.namespace },
  { header: 'TIER', value: (c) => c.spec.tier },
  { header: 'REGION', value: (c) => show(c.spec.region) },
  { header: 'PHASE', value: (c) => c.status.phase },
  { header: 'VERSION', value: (c) => show(c.status.kubernetesVersion) },
  { header: 'NODES', value: (c) => show(c.status.nodeCount) },
  { header: 'ISSUES', value: (c) => show(c.status.activeIssues) },
  { header: 'AGE', value: (c) => ageOf(c.metadata.createdAt, now) },
  { header: 'DISPLAY-NAME', value: (c) => show(c.spec.displayName), wide: true },
  { header: 'REMEDIATIONS', value: (c) => show(c.status.activeRemediations), wide: true },
  { header: 'LAST-CHECK', value: (c) => show(c.status.lastHealthCheck), wide: true },
];

/** `foghorn clusters list|get`. */
export function clustersCommand(): Command {
  const clusters = clientGroup('clusters').alias('cluster').description('registered Kubernetes clusters');
  clusters.addCommand(
    withPaging(
      clientCommand('list', 'list registered clusters, by name').option('--tier <tier>', 'only this tier'),
    ).action(
      act<{ tier?: string; page?: number; pageSize?: number }>(async ({ client, opts, output }) => {
        const { tier, page, pageSize } = opts;
        const list = await client.get<ListAnswer<Json>>('/federation/clusters', { tier, page, pageSize });
        printList(output, list, listColumns, 'clusters');
      }),
    ),
  );
  clusters.addCommand(
    clientCommand('get', 'show one cluster registration')
      .argument('<name>', 'cluster name')
      .option('-n, --namespace <namespace>', 'namespace of the registration (default: default)')
      .action(
        act<{ namespace?: string }, [string]>(async ({ client, opts, output }, name) => {
          printOne(output, await client.get(pathOf('/clusters', name), { namespace: opts.namespace }), detailColumns);
        }),
      ),
  );
  return clusters;
}
