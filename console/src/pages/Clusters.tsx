import { Badge } from '../components/Badge';
import { Facts, Page, Section, TableScroll } from '../components/Layout';
import { ErrorMessage, Loading } from '../components/Messages';
import { ago, when } from '../format';
import { useApi } from '../queries';
import { href } from '../router';
import type { List } from '../types';

interface ClusterItem {
  name: string;
  displayName: string;
  tier: string;
  region: string;
  connected: boolean;
  version: string;
  nodeCount: number;
  activeIssues: number;
  lastHealthCheck?: string;
}
interface Cluster {
  metadata: { name: string; createdAt: string };
  spec: { displayName: string; tier: string; region: string };
  status: {
    phase: string;
    lastHealthCheck?: string;
    kubernetesVersion: string;
    nodeCount: number;
    namespaceCount: number;
    activeIssues: number;
    activeRemediations: number;
    resourceUsage: { cpuCapacity: string; cpuUsed: string; memoryCapacity: string; memoryUsed: string };
  };
}

export function Clusters() {
  const list = useApi<List<ClusterItem>>('/federation/clusters', { pageSize: 100 });
  return (
    <Page title="Clusters">
      <ErrorMessage error={list.error} />
      {list.isPending ? (
        <Loading what="clusters" />
      ) : (
        <TableScroll label="Clusters">
          <thead>
            <tr>
              <th scope="col">Cluster</th>
              <th scope="col">Connected</th>
              <th scope="col">Tier</th>
              <th scope="col">Region</th>
              <th scope="col">Version</th>
              <th scope="col">Nodes</th>
              <th scope="col">Open incidents</th>
              <th scope="col">Last health check</th>
            </tr>
          </thead>
          <tbody>
            {list.data?.items.map((c) => (
              <tr key={c.name}>
                <td>
                  <a href={href('clusters', c.name)}>{c.displayName || c.name}</a>
                </td>
                <td>
                  <Badge value={c.connected ? 'connected' : 'disconnected'} />
                </td>
                <td>{c.tier}</td>
                <td>{c.region}</td>
                <td>{c.version}</td>
                <td>{c.nodeCount}</td>
                <td>{c.activeIssues}</td>
                <td>{c.lastHealthCheck ? `${ago(c.lastHealthCheck)} ago` : 'never'}</td>
              </tr>
            ))}
            {list.data?.items.length === 0 && (
              <tr>
                <td colSpan={8}>No cluster is registered.</td>
              </tr>
            )}
          </tbody>
        </TableScroll>
      )}
    </Page>
  );
}

export function ClusterDetail({ name }: { name: string }) {
  const cluster = useApi<Cluster>(`/clusters/${encodeURIComponent(name)}`);
  if (cluster.isPending) return <Loading what={name} />;
  const c = cluster.data;
  if (!c) return <Page title={name}>{<ErrorMessage error={cluster.error} />}</Page>;
  const u = c.status.resourceUsage;
  return (
    <Page
      title={
        <>
          Cluster {c.spec.displayName || c.metadata.name} <Badge value={c.status.phase} />
        </>
      }
    >
      <Section title="Health">
        <Facts
          items={[
            ['Tier', c.spec.tier],
            ['Region', c.spec.region],
            ['Kubernetes', c.status.kubernetesVersion],
            ['Nodes', c.status.nodeCount],
            ['Namespaces', c.status.namespaceCount],
            ['Open incidents', c.status.activeIssues],
            ['Remediations running', c.status.activeRemediations],
            ['CPU requested / capacity', `${u.cpuUsed} / ${u.cpuCapacity}`],
            ['Memory requested / capacity', `${u.memoryUsed} / ${u.memoryCapacity}`],
            ['Last health check', when(c.status.lastHealthCheck)],
            ['Registered', when(c.metadata.createdAt)],
          ]}
        />
        <a href={href('incidents')}>Incidents</a>
      </Section>
    </Page>
  );
}
