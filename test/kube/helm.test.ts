import { AppsV1Api, CoreV1Api, PolicyV1Api, RbacAuthorizationV1Api, type V1Deployment } from '@kubernetes/client-node';
import { spawn } from 'child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import path from 'path';
import { parseAllDocuments } from 'yaml';
import { KUBE_BIN } from '../../cli/embedded/kube';
import { REPO_ROOT, TOOLS_DIR } from '../../cli/paths';
import { useKube, waitFor, type KubeCluster } from '../harness/kube';

// The Helm chart (deploy/helm/foghorn, docs/helm.md) against the real API server: lint, render
// and validate with the server's own schemas, RBAC, then install, upgrade and uninstall on KWOK
// nodes. Helm and kubectl come from tools/helm/build.sh and tools/kube/build.sh.
const HELM = path.join(TOOLS_DIR, 'helm', 'bin', 'helm');
const KUBECTL = path.join(KUBE_BIN, 'kubectl');
const CHART = path.join(REPO_ROOT, 'deploy', 'helm', 'foghorn');
const ALL_ON = path.join(CHART, 'ci', 'all-on-values.yaml');
const NAMESPACE = 'foghorn';
const RELEASE = 'foghorn';
// Generous: on a busy 2-core machine the controller-manager and KWOK can lag for a while.
const HELM_TIMEOUT = '8m';

let kube: KubeCluster;
let dir: string;
let env: NodeJS.ProcessEnv;
let apps: AppsV1Api;
let core: CoreV1Api;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a tool with the test's kubeconfig and Helm's state in the temp dir; never rejects. */
function run(cmd: string, args: string[], input?: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(input ?? '');
  });
}

/** Like run, but a non-zero exit fails with what the tool printed. */
async function ok(cmd: string, args: string[], input?: string): Promise<string> {
  const r = await run(cmd, args, input);
  if (r.code !== 0)
    throw new Error(`${path.basename(cmd)} ${args.join(' ')} exited ${r.code}:\n${r.stderr}${r.stdout}`);
  return r.stdout;
}

const helm = (...args: string[]) => ok(HELM, args);
const template = (...args: string[]) => helm('template', RELEASE, CHART, '-n', NAMESPACE, ...args);

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  [field: string]: unknown;
}

const manifests = (yaml: string): Manifest[] =>
  parseAllDocuments(yaml)
    .map((d) => d.toJS() as Manifest | null)
    .filter((m): m is Manifest => m !== null);

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

/** Every `group/resource:verb` the chart's roles grant beyond get, list and watch. */
function writesGranted(objects: Manifest[]): string[] {
  const granted = new Set<string>();
  for (const role of objects.filter((m) => m.kind === 'ClusterRole' || m.kind === 'Role'))
    for (const rule of role.rules as Rule[])
      for (const group of rule.apiGroups)
        for (const resource of rule.resources)
          for (const verb of rule.verbs)
            if (!['get', 'list', 'watch'].includes(verb)) granted.add(`${group}/${resource}:${verb}`);
  return [...granted].sort();
}

/** What the API server says the chart's service account may do (impersonated by admin). */
async function canI(verb: string, resource: string, namespace?: string): Promise<boolean> {
  const r = await run(KUBECTL, [
    'auth',
    'can-i',
    verb,
    resource,
    `--as=system:serviceaccount:${NAMESPACE}:${RELEASE}`,
    ...(namespace ? ['-n', namespace] : ['--all-namespaces']),
  ]);
  if (r.stdout.trim() !== 'yes' && r.stdout.trim() !== 'no') throw new Error(`kubectl auth can-i: ${r.stderr}`);
  return r.stdout.trim() === 'yes';
}

type Permission = [verb: string, resource: string, namespace: string | undefined, allowed: boolean];

/**
 * Asserts what the service account may do, once the API server's RBAC caches show it: a binding
 * just written takes a moment to count.
 */
async function expectPermissions(expected: Permission[]): Promise<void> {
  const check = () =>
    Promise.all(
      expected.map(async ([verb, resource, ns]): Promise<Permission> => [
        verb,
        resource,
        ns,
        await canI(verb, resource, ns),
      ]),
    );
  let seen: Permission[] = [];
  await waitFor("the service account's permissions", async () => {
    seen = await check();
    return seen.every((p, i) => p[3] === expected[i][3]);
  }).catch(() => undefined); // the assertion below names the difference
  expect(seen).toEqual(expected);
}

const deployment = (component: string): Promise<V1Deployment> =>
  apps.readNamespacedDeployment({ name: `${RELEASE}-${component}`, namespace: NAMESPACE });

beforeAll(async () => {
  kube = await useKube();
  dir = mkdtempSync(path.join(tmpdir(), 'foghorn-helm-'));
  const kubeconfig = path.join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, kube.kubeconfig, { mode: 0o600 });
  env = {
    PATH: process.env.PATH,
    HOME: dir,
    KUBECONFIG: kubeconfig,
    HELM_CACHE_HOME: path.join(dir, 'helm-cache'),
    HELM_CONFIG_HOME: path.join(dir, 'helm-config'),
    HELM_DATA_HOME: path.join(dir, 'helm-data'),
  };
  apps = kube.kc.makeApiClient(AppsV1Api);
  core = kube.kc.makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: NAMESPACE } } });
  await waitFor(`the ${NAMESPACE} service account`, async () => {
    await core.readNamespacedServiceAccount({ name: 'default', namespace: NAMESPACE });
    return true;
  });
  await kube.addNode('kwok-node-1');
  await kube.addNode('kwok-node-2');
}, 240_000);

afterAll(async () => {
  await kube?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 60_000);

test('helm lint --strict accepts the default and the all-on values, the schema refuses bad ones', async () => {
  await helm('lint', '--strict', CHART);
  await helm('lint', '--strict', CHART, '-f', ALL_ON);
  const bad = await run(HELM, ['lint', '--strict', CHART, '--set', 'temporal.address=temporal']);
  expect(bad.code).not.toBe(0);
  expect(bad.stdout + bad.stderr).toMatch(/temporal.*address/);
  const tlsWithoutSecret = await run(HELM, ['template', RELEASE, CHART, '--set', 'temporal.tls.enabled=true']);
  expect(tlsWithoutSecret.code).not.toBe(0);
}, 120_000);

test.each([
  ['the default values', []],
  ['the all-on values', ['-f', ALL_ON]],
  [
    'writes in named namespaces, no gateway',
    ['-f', ALL_ON, '--set', 'remediation.kubernetesActions.namespaces={default}', '--set', 'gateway.enabled=false'],
  ],
])(
  '%s render manifests the API server accepts (server-side dry run, strict fields)',
  async (_what, args) => {
    const rendered = await template(...args);
    const { stdout, stderr } = await run(
      KUBECTL,
      ['apply', '--dry-run=server', '--validate=strict', '-f', '-'],
      rendered,
    ).then((r) => (r.code === 0 ? r : Promise.reject(new Error(`kubectl apply exited ${r.code}:\n${r.stderr}`))));
    // No field the server drops or a duplicate it merges: those come back as warnings.
    expect(stderr).not.toMatch(/warning/i);
    const kinds = manifests(rendered).map((m) => `${m.kind}/${m.metadata.name}`);
    expect(stdout.trim().split('\n')).toHaveLength(kinds.length);
  },
  120_000,
);

test('the dry run refuses a field the API server does not know (the check is not a formality)', async () => {
  const rendered = await template();
  const broken = rendered.replace(/^kind: Deployment\nmetadata:/m, 'kind: Deployment\nreplica: 2\nmetadata:');
  expect(broken).not.toBe(rendered);
  const r = await run(KUBECTL, ['apply', '--dry-run=server', '--validate=strict', '-f', '-'], broken);
  expect(r.code).not.toBe(0);
  expect(r.stderr).toMatch(/unknown field "replica"/);
}, 120_000);

test('RBAC: read-only by default; with actions enabled, exactly the writes the actions make', async () => {
  const defaults = manifests(await template());
  expect(writesGranted(defaults)).toEqual([]);
  const read = defaults.find((m) => m.kind === 'ClusterRole' && m.metadata.name === `${RELEASE}-read`)!;
  const reads = (read.rules as Rule[]).flatMap((r) => r.resources);
  // What the watcher's informers list and watch, and the read tools and evidence get.
  for (const resource of ['pods', 'pods/log', 'events', 'nodes', 'namespaces', 'configmaps', 'secrets'])
    expect(reads).toContain(resource);
  for (const resource of ['deployments', 'replicasets', 'statefulsets', 'daemonsets', 'controllerrevisions'])
    expect(reads).toContain(resource);
  const noSecrets = manifests(await template('--set', 'rbac.readSecrets=false'));
  expect(
    noSecrets.flatMap((m) => (m.kind === 'ClusterRole' ? (m.rules as Rule[]) : [])).flatMap((r) => r.resources),
  ).not.toContain('secrets');

  const actions = manifests(await template('--set', 'remediation.kubernetesActions.enabled=true'));
  expect(writesGranted(actions)).toEqual(['/pods:delete', 'apps/deployments/scale:patch', 'apps/deployments:patch']);
  expect(
    actions
      .filter((m) => m.kind === 'ClusterRoleBinding')
      .map((m) => m.metadata.name)
      .sort(),
  ).toEqual([`${RELEASE}-read`, `${RELEASE}-remediate`]);
  const scoped = manifests(
    await template(
      '--set',
      'remediation.kubernetesActions.enabled=true',
      '--set',
      'remediation.kubernetesActions.namespaces={shop,payments}',
    ),
  );
  expect(
    scoped
      .filter((m) => m.kind === 'RoleBinding')
      .map((m) => m.metadata.namespace)
      .sort(),
  ).toEqual(['payments', 'shop']);
  expect(scoped.filter((m) => m.kind === 'ClusterRoleBinding').map((m) => m.metadata.name)).toEqual([
    `${RELEASE}-read`,
  ]);
}, 60_000);

test('the pods run as a non-root user with a read-only root filesystem; only the worker gets a token', async () => {
  const deployments = manifests(await template('-f', ALL_ON)).filter(
    (m) => m.kind === 'Deployment',
  ) as unknown as V1Deployment[];
  expect(deployments.map((d) => d.metadata!.name).sort()).toEqual(['foghorn-api', 'foghorn-gateway', 'foghorn-worker']);
  for (const d of deployments) {
    const pod = d.spec!.template.spec!;
    const container = pod.containers[0];
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 1000,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(container.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    expect(pod.automountServiceAccountToken).toBe(d.metadata!.name === 'foghorn-worker');
    const names = container.env!.map((e) => e.name);
    expect(new Set(names).size).toBe(names.length);
    const value = (name: string) => container.env!.find((e) => e.name === name)?.value;
    expect(value('TEMPORAL_TLS_CERT_PATH')).toBe('/etc/foghorn/temporal-tls/tls.crt');
    expect(value('TEMPORAL_TLS_CA_PATH')).toBe('/etc/foghorn/temporal-tls/ca.crt');
    expect(value('FOGHORN_ESCALATION_FILE')).toBe('/etc/foghorn/escalation/escalation.yaml');
    expect(names).toEqual(expect.arrayContaining(['MONGODB_URI', 'FOGHORN_ADMIN_TOKEN', 'TEMPORAL_API_KEY']));
  }
  const api = deployments.find((d) => d.metadata!.name === 'foghorn-api')!.spec!.template.spec!.containers[0];
  expect(api.readinessProbe?.httpGet?.path).toBe('/readyz');
  expect(api.livenessProbe?.httpGet?.path).toBe('/healthz');
  expect(api.env!.find((e) => e.name === 'FOGHORN_TRUST_PROXY')?.value).toBe('10.0.0.0/8, 192.168.0.0/16');
  const defaults = manifests(await template()).filter((m) => m.kind === 'Deployment') as unknown as V1Deployment[];
  const trust = (name: string) =>
    defaults
      .find((d) => d.metadata!.name === name)!
      .spec!.template.spec!.containers[0].env!.find((e) => e.name === 'FOGHORN_TRUST_PROXY')?.value;
  expect(trust('foghorn-api')).toBe('false');
  const behindIngress = manifests(await template('--set', 'ingress.enabled=true')).find(
    (m) => m.kind === 'Deployment' && m.metadata.name === 'foghorn-api',
  ) as unknown as V1Deployment;
  expect(
    behindIngress.spec!.template.spec!.containers[0].env!.find((e) => e.name === 'FOGHORN_TRUST_PROXY')?.value,
  ).toBe('1');
}, 60_000);

test('helm install --wait reaches Ready: 2 API and 2 worker replicas, read-only RBAC', async () => {
  // The Secrets docs/helm.md tells an operator to create first.
  const secret = (...args: string[]) => ok(KUBECTL, ['-n', NAMESPACE, 'create', 'secret', 'generic', ...args]);
  await secret(
    'foghorn',
    `--from-literal=admin-token=${'a'.repeat(40)}`,
    `--from-literal=audit-key=${'b'.repeat(40)}`,
    `--from-literal=secret-key=${Buffer.alloc(32, 7).toString('base64')}`,
  );
  await secret('foghorn-mongodb', '--from-literal=mongodb-uri=mongodb://mongodb.example:27017/foghorn');

  await helm('install', RELEASE, CHART, '-n', NAMESPACE, '--wait', '--timeout', HELM_TIMEOUT);
  const [api, worker, gateway] = await Promise.all(['api', 'worker', 'gateway'].map(deployment));
  expect(api.status?.readyReplicas).toBe(2);
  expect(worker.status?.readyReplicas).toBe(2);
  expect(gateway.status?.readyReplicas).toBe(1);
  const pdbs = await kube.kc.makeApiClient(PolicyV1Api).listNamespacedPodDisruptionBudget({ namespace: NAMESPACE });
  expect(pdbs.items.map((p) => p.metadata!.name).sort()).toEqual(['foghorn-api', 'foghorn-worker']);
  const services = await core.listNamespacedService({ namespace: NAMESPACE });
  expect(services.items.map((s) => s.metadata!.name).sort()).toEqual(['foghorn-api', 'foghorn-gateway']);

  await expectPermissions([
    ['watch', 'pods', undefined, true],
    ['list', 'secrets', undefined, true],
    ['watch', 'controllerrevisions.apps', undefined, true],
    ['get', 'pods/log', 'default', true],
    ['patch', 'deployments.apps', 'default', false],
    ['patch', 'deployments.apps/scale', 'default', false],
    ['delete', 'pods', 'default', false],
  ]);
}, 600_000);

test('helm upgrade rolls out a new revision: 3 API replicas, a changed setting, remediation writes', async () => {
  const before = await deployment('api');
  await helm(
    'upgrade', RELEASE, CHART, '-n', NAMESPACE, '--reuse-values', '--wait', '--timeout', HELM_TIMEOUT,
    '--set', 'api.replicas=3',
    '--set', 'env.FOGHORN_LOG_LEVEL=debug',
    '--set', 'remediation.kubernetesActions.enabled=true',
  ); // prettier-ignore
  const api = await deployment('api');
  expect(api.metadata!.generation).toBeGreaterThan(before.metadata!.generation!);
  expect(api.spec!.template.spec!.containers[0].env!.find((e) => e.name === 'FOGHORN_LOG_LEVEL')?.value).toBe('debug');
  // The template changed: a new revision, every pod of its ReplicaSet, and all 3 ready.
  const revision = (d: V1Deployment) => Number(d.metadata?.annotations?.['deployment.kubernetes.io/revision'] ?? 0);
  await waitFor('the API rollout', async () => {
    const d = await deployment('api');
    return (
      revision(d) > revision(before) &&
      d.status?.observedGeneration === d.metadata!.generation &&
      d.status?.readyReplicas === 3 &&
      d.status?.updatedReplicas === 3 &&
      d.status?.replicas === 3
    );
  });
  const worker = await deployment('worker');
  expect(worker.status?.readyReplicas).toBe(2);
  await expectPermissions([
    ['patch', 'deployments.apps', 'default', true],
    ['patch', 'deployments.apps/scale', 'default', true],
    ['delete', 'pods', 'default', true],
    ['update', 'deployments.apps', 'default', false],
    ['create', 'pods', 'default', false],
    ['delete', 'deployments.apps', 'default', false],
  ]);
  expect((await helm('history', RELEASE, '-n', NAMESPACE, '-o', 'json')).match(/"revision":/g)).toHaveLength(2);
}, 600_000);

test('helm uninstall removes everything it installed', async () => {
  await helm('uninstall', RELEASE, '-n', NAMESPACE, '--wait', '--timeout', HELM_TIMEOUT);
  const selector = { namespace: NAMESPACE, labelSelector: `app.kubernetes.io/instance=${RELEASE}` };
  expect((await apps.listNamespacedDeployment(selector)).items).toEqual([]);
  expect((await core.listNamespacedService(selector)).items).toEqual([]);
  expect((await core.listNamespacedServiceAccount(selector)).items).toEqual([]);
  expect((await kube.kc.makeApiClient(PolicyV1Api).listNamespacedPodDisruptionBudget(selector)).items).toEqual([]);
  const rbac = kube.kc.makeApiClient(RbacAuthorizationV1Api);
  expect((await rbac.listClusterRole({ labelSelector: selector.labelSelector })).items).toEqual([]);
  expect((await rbac.listClusterRoleBinding({ labelSelector: selector.labelSelector })).items).toEqual([]);
  // The pods go with their ReplicaSets (the garbage collector, then KWOK).
  await waitFor('no Foghorn pods', async () => (await core.listNamespacedPod(selector)).items.length === 0, 180_000);
  // The Secrets were the operator's: they stay.
  expect((await core.readNamespacedSecret({ name: 'foghorn', namespace: NAMESPACE })).metadata?.name).toBe('foghorn');
}, 300_000);
