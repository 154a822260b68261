import { AppsV1Api, KubeConfig } from '@kubernetes/client-node';
import { mkdtempSync, readFileSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import path from 'path';
import { descendants, devEnv, startDev, stopDev, waitReady, type DevProcess } from '../harness/dev-process';
import { deploymentManifest, waitFor } from '../harness/kube';
import { freePort } from '../harness/ports';
import { alive } from '../harness/processes';

// The demo of docs/operations.md, "Watch Foghorn detect a failing Deployment": `foghorn dev --kube`
// runs a local control plane registered as the `local` cluster, and a Deployment whose pods
// crash-loop there becomes an incident from the watcher.
describe('foghorn dev --kube (e2e)', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'foghorn-e2e-kube-'));
  let dev: DevProcess | undefined;
  afterAll(async () => {
    if (dev) {
      const kids = descendants(dev.child.pid!);
      await stopDev(dev);
      expect(kids.filter(alive)).toEqual([]); // etcd, the API server, KWOK … stop with it
    }
    rmSync(dataDir, { recursive: true, force: true });
  }, 120_000);

  const get = async <T>(url: string): Promise<T> => {
    const res = await fetch(url, { headers: { authorization: `Bearer ${dev!.token}` } });
    return (await res.json()) as T;
  };
  /** The probe's value once `check` holds (polled; a failing probe counts as not yet). */
  const eventually = async <T>(probe: () => Promise<T>, check: (v: T) => boolean): Promise<T> => {
    let value: T | undefined;
    await waitFor('condition', async () => check((value = await probe())), 180_000);
    return value!;
  };

  it('registers the local cluster, reports its health and opens an incident for a crash-looping Deployment', async () => {
    const env = await devEnv(dataDir);
    dev = await startDev(env, ['--kube', '--kube-port', String(await freePort())]);
    await waitReady(dev.api);
    expect(dev.output()).toMatch(/Kubernetes:\s+https:\/\/127\.0\.0\.1:\d+ \(cluster `local`/);

    type ClusterList = { items: Array<{ name: string; connected: boolean; nodeCount: number }> };
    const clusters = await eventually(
      () => get<ClusterList>(`${dev!.api}/federation/clusters`),
      (list) => list.items.some((c) => c.name === 'local' && c.connected && c.nodeCount === 2),
    );
    expect(clusters.items.map((c) => c.name)).toContain('local');

    const kc = new KubeConfig();
    kc.loadFromString(readFileSync(path.join(dataDir, 'kube', 'kubeconfig'), 'utf8'));
    await kc.makeApiClient(AppsV1Api).createNamespacedDeployment({
      namespace: 'default',
      body: deploymentManifest('checkout', 2, 'crashloop'),
    });

    type IncidentList = { items: Array<{ name: string; resource: string; namespace: string }> };
    const incidents = await eventually(
      () => get<IncidentList>(`${dev!.api}/incidents?resource=Deployment/checkout`),
      (list) => list.items.length > 0,
    );
    expect(incidents.items).toHaveLength(1);
    const detail = await get<{ spec: { detectionSource: string } }>(`${dev.api}/incidents/${incidents.items[0].name}`);
    expect(detail.spec.detectionSource).toBe('kubernetes-watcher');
  }, 600_000);
});
