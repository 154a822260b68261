import { AppsV1Api, CoreV1Api, PatchStrategy, setHeaderOptions, type V1Deployment } from '@kubernetes/client-node';
import type { WorkflowHandle } from '@temporalio/client';
import { mkdtempSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import path from 'path';
import { Writable } from 'stream';
import { createKubeActionActivities } from '../../activities/kube-actions';
import { createLogger } from '../../api/observability';
import { clusterWatchWorkflowId } from '../../domain/cluster';
import { installRuntime } from '../../worker/worker';
import { clusterWatchWorkflow } from '../../workflows/cluster-watch';
import { activityRunner } from '../harness/activity';
import { deploymentManifest, useKube, waitFor, type KubeCluster } from '../harness/kube';
import { useStack } from '../harness/stack';

/**
 * Evidence as a user meets it (issue 60): a real kube-apiserver with KWOK nodes, the watcher,
 * ingestion and the analysis on a real worker. Six failures — a bad image, a bad mounted config,
 * a lowered memory limit, an image tag typo, a crash with no recent change, a node going
 * NotReady — each produce an insight whose gitOpsContext names the right change (or says none
 * was found) and whose recommendations cite evidence; GET /changes lists the changes with their
 * revisions and diffs, Foghorn's own restart marked as Foghorn's; a Secret's value appears in no
 * answer, log line or workflow history.
 */

jest.setTimeout(600_000);

const logged: string[] = [];
installRuntime(
  createLogger('info', {
    stream: new Writable({
      write(chunk: Buffer, _enc, done) {
        logged.push(chunk.toString('utf8'));
        done();
      },
    }),
    pretty: false,
  }),
);

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- API JSON
type Json = any;

const SECRET_VALUE = 'p4ssw0rd-of-the-checkout-database';
const NAMESPACES = ['bad-image', 'bad-config', 'oom', 'typo', 'no-change'];

let kube: KubeCluster;
let stack: Awaited<ReturnType<typeof useStack>>;
let apps: AppsV1Api;
let core: CoreV1Api;
let watch: WorkflowHandle;
let dir: string;
const savedKubeconfig = process.env.KUBECONFIG;

const merge = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

function checkout(namespace: string): V1Deployment {
  const d = deploymentManifest('checkout', 2, undefined, namespace);
  const c = d.spec!.template.spec!.containers[0];
  c.image = 'checkout:1';
  c.resources = { limits: { memory: '512Mi' } };
  c.env = [{ name: 'DB_PASSWORD', valueFrom: { secretKeyRef: { name: 'checkout-db', key: 'password' } } }];
  c.volumeMounts = [{ name: 'config', mountPath: '/etc/checkout' }];
  d.spec!.template.spec!.volumes = [{ name: 'config', configMap: { name: 'checkout-config' } }];
  return d;
}

async function deploy(namespace: string) {
  await core.createNamespace({ body: { metadata: { name: namespace } } });
  await waitFor(`the service account of ${namespace}`, async () => {
    await core.readNamespacedServiceAccount({ name: 'default', namespace });
    return true;
  });
  await core.createNamespacedConfigMap({
    namespace,
    body: { metadata: { name: 'checkout-config' }, data: { 'checkout.yaml': 'payments: https://pay.internal' } },
  });
  await core.createNamespacedSecret({
    namespace,
    body: { metadata: { name: 'checkout-db' }, stringData: { password: SECRET_VALUE } },
  });
  await apps.createNamespacedDeployment({ namespace, body: checkout(namespace) });
}

/** A rollout by a person with kubectl: a new template with a change-cause. */
async function rollout(namespace: string, container: object, sim: string, cause: string) {
  await apps.patchNamespacedDeployment(
    {
      name: 'checkout',
      namespace,
      fieldManager: 'kubectl-client-side-apply',
      body: {
        metadata: { annotations: { 'kubernetes.io/change-cause': cause } },
        spec: {
          template: { metadata: { labels: { sim } }, spec: { containers: [{ name: 'app', ...container }] } },
        },
      },
    },
    merge,
  );
}

/** Makes the running pods crash without any change to the Deployment (KWOK's failure stage picks the label up). */
async function crashPods(namespace: string) {
  const pods = await core.listNamespacedPod({ namespace, labelSelector: 'app=checkout' });
  for (const p of pods.items)
    await core.patchNamespacedPod(
      { name: p.metadata!.name!, namespace, body: { metadata: { labels: { sim: 'crashloop' } } } },
      mergePatch,
    );
}

async function get(pathAndQuery: string): Promise<Json> {
  const res = await stack.call('GET', `/api/v1${pathAndQuery}`);
  expect(res.status).toBe(200);
  return res.body;
}

/** The insight of the (first) incident on a resource, once its analysis stored it. */
async function insightOf(namespace: string, resource: string): Promise<Json> {
  const incident = await stack.eventually(
    async () => (await get(`/incidents?namespace=${namespace}&resource=${encodeURIComponent(resource)}`)).items.at(-1),
    (i: Json) => !!i,
    180_000,
  );
  return stack.eventually(
    async () => (await get(`/aiinsights?incident=${incident.name}`)).items[0],
    (i: Json) => !!i,
    120_000,
  );
}

const revisionHealth = async (namespace: string, revision: number) =>
  (await get(`/changes?namespace=${namespace}&resource=Deployment/checkout`)).items.find(
    (c: Json) => c.revision === revision,
  )?.revisionHealth?.state;

/** Every recommendation says what it rests on. */
function expectCited(insight: Json) {
  expect(insight.recommendations.length).toBeGreaterThan(0);
  for (const r of insight.recommendations)
    expect(r).toMatch(/\(evidence E\d+(, E\d+)*\)|rests on the \w+ (signal alone|category)|^Inconclusive/);
}

beforeAll(async () => {
  kube = await useKube();
  await kube.addNode('node-a');
  await kube.addNode('node-b');
  apps = kube.kc.makeApiClient(AppsV1Api);
  core = kube.kc.makeApiClient(CoreV1Api);
  dir = mkdtempSync(path.join(tmpdir(), 'foghorn-evidence-'));
  writeFileSync(path.join(dir, 'kubeconfig'), kube.kubeconfig, { mode: 0o600 });
  process.env.KUBECONFIG = path.join(dir, 'kubeconfig');
  stack = await useStack({
    realTime: true,
    env: { FOGHORN_WATCH_NOT_READY_AFTER: '30s', FOGHORN_REVISION_STABLE_AFTER: '2s' },
  });
  watch = await stack.client.workflow.start(clusterWatchWorkflow, {
    taskQueue: stack.wf.taskQueue,
    workflowId: clusterWatchWorkflowId('local'),
    args: [{ cluster: 'local' }],
  });
  for (const ns of NAMESPACES) await deploy(ns);
  // Revision 1 of each proven healthy before anything goes wrong.
  for (const ns of NAMESPACES)
    await waitFor(`${ns} revision 1 healthy`, async () => (await revisionHealth(ns, 1)) === 'Healthy', 120_000);
});

afterAll(async () => {
  if (kube) {
    const all = logged.join('');
    expect(all).not.toContain(kube.token);
    expect(all).not.toContain(SECRET_VALUE);
  }
  await watch?.cancel().catch(() => undefined);
  await stack?.stop();
  await kube?.stop();
  if (savedKubeconfig === undefined) delete process.env.KUBECONFIG;
  else process.env.KUBECONFIG = savedKubeconfig;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it('names the change behind each failure, cites evidence, and says when there is none', async () => {
  // Logs of the pods that will crash without a change (they exist before they crash).
  for (const ns of ['bad-config', 'no-change'])
    await kube.setContainerLogs({
      namespace: ns,
      labelSelector: 'app=checkout',
      container: 'app',
      current: ['checkout listening on :8080', 'FATAL: cannot parse /etc/checkout/checkout.yaml: invalid URL'],
      previous: ['checkout listening on :8080', 'FATAL: cannot parse /etc/checkout/checkout.yaml: invalid URL'],
    });

  await rollout('bad-image', { image: 'checkout:2' }, 'crashloop', 'deploy checkout 2');
  await core.patchNamespacedConfigMap(
    { name: 'checkout-config', namespace: 'bad-config', body: { data: { 'checkout.yaml': 'payments: ::bad' } } },
    mergePatch,
  );
  await rollout('oom', { resources: { limits: { memory: '64Mi' } } }, 'oomkilled', 'trim memory');
  await rollout('typo', { image: 'chekout:1' }, 'imagepull', 'retag');
  await crashPods('no-change');
  // The config is read at start: its pods crash after it changed.
  await new Promise((r) => setTimeout(r, 2_000));
  await crashPods('bad-config');

  const badImage = await insightOf('bad-image', 'Deployment/checkout');
  expect(badImage.gitOpsContext).toMatch(
    /^Suspected change .*revision 2 of bad-image\/Deployment\/checkout replaced 1: image app checkout:1 → checkout:2 — reached the cluster .* before the first failure/,
  );
  expect(badImage.gitOpsContext).toContain('"deploy checkout 2"');
  expect(badImage.evidence.suspect).toMatchObject({ type: 'Rollout', revision: 2, previousRevision: 1 });
  expect(badImage.recommendations[0]).toMatch(/^Roll Deployment\/checkout back to revision 1 \(app=checkout:1\)/);
  expectCited(badImage);

  const badConfig = await insightOf('bad-config', 'Deployment/checkout');
  expect(badConfig.evidence.suspect).toMatchObject({ type: 'Config', resource: 'ConfigMap/checkout-config' });
  expect(badConfig.gitOpsContext).toContain('bad-config/ConfigMap/checkout-config changed');
  expect(badConfig.logAnalysis).toContain('FATAL: cannot parse /etc/checkout/checkout.yaml: invalid URL');
  expect(badConfig.recommendations[0]).toMatch(/^Revert ConfigMap\/checkout-config/);
  expectCited(badConfig);

  const oom = await insightOf('oom', 'Deployment/checkout');
  expect(oom.evidence.suspect).toMatchObject({ type: 'Rollout', revision: 2 });
  expect(oom.gitOpsContext).toContain('limits.memory app 512Mi → 64Mi');
  expect(oom.logAnalysis).toContain('OOMKilled (exit code 137)');
  expectCited(oom);

  const typo = await insightOf('typo', 'Deployment/checkout');
  expect(typo.evidence.suspect).toMatchObject({ type: 'Rollout', revision: 2 });
  expect(typo.gitOpsContext).toContain('image app checkout:1 → chekout:1');
  expect(typo.gitOpsContext).toContain('the new image does not pull');
  expectCited(typo);

  const noChange = await insightOf('no-change', 'Deployment/checkout');
  expect(noChange.evidence.suspect).toBeUndefined();
  expect(noChange.gitOpsContext).toMatch(/^No change in the 2h0m0s before the first failure explains it/);
  expect(noChange.logAnalysis).toContain('FATAL: cannot parse');
  expectCited(noChange);

  // The postmortem's gitCorrelation agrees with the insight; nothing reads as an unobserved fact.
  const incident = (await get('/incidents?namespace=bad-image&resource=Deployment%2Fcheckout')).items.at(-1);
  const timeline = (await get(`/incidents/${incident.name}/timeline?namespace=bad-image`)).events;
  expect(timeline.find((e: Json) => e.type === 'RunbookMatch')?.message).toMatch(
    /; the evidence points at revision 2 of bad-image\/Deployment\/checkout replaced 1: .* \(E1, \d+%\)$/,
  );
  const resolved = await stack.call('POST', `/api/v1/incidents/${incident.name}/resolve?namespace=bad-image`, {
    body: { resolution: 'rolled back by hand' },
  });
  expect(resolved.status).toBe(200);
  const pmName = await stack.eventually(
    async () => (await get(`/incidents/${incident.name}?namespace=bad-image`)).status.postmortem,
    (n: string | undefined) => !!n,
    60_000,
  );
  const pm = await get(`/postmortems/${pmName}`);
  expect(pm.report.gitCorrelation).toMatchObject({
    change: badImage.evidence.suspect.change,
    confidence: badImage.evidence.suspect.confidence,
    commitMessage: badImage.evidence.suspect.summary,
  });
  expect(pm.report.impact.usersAffected).toBeNull();

  // The change record: the revisions, their diffs and health.
  const changes = await get('/changes?namespace=bad-image&resource=Deployment/checkout');
  expect(changes.items.map((c: Json) => [c.type, c.revision])).toEqual([
    ['Rollout', 2],
    ['Rollout', 1],
  ]);
  expect(changes.items[0]).toMatchObject({
    diff: [{ field: 'image app', from: 'checkout:1', to: 'checkout:2' }],
    by: { manager: 'kubectl-client-side-apply', changeCause: 'deploy checkout 2', foghorn: false },
  });
  await waitFor('revision 2 failed', async () => (await revisionHealth('bad-image', 2)) === 'Failed');
  expect(changes.items[1].revisionHealth.state).toBe('Healthy');

  // Foghorn's own restart is recorded as Foghorn's.
  const run = activityRunner(createKubeActionActivities());
  await run('kubeRestartDeployment', {
    key: 'evidence-test/1',
    cluster: 'local',
    namespace: 'typo',
    deployment: 'checkout',
  });
  const restart = await stack.eventually(
    async () => (await get('/changes?namespace=typo&resource=Deployment/checkout')).items[0],
    (c: Json) => c?.type === 'Restart',
    60_000,
  );
  expect(restart.previousRevision).toBe(restart.revision - 1);
  expect(restart).toMatchObject({
    by: { manager: 'foghorn', foghorn: true },
    diff: [],
  });

  // A Secret's value is nowhere: answers, insights, audit, workflow histories.
  const answers = JSON.stringify([
    await get('/changes?pageSize=100'),
    await get('/aiinsights?pageSize=100'),
    await get('/audit?pageSize=200'),
  ]);
  expect(answers).not.toContain(SECRET_VALUE);
  const history = await stack.client.workflow.getHandle(clusterWatchWorkflowId('local')).fetchHistory();
  expect(JSON.stringify(history)).not.toContain(SECRET_VALUE);
  expect(JSON.stringify(history)).not.toContain(Buffer.from(SECRET_VALUE).toString('base64'));
});

it('a node going NotReady: the insight names the node condition change', async () => {
  await kube.addNode('node-c');
  await core.patchNode(
    { name: 'node-c', body: { metadata: { labels: { 'node-not-ready.stage.kwok.x-k8s.io': 'true' } } } },
    mergePatch,
  );
  const node = await insightOf('default', 'Node/node-c');
  expect(node.evidence.suspect).toMatchObject({ type: 'NodeCondition', resource: 'Node/node-c' });
  expect(node.gitOpsContext).toContain('node node-c Ready True → False');
  expect(node.evidence.nodes[0]).toMatchObject({ name: 'node-c', ready: 'False' });
  expectCited(node);
});
