import {
  ApiextensionsV1Api,
  CoreV1Api,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  type V1CustomResourceDefinition,
} from '@kubernetes/client-node';
import { execFile } from 'child_process';
import { randomBytes } from 'crypto';
import { createWriteStream, existsSync, mkdirSync, readFileSync, writeFileSync, type WriteStream } from 'fs';
import { Agent, request } from 'https';
import { createServer } from 'net';
import path from 'path';
import { promisify } from 'util';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { REPO_ROOT, TOOLS_DIR } from '../paths';
import { spawnProbed, type ServerProcess } from './process';

/**
 * A real Kubernetes control plane on loopback (docs/kubernetes.md): etcd, kube-apiserver,
 * kube-controller-manager, kube-scheduler and KWOK, which plays the kubelet of fake nodes so
 * pods run, become ready, crash-loop, get OOM-killed and lose their node, and whose kubelet
 * server answers the API server's container-log requests from files. Built by
 * tools/kube/build.sh into .tools/kube/bin. Used by the cluster tests and `foghorn dev --kube`.
 */
export interface LocalKubeOptions {
  /** State: certificates, tokens, etcd data, kubeconfigs, component logs. Reused when present. */
  dir: string;
  /** `kwok`: KWOK's kubelet server (container logs); default a free port picked at start. */
  ports: { etcd: number; etcdPeer: number; apiserver: number; kwok?: number };
  /** ReplicaSets, rollouts, pod re-creation, node lifecycle (default on). */
  controllerManager?: boolean;
  /** The scheduler and KWOK's fake kubelets (default on; needs the controller-manager). */
  kwok?: boolean;
  /**
   * Audit log (JSON lines) of the writes to Deployments, their scale and pods, for tests that
   * count what the API server saw; its policy file is written next to it. Default off.
   */
  auditLogPath?: string;
}

export interface LocalKube {
  server: string;
  /** Bearer token of `admin` (group system:masters). */
  token: string;
  /** Bearer token of `restricted`: authenticated, no RBAC rights, so every call answers 403. */
  restrictedToken: string;
  /** PEM of the API server's self-signed serving certificate. */
  caData: string;
  /** A kubeconfig (YAML) for `admin`, and where it is written. */
  kubeconfig: string;
  kubeconfigPath: string;
  /**
   * Where the files served as containers' logs live (KWOK `Logs` objects point into it; see
   * test/harness/kube.ts setContainerLogs). `<podLogsDir>/empty.log` is every other container's log
   * (EMPTY_POD_LOG, NO_PREVIOUS_POD_LOG).
   */
  podLogsDir: string;
  stopApiServer(): Promise<void>;
  startApiServer(): Promise<void>;
  stop(): Promise<void>;
}

export const KUBE_BIN = path.join(TOOLS_DIR, 'kube', 'bin');
const STOCK_STAGES = path.join(TOOLS_DIR, 'kube', 'stages', 'stock');
const OWN_STAGES = path.join(REPO_ROOT, 'tools', 'kube', 'stages');
const LOGS_CRD = path.join(REPO_ROOT, 'tools', 'kube', 'crds', 'kwok-logs.yaml');
/** The address every fake node advertises (InternalIP): the API server dials KWOK's kubelet server there. */
const NODE_IP = '127.0.0.1';
/** The log of every container no `Logs` object names: empty, as a container that printed nothing. */
export const EMPTY_POD_LOG = 'empty.log';
/**
 * A file that never exists, the previous log of containers without one: `previous=true` answers
 * 400 (as a kubelet's "previous terminated container … not found"), with this path in the message.
 */
export const NO_PREVIOUS_POD_LOG = 'no-previous-container';
const COMPONENTS = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kwok'];
/** The annotation that makes a Node one of KWOK's fake nodes. */
export const FAKE_NODE_ANNOTATION = 'kwok.x-k8s.io/node';

export function kubeToolsInstalled(): boolean {
  return COMPONENTS.every((c) => existsSync(path.join(KUBE_BIN, c)));
}

const run = promisify(execFile);

/** Keys, the serving certificate and the static tokens: made once per state dir. */
async function ensureCredentials(dir: string): Promise<{ token: string; restrictedToken: string }> {
  const file = (name: string) => path.join(dir, name);
  if (!existsSync(file('serving.crt'))) {
    await run('openssl', ['genrsa', '-out', file('sa.key'), '2048']);
    await run('openssl', ['rsa', '-in', file('sa.key'), '-pubout', '-out', file('sa.pub')]);
    await run('openssl', [
      'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '3650',
      '-keyout', file('serving.key'), '-out', file('serving.crt'),
      '-subj', '/CN=foghorn-local-kube', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost',
    ]); // prettier-ignore
  }
  if (!existsSync(file('tokens.csv'))) {
    const token = randomBytes(24).toString('hex');
    const restricted = randomBytes(24).toString('hex');
    writeFileSync(
      file('tokens.csv'),
      `${token},admin,admin-uid,system:masters\n${restricted},restricted,restricted-uid\n`,
      { mode: 0o600 },
    );
  }
  const [admin, restricted] = readFileSync(file('tokens.csv'), 'utf8').trim().split('\n');
  return { token: admin.split(',')[0], restrictedToken: restricted.split(',')[0] };
}

/** A kubeconfig for one server and bearer token. */
export function kubeconfigYaml(server: string, caPem: string, token: string, user = 'admin'): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      { name: 'local', cluster: { server, 'certificate-authority-data': Buffer.from(caPem).toString('base64') } },
    ],
    users: [{ name: user, user: { token } }],
    contexts: [{ name: 'local', context: { cluster: 'local', user } }],
    'current-context': 'local',
  });
}

/**
 * KWOK's configuration: the stock node and pod lifecycles, with the stock `pod-ready` told to
 * leave pods labelled `sim`, and pods with the marker memory limit 64Mi, to our failure stages
 * (tools/kube/stages/failures.yaml), and a
 * ClusterLogs giving every container an empty log (per-pod `Logs` objects override it).
 */
function kwokConfigFile(dir: string, podLogsDir: string): string {
  const docs: unknown[] = [];
  const files = [
    ...['node-fast-node-initialize', 'node-heartbeat-node-heartbeat', 'node-chaos-node-not-ready'].map((f) =>
      path.join(STOCK_STAGES, `${f}.yaml`),
    ),
    ...['pod-fast-pod-ready', 'pod-fast-pod-complete', 'pod-fast-pod-delete'].map((f) =>
      path.join(STOCK_STAGES, `${f}.yaml`),
    ),
    path.join(OWN_STAGES, 'failures.yaml'),
  ];
  for (const file of files)
    for (const doc of parseAllDocuments(readFileSync(file, 'utf8'))) {
      const stage = doc.toJS() as { metadata: { name: string }; spec: { selector: { matchExpressions: unknown[] } } };
      if (!stage) continue;
      if (stage.metadata.name === 'pod-ready')
        stage.spec.selector.matchExpressions.push(
          { key: '.metadata.labels.sim', operator: 'DoesNotExist' },
          // the marker memory limit of foghorn-pod-oom-limit: those pods are OOM-killed instead
          { key: '.spec.containers.[].resources.limits.memory', operator: 'NotIn', values: ['64Mi'] },
        );
      docs.push(stage);
    }
  docs.push({
    apiVersion: 'kwok.x-k8s.io/v1alpha1',
    kind: 'ClusterLogs',
    metadata: { name: 'foghorn-empty-logs' },
    spec: {
      logs: [
        {
          logsFile: path.join(podLogsDir, EMPTY_POD_LOG),
          previousLogsFile: path.join(podLogsDir, NO_PREVIOUS_POD_LOG),
        },
      ],
    },
  });
  const out = path.join(dir, 'kwok.yaml');
  writeFileSync(out, docs.map((d) => stringify(d)).join('---\n'));
  return out;
}

/**
 * Metadata (who, what, the URI: no bodies, so no secrets) of create/update/patch/delete on
 * Deployments, their scale and pods, once the response is complete. Status writes are
 * subresources (`pods/status`) and so not logged.
 */
const AUDIT_POLICY = {
  apiVersion: 'audit.k8s.io/v1',
  kind: 'Policy',
  omitStages: ['RequestReceived'],
  rules: [
    {
      level: 'Metadata',
      verbs: ['create', 'update', 'patch', 'delete'],
      resources: [
        { group: 'apps', resources: ['deployments', 'deployments/scale'] },
        { group: '', resources: ['pods'] },
      ],
    },
    { level: 'None' },
  ],
};

/** The API server's audit flags; the policy is written next to the log. */
function auditArgs(logPath: string | undefined): string[] {
  if (!logPath) return [];
  const log = path.resolve(logPath);
  mkdirSync(path.dirname(log), { recursive: true });
  const policy = path.join(path.dirname(log), 'audit-policy.yaml');
  writeFileSync(policy, stringify(AUDIT_POLICY));
  return [
    `--audit-policy-file=${policy}`,
    `--audit-log-path=${log}`,
    '--audit-log-format=json',
    '--audit-log-mode=blocking',
  ];
}

function httpsOk(url: string, caPem: string, token: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(
      url,
      { agent: new Agent({ ca: caPem }), headers: { Authorization: `Bearer ${token}` } },
      (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      },
    );
    req.setTimeout(3_000, () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}

/** A port free on loopback a moment ago (the kernel's pick). */
function ephemeralPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Creates KWOK's Logs resource (kept when present) and waits until the API server serves it. */
async function ensureLogsCrd(kc: KubeConfig): Promise<void> {
  const api = kc.makeApiClient(ApiextensionsV1Api);
  const crd = parse(readFileSync(LOGS_CRD, 'utf8')) as V1CustomResourceDefinition;
  await api.createCustomResourceDefinition({ body: crd }).catch((err: { code?: number }) => {
    if (err.code !== 409) throw err;
  });
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { status } = await api.readCustomResourceDefinition({ name: crd.metadata!.name! });
    if (status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) return;
    if (Date.now() > deadline) throw new Error(`CRD ${crd.metadata!.name} not established within 30 s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * Points KWOK's nodes made by an earlier run (a reused state dir) at this run's kubelet server;
 * new nodes get it from KWOK's node-initialize stage (--node-ip, --node-port).
 */
async function repointNodes(kc: KubeConfig, kwokPort: number): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  for (const node of (await core.listNode()).items) {
    const name = node.metadata!.name!;
    if (node.metadata?.annotations?.[FAKE_NODE_ANNOTATION] !== 'fake') continue;
    const ip = node.status?.addresses?.find((a) => a.type === 'InternalIP')?.address;
    if (ip === NODE_IP && node.status?.daemonEndpoints?.kubeletEndpoint?.Port === kwokPort) continue;
    await core.patchNodeStatus(
      {
        name,
        body: {
          status: {
            addresses: [{ type: 'InternalIP', address: NODE_IP }],
            daemonEndpoints: { kubeletEndpoint: { Port: kwokPort } },
          },
        },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  }
}

async function httpOk(url: string): Promise<boolean> {
  const res = await fetch(url, { signal: AbortSignal.timeout(3_000) });
  return res.ok;
}

export async function startLocalKube(opts: LocalKubeOptions): Promise<LocalKube> {
  if (!kubeToolsInstalled())
    throw new Error('the Kubernetes control plane is not built: run `npm run kube:build` (about 20 minutes once)');
  const dir = path.resolve(opts.dir);
  mkdirSync(path.join(dir, 'logs'), { recursive: true });
  const { token, restrictedToken } = await ensureCredentials(dir);
  const file = (name: string) => path.join(dir, name);
  const podLogsDir = file('pod-logs');
  mkdirSync(podLogsDir, { recursive: true });
  writeFileSync(path.join(podLogsDir, EMPTY_POD_LOG), '');
  const caData = readFileSync(file('serving.crt'), 'utf8');
  const server = `https://127.0.0.1:${opts.ports.apiserver}`;
  const kubeconfig = kubeconfigYaml(server, caData, token);
  writeFileSync(file('kubeconfig'), kubeconfig, { mode: 0o600 });
  const bin = (name: string) => path.join(KUBE_BIN, name);
  const logs = new Map<string, WriteStream>();
  const logTo = (name: string) => {
    if (!logs.has(name)) logs.set(name, createWriteStream(path.join(dir, 'logs', `${name}.log`), { flags: 'a' }));
    const stream = logs.get(name)!;
    return (line: string) => void (stream.writableEnded || stream.write(`${line}\n`)); // lines may trail a stop
  };
  const closeLogs = () => Promise.all([...logs.values()].map((s) => new Promise((r) => s.end(r))));
  // etcd first, then every component as soon as it runs: a failure of the next one still stops it.
  const started: ServerProcess[] = [];

  const audit = auditArgs(opts.auditLogPath);
  const etcdUrl = `http://127.0.0.1:${opts.ports.etcd}`;
  const peerUrl = `http://127.0.0.1:${opts.ports.etcdPeer}`;
  const startApiServer = () =>
    spawnProbed(
      'kube-apiserver',
      bin('kube-apiserver'),
      [
        `--etcd-servers=${etcdUrl}`,
        '--bind-address=127.0.0.1',
        `--secure-port=${opts.ports.apiserver}`,
        `--cert-dir=${dir}`,
        `--tls-cert-file=${file('serving.crt')}`,
        `--tls-private-key-file=${file('serving.key')}`,
        '--service-account-issuer=https://kubernetes.default.svc',
        `--service-account-key-file=${file('sa.pub')}`,
        `--service-account-signing-key-file=${file('sa.key')}`,
        `--token-auth-file=${file('tokens.csv')}`,
        '--authorization-mode=RBAC',
        '--service-cluster-ip-range=10.0.0.0/24',
        // A loopback address cannot be the `kubernetes` Service's endpoint; nothing here needs it.
        '--endpoint-reconciler-type=none',
        // Container logs: the API server dials the node's InternalIP (KWOK's kubelet server, which
        // serves with the same certificate, so the API server can verify it).
        '--kubelet-preferred-address-types=InternalIP',
        `--kubelet-certificate-authority=${file('serving.crt')}`,
        '--profiling=false',
        ...audit,
      ],
      () => httpsOk(`${server}/readyz`, caData, token),
      { timeoutMs: 120_000, onLine: logTo('kube-apiserver') },
    );

  let apiserver: ServerProcess | undefined;
  try {
    started.push(
      await spawnProbed(
        'etcd',
        bin('etcd'),
        [
          '--name=default',
          `--data-dir=${file('etcd')}`,
          `--listen-client-urls=${etcdUrl}`,
          `--advertise-client-urls=${etcdUrl}`,
          `--listen-peer-urls=${peerUrl}`,
          `--initial-advertise-peer-urls=${peerUrl}`,
          `--initial-cluster=default=${peerUrl}`,
          '--quota-backend-bytes=4294967296',
        ],
        () => httpOk(`${etcdUrl}/health`),
        { timeoutMs: 60_000, onLine: logTo('etcd') },
      ),
    );
    apiserver = await startApiServer();
    const componentKubeconfig = file('kubeconfig');
    const alive = () => Promise.resolve(true);
    if (opts.controllerManager !== false) {
      const withKwok = opts.kwok !== false;
      started.push(
        await spawnProbed(
          'kube-controller-manager',
          bin('kube-controller-manager'),
          [
            `--kubeconfig=${componentKubeconfig}`,
            `--service-account-private-key-file=${file('sa.key')}`,
            `--root-ca-file=${file('serving.crt')}`,
            '--leader-elect=false',
            '--secure-port=0',
            '--use-service-account-credentials=false',
            // The node-lifecycle controller stays on with KWOK: it lifts new nodes' not-ready taint.
            `--controllers=*,-nodeipam,-cloud-node-lifecycle,-route,-service${withKwok ? '' : ',-nodelifecycle'}`,
          ],
          alive,
          { onLine: logTo('kube-controller-manager') },
        ),
      );
      if (withKwok) {
        const kc = new KubeConfig();
        kc.loadFromString(kubeconfig);
        await ensureLogsCrd(kc);
        const kwokPort = opts.ports.kwok ?? (await ephemeralPort());
        started.push(
          await spawnProbed(
            'kube-scheduler',
            bin('kube-scheduler'),
            [`--kubeconfig=${componentKubeconfig}`, '--leader-elect=false', '--secure-port=0'],
            alive,
            { onLine: logTo('kube-scheduler') },
          ),
        );
        started.push(
          await spawnProbed(
            'kwok',
            bin('kwok'),
            [
              `--kubeconfig=${componentKubeconfig}`,
              `--config=${kwokConfigFile(dir, podLogsDir)}`,
              '--manage-all-nodes=false',
              `--manage-nodes-with-annotation-selector=${FAKE_NODE_ANNOTATION}=fake`,
              '--node-lease-duration-seconds=40',
              '--cidr=10.244.0.0/16',
              `--node-ip=${NODE_IP}`,
              // The kubelet server: container logs from files (Logs objects), over TLS.
              `--node-port=${kwokPort}`,
              `--server-address=${NODE_IP}:${kwokPort}`,
              `--tls-cert-file=${file('serving.crt')}`,
              `--tls-private-key-file=${file('serving.key')}`,
              '--enable-crds=Logs',
            ],
            () => httpsOk(`https://${NODE_IP}:${kwokPort}/healthz`, caData, token),
            { timeoutMs: 60_000, onLine: logTo('kwok') },
          ),
        );
        await repointNodes(kc, kwokPort);
      }
    }
    return {
      server,
      token,
      restrictedToken,
      caData,
      kubeconfig,
      kubeconfigPath: componentKubeconfig,
      podLogsDir,
      stopApiServer: async () => {
        await apiserver?.stop();
      },
      startApiServer: async () => {
        apiserver = await startApiServer();
      },
      stop: async () => {
        const [etcd, ...components] = started;
        await Promise.all(components.map((p) => p.stop()));
        await apiserver?.stop();
        await etcd.stop();
        started.length = 0;
        await closeLogs();
      },
    };
  } catch (err) {
    const [etcd, ...components] = started;
    await Promise.all(components.map((p) => p.stop()));
    await apiserver?.stop();
    await etcd?.stop();
    await closeLogs();
    throw err;
  }
}
