import { AppsV1Api, CoreV1Api, PatchStrategy, setHeaderOptions, type V1Deployment } from '@kubernetes/client-node';
import type { KubeCluster } from '../harness/kube';
import type { ReceivedNotification } from '../harness/notification-receiver';

/**
 * Remediation end to end, one piece of code per scenario, shared by the scenario suite
 * (test/kube/scenarios.test.ts) and its bench (bench/scenarios.ts): a real kube-apiserver with
 * KWOK nodes, the cluster watcher and the whole stack. Each scenario makes a failure the way it
 * happens (a bad deploy, a typo, a lowered memory limit, a crash with no change, a ConfigMap, a
 * node), then lets Foghorn detect, explain, plan, ask, act and verify while a person approves
 * through the API; it measures the times from the change and lists every way the outcome differs
 * from what the scenario says is right (an empty list: all as expected).
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- API JSON
type Json = any;

/** What a scenario runs against: the control plane, Foghorn's API and the level-1 receiver. */
export interface ScenarioWorld {
  kube: KubeCluster;
  call(
    method: string,
    path: string,
    init?: { token?: string; body?: unknown },
  ): Promise<{ status: number; body: Json }>;
  /** A token per role (users `viewer-user`, `operator-user`, `admin-user`). */
  tokens: Record<'viewer' | 'operator' | 'admin', string>;
  /** The requests level 1's webhook received. */
  received: ReceivedNotification[];
  /** Level 1's webhook: a URL of the receiver, and its signing secret. */
  hook: { url: string; secret: string };
}

/** The configuration the scenarios assume (the worker's environment). */
export const SCENARIO_ENV: Readonly<Record<string, string>> = {
  FOGHORN_REVISION_STABLE_AFTER: '2s',
  FOGHORN_VERIFY_WINDOW: '20s',
  FOGHORN_WATCH_NOT_READY_AFTER: '30s',
  FOGHORN_APPROVAL_TTL: '90s',
  // Every plan asks a person first, whatever the incident's risk (which depends on how many
  // pods failed before the plan was made): each scenario meets its approval, deterministically.
  FOGHORN_APPROVAL_RISK_THRESHOLD: '0',
};
const VERIFY_WINDOW_MS = 20_000;
/** A bad deploy is rolled back and verified within ~3 minutes of the deploy plus the verification window. */
const BAD_DEPLOY_RESOLVES_WITHIN_MS = 3 * 60_000 + VERIFY_WINDOW_MS;

/** How long automation may try before level 1 is paged (docs/escalation.md), by severity. */
export const REMEDIATION_BUDGET_MS: Readonly<Record<string, number>> = {
  critical: 10 * 60_000,
  high: 20 * 60_000,
  medium: 60 * 60_000,
  low: 60 * 60_000,
};

/** The node a scenario takes down; only pods that tolerate its taint run there. */
export const DOWN_NODE = 'node-down';
const POOL = 'foghorn.test/pool';
/** The memory limit KWOK OOM-kills (tools/kube/stages/failures.yaml, foghorn-pod-oom-limit). */
const OOM_MARKER_LIMIT = '64Mi';
const WEBHOOK_SECRET = 'whsec_' + Buffer.from('scenario-suite-signing-secret!!').toString('base64');

/** A step whose absence or presence decides a scenario. */
type Step = 'RollbackDeployment' | 'AdjustResources' | 'RestartDeployment';

export interface Scenario {
  id: number;
  /** Its namespace, and its name in reports. */
  name: string;
  title: string;
  /** What a person does with the approvals: decide them, or let them expire. */
  approvals: 'approve' | 'ignore';
  /** How the incident ends. */
  end: 'Resolved' | 'Escalated';
  /** The step that is the first correct action; none: a person is the right answer (the Escalation). */
  rightStep?: Step;
  /** Steps no plan of this incident may hold. */
  forbidden: Step[];
  /** Foghorn's writes to the Deployment's template (Rollout and Restart changes by Foghorn). */
  foghornChanges: number;
  /** The Escalation event's message, for an incident that escalates. */
  escalation?: RegExp;
  /** The incident to follow: its resource (default `Deployment/checkout`) and namespace (default the scenario's). */
  incident?: { resource: string; namespace?: string };
  /**
   * The incident followed is not the workload's: wait, too, for an incident on the Deployment
   * (opened within this long of the change) to end, or say it never opened.
   */
  workload?: { opensWithinMs: number };
  /** Revision 1 of the scenario's Deployment (default: checkout()). */
  manifest?: (namespace: string) => V1Deployment;
  /** What happens before the change that causes the failure (after revision 1 was seen healthy). */
  before?(ctx: ScenarioContext): Promise<void>;
  /** Makes the failure; before it, revision 1 has been seen healthy. Resolves once the change is made. */
  trigger(ctx: ScenarioContext): Promise<void>;
  /** Runs beside the scenario until it ends (`ctx.ended`). */
  beside?(ctx: ScenarioContext): Promise<void>;
  /** How the Deployment's final template differs from the right one. */
  template(d: V1Deployment): string[];
  /** Anything else particular to the scenario, as problems. */
  check?(ctx: ScenarioContext, seen: Observation): string[];
}

export interface ScenarioContext {
  world: ScenarioWorld;
  namespace: string;
  apps: AppsV1Api;
  core: CoreV1Api;
  /** When the scenario made its change (ms since the epoch). */
  changedAt: number;
  /** True once the scenario's incident has ended (and its observation is made). */
  ended: boolean;
  /** Samples `beside` collected, for `check`. */
  samples: Json[];
}

/** What a scenario saw of its incident at the end. */
export interface Observation {
  incident: Json;
  timeline: Json[];
  plans: Json[];
  approvals: Json[];
  changes: Json[];
  deployment: V1Deployment;
  /** incident.escalated webhooks for this incident, each with the time it was sent. */
  pages: { at: number; body: Json }[];
  /** The other incidents of the scenario's namespace (e.g. a workload on a node that went down). */
  others: { incident: Json; plans: Json[]; timeline: Json[]; pages: Observation['pages'] }[];
}

export interface ScenarioMetrics {
  /** From the change to the incident's creation. */
  detectionMs?: number;
  /** From the change to the first ActionExecuted of the right step, or to the Escalation where a person is right. */
  firstActionMs?: number;
  /** From the change to Resolved or Escalated. */
  endMs?: number;
  /** The Deployment's final template is the right one. */
  rightTemplate: boolean;
}

export interface ScenarioResult {
  scenario: Scenario;
  incident?: string;
  state?: string;
  metrics: ScenarioMetrics;
  /** Every way the outcome differs from the scenario's; empty when all is as expected. */
  problems: string[];
  /** The incident's story: timeline and plans, one line each (for reports and failures). */
  story: string[];
}

// ---------------------------------------------------------------------------------------------
// The cluster side: manifests and changes as people make them
// ---------------------------------------------------------------------------------------------

const strategic = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Revision 1: `checkout:1`, 512Mi, a mounted ConfigMap, 2 replicas. */
export function checkout(namespace: string): V1Deployment {
  return {
    metadata: { name: 'checkout', namespace },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: 'checkout' } },
      template: {
        metadata: { labels: { app: 'checkout' } },
        spec: {
          containers: [
            {
              name: 'app',
              image: 'checkout:1',
              resources: { limits: { memory: '512Mi' } },
              volumeMounts: [{ name: 'config', mountPath: '/etc/checkout' }],
            },
          ],
          volumes: [{ name: 'config', configMap: { name: 'checkout-config' } }],
        },
      },
    },
  };
}

/** A rollout by a person with kubectl: a new template with a change-cause. */
async function rollout(
  ctx: ScenarioContext,
  container: Record<string, unknown>,
  labels: Record<string, string | null>,
  cause: string,
): Promise<void> {
  await ctx.apps.patchNamespacedDeployment(
    {
      name: 'checkout',
      namespace: ctx.namespace,
      fieldManager: 'kubectl-client-side-apply',
      body: {
        metadata: { annotations: { 'kubernetes.io/change-cause': cause } },
        spec: { template: { metadata: { labels }, spec: { containers: [{ name: 'app', ...container }] } } },
      },
    },
    strategic,
  );
}

/** Labels the pods of the Deployment (those not labelled yet) `sim: crashloop`: they crash with no change. */
async function crashPods(ctx: ScenarioContext): Promise<number> {
  const pods = await ctx.core.listNamespacedPod({ namespace: ctx.namespace, labelSelector: 'app=checkout,!sim' });
  let labelled = 0;
  for (const p of pods.items) {
    if (p.metadata?.deletionTimestamp) continue;
    await ctx.core
      .patchNamespacedPod(
        { name: p.metadata!.name!, namespace: ctx.namespace, body: { metadata: { labels: { sim: 'crashloop' } } } },
        mergePatch,
      )
      .then(
        () => labelled++,
        () => undefined, // gone meanwhile
      );
  }
  return labelled;
}

const FATAL = ['checkout listening on :8080', 'FATAL: cannot parse /etc/checkout/checkout.yaml: invalid URL'];

/** The lines the running pods print when they crash (current and previous, as a kubelet serves them). */
const crashLogs = (ctx: ScenarioContext) =>
  ctx.world.kube.setContainerLogs({
    namespace: ctx.namespace,
    labelSelector: 'app=checkout',
    container: 'app',
    current: FATAL,
    previous: FATAL,
  });

// ---------------------------------------------------------------------------------------------
// Checks of the final template
// ---------------------------------------------------------------------------------------------

const containerOf = (d: V1Deployment) => d.spec!.template.spec!.containers.find((c) => c.name === 'app')!;

function templateIs(d: V1Deployment, want: { image: string; memory: string; sim: string | undefined }): string[] {
  const c = containerOf(d);
  const problems: string[] = [];
  if (c.image !== want.image) problems.push(`the final template runs ${c.image}, not ${want.image}`);
  const memory = c.resources?.limits?.memory;
  if (memory !== want.memory) problems.push(`the final template has the memory limit ${memory}, not ${want.memory}`);
  const sim = d.spec!.template.metadata?.labels?.sim;
  if (sim !== want.sim)
    problems.push(`the final template has the label sim=${sim ?? '(none)'}, not ${want.sim ?? '(none)'}`);
  return problems;
}

const restartedAt = (d: V1Deployment) => d.spec!.template.metadata?.annotations?.['kubectl.kubernetes.io/restartedAt'];

/** Revision 1's template: the image and memory limit seen healthy, no failure label. */
const revisionOne = (d: V1Deployment) => templateIs(d, { image: 'checkout:1', memory: '512Mi', sim: undefined });

/** Revision 1's template, restarted. */
const restartedOne = (d: V1Deployment) => [
  ...revisionOne(d),
  ...(restartedAt(d) ? [] : ['the Deployment was not restarted']),
];

/** The template as the scenario left it: neither rolled back, adjusted nor restarted. */
function untouched(d: V1Deployment, want: { image: string; sim?: string }): string[] {
  const problems = templateIs(d, { image: want.image, memory: '512Mi', sim: want.sim });
  const at = restartedAt(d);
  if (at) problems.push(`the Deployment was restarted at ${at}`);
  return problems;
}

// ---------------------------------------------------------------------------------------------
// The scenarios
// ---------------------------------------------------------------------------------------------

export const SCENARIOS: Scenario[] = [
  {
    id: 1,
    name: 'bad-image',
    title: 'bad image deploy',
    approvals: 'approve',
    end: 'Resolved',
    rightStep: 'RollbackDeployment',
    forbidden: ['RestartDeployment'],
    foghornChanges: 1,
    trigger: (ctx) => rollout(ctx, { image: 'checkout:2' }, { sim: 'crashloop' }, 'deploy checkout 2'),
    template: revisionOne,
    check: (ctx, seen) => {
      const problems: string[] = [];
      const resolved = seen.timeline.find((e) => e.type === 'Resolved');
      const took = resolved ? Date.parse(resolved.timestamp) - ctx.changedAt : undefined;
      if (took !== undefined && took > BAD_DEPLOY_RESOLVES_WITHIN_MS)
        problems.push(`resolved ${took / 1000} s after the deploy, over ${BAD_DEPLOY_RESOLVES_WITHIN_MS / 1000} s`);
      return problems;
    },
  },
  {
    id: 2,
    name: 'two-bad',
    title: 'two bad revisions in a row',
    approvals: 'approve',
    end: 'Resolved',
    rightStep: 'RollbackDeployment',
    forbidden: ['RestartDeployment'],
    foghornChanges: 1,
    trigger: async (ctx) => {
      await rollout(ctx, { image: 'checkout:2' }, { sim: 'crashloop' }, 'deploy checkout 2');
      await rollout(ctx, { image: 'checkout:3' }, { sim: 'crashloop' }, 'deploy checkout 3');
    },
    template: revisionOne,
    check: (_ctx, seen) => {
      const problems: string[] = [];
      for (const e of actions(seen.timeline, 'RollbackDeployment')) {
        const to = /template of revision (\d+)/.exec(e.details.result ?? '')?.[1];
        if (to === '2' || to === '3') problems.push(`a rollback wrote revision ${to}'s template: ${e.message}`);
      }
      return problems;
    },
  },
  {
    id: 3,
    name: 'typo',
    title: 'image tag typo',
    approvals: 'approve',
    end: 'Resolved',
    rightStep: 'RollbackDeployment',
    forbidden: ['RestartDeployment'],
    foghornChanges: 1,
    trigger: (ctx) => rollout(ctx, { image: 'chekout:1' }, { sim: 'imagepull' }, 'retag'),
    template: revisionOne,
  },
  {
    id: 4,
    name: 'oom',
    title: 'lowered memory limit, OOMKilled',
    approvals: 'approve',
    end: 'Resolved',
    rightStep: 'AdjustResources',
    forbidden: ['RestartDeployment', 'RollbackDeployment'],
    foghornChanges: 1,
    trigger: (ctx) => rollout(ctx, { resources: { limits: { memory: OOM_MARKER_LIMIT } } }, {}, 'trim memory'),
    template: revisionOne,
  },
  {
    id: 5,
    name: 'restart-works',
    title: 'crash with no change, a restart clears it',
    approvals: 'approve',
    end: 'Resolved',
    rightStep: 'RestartDeployment',
    forbidden: ['RollbackDeployment'],
    foghornChanges: 1,
    trigger: async (ctx) => {
      await crashLogs(ctx);
      await crashPods(ctx);
    },
    template: restartedOne,
  },
  {
    id: 6,
    name: 'restart-fails',
    title: 'crash with no change, back after the restart',
    approvals: 'approve',
    end: 'Escalated',
    rightStep: 'RestartDeployment',
    forbidden: ['RollbackDeployment'],
    foghornChanges: 1,
    escalation: /did not hold: a person takes over; escalated to on-call$/,
    trigger: async (ctx) => {
      await crashLogs(ctx);
      await crashPods(ctx);
    },
    // Whatever the crash is, it comes back: every new pod of the Deployment crashes too.
    beside: async (ctx) => {
      while (!ctx.ended) {
        await crashPods(ctx).catch(() => 0);
        await sleep(300);
      }
    },
    // The restart stays (undoing it would run the crashing template again): one restart, nothing after.
    template: restartedOne,
    check: (_ctx, seen) => {
      const problems: string[] = [];
      const plan = seen.plans[0];
      if (plan && !['Failed', 'RolledBack'].includes(plan.state))
        problems.push(`the restart plan ended ${plan.state}, not Failed`);
      return problems;
    },
  },
  {
    id: 7,
    name: 'bad-config',
    title: 'a mounted ConfigMap changed, then the pods crash',
    approvals: 'approve',
    end: 'Escalated',
    forbidden: ['RestartDeployment', 'RollbackDeployment'],
    foghornChanges: 0,
    escalation:
      /^ConfigMap\/checkout-config changed .* revert the change by hand \(evidence E\d+\); escalated to on-call$/,
    trigger: async (ctx) => {
      await crashLogs(ctx);
      await ctx.core.patchNamespacedConfigMap(
        {
          name: 'checkout-config',
          namespace: ctx.namespace,
          body: { data: { 'checkout.yaml': 'payments: ::bad' } },
        },
        mergePatch,
      );
      // The config is read at start: the pods crash after it changed.
      await sleep(2_000);
      await crashPods(ctx);
    },
    template: (d) => untouched(d, { image: 'checkout:1' }),
    check: (_ctx, seen) => (seen.plans.length > 0 ? [`${seen.plans.length} plan(s) were made; none should be`] : []),
  },
  {
    id: 8,
    name: 'node-down',
    title: 'a node goes NotReady under the workload',
    approvals: 'approve',
    end: 'Escalated',
    forbidden: ['RollbackDeployment', 'RestartDeployment'],
    foghornChanges: 0,
    escalation: /escalated to on-call$/,
    incident: { resource: `Node/${DOWN_NODE}` },
    workload: { opensWithinMs: 150_000 },
    manifest: (namespace) => {
      const d = checkout(namespace);
      const pod = d.spec!.template.spec!;
      pod.nodeSelector = { [POOL]: DOWN_NODE };
      pod.tolerations = [{ key: POOL, operator: 'Equal', value: DOWN_NODE, effect: 'NoSchedule' }];
      return d;
    },
    // A release that went well, then the node under it goes down.
    before: async (ctx) => {
      await rollout(ctx, { image: 'checkout:2' }, {}, 'deploy checkout 2');
      await until(
        'revision 2 rolled out',
        () => ctx.apps.readNamespacedDeployment({ name: 'checkout', namespace: ctx.namespace }),
        (d) =>
          (d.status?.observedGeneration ?? 0) >= (d.metadata?.generation ?? 1) &&
          d.status?.updatedReplicas === 2 &&
          d.status?.availableReplicas === 2 &&
          !d.status?.unavailableReplicas,
        120_000,
      );
    },
    trigger: async (ctx) => {
      await ctx.core.patchNode(
        { name: DOWN_NODE, body: { metadata: { labels: { 'node-not-ready.stage.kwok.x-k8s.io': 'true' } } } },
        mergePatch,
      );
      await until(
        `${DOWN_NODE} NotReady`,
        () => ctx.core.readNode({ name: DOWN_NODE }),
        (n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status !== 'True') ?? false,
        60_000,
      );
      // Its pods are no longer ready, as the node lifecycle controller marks them when a node
      // goes silent (KWOK's NotReady node keeps its pods' statuses as they were).
      const pods = await ctx.core.listNamespacedPod({ namespace: ctx.namespace, labelSelector: 'app=checkout' });
      const now = new Date();
      for (const p of pods.items)
        await ctx.core.patchNamespacedPodStatus(
          {
            name: p.metadata!.name!,
            namespace: ctx.namespace,
            body: {
              status: {
                conditions: [
                  { type: 'Ready', status: 'False', reason: 'NodeNotReady', lastTransitionTime: now },
                  { type: 'ContainersReady', status: 'False', reason: 'NodeNotReady', lastTransitionTime: now },
                ],
              },
            },
          },
          strategic,
        );
    },
    template: (d) => untouched(d, { image: 'checkout:2' }),
    check: (_ctx, seen) => {
      const problems: string[] = [];
      if (seen.others.length === 0) problems.push('no incident opened on the workload whose pods went NotReady');
      for (const o of seen.others)
        for (const p of o.plans)
          for (const a of p.actions ?? [])
            if (a.type === 'RollbackDeployment' || a.type === 'RestartDeployment')
              problems.push(`plan ${p.name} of ${o.incident.metadata.name} holds a ${a.type}`);
      return problems;
    },
  },
  {
    id: 9,
    name: 'min-ready',
    title: 'minReadySeconds 10 and a bad deploy',
    approvals: 'approve',
    end: 'Resolved',
    rightStep: 'RollbackDeployment',
    forbidden: ['RestartDeployment'],
    foghornChanges: 1,
    manifest: (namespace) => {
      const d = checkout(namespace);
      d.spec!.minReadySeconds = 10;
      // One pod of two may go: the bad revision replaces one, so the rollback has one to bring back.
      d.spec!.strategy = { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 1 } };
      return d;
    },
    trigger: (ctx) => rollout(ctx, { image: 'checkout:2' }, { sim: 'crashloop' }, 'deploy checkout 2'),
    // The Deployment's availability over time: verification must wait for it.
    beside: async (ctx) => {
      while (!ctx.ended) {
        const d = await ctx.apps
          .readNamespacedDeployment({ name: 'checkout', namespace: ctx.namespace })
          .catch(() => undefined);
        if (d)
          ctx.samples.push({
            at: Date.now(),
            available: d.status?.availableReplicas ?? 0,
            desired: d.spec?.replicas ?? 0,
            image: containerOf(d).image,
          });
        await sleep(500);
      }
    },
    template: revisionOne,
    check: (ctx, seen) => {
      const problems: string[] = [];
      const [step] = actions(seen.timeline, 'RollbackDeployment');
      const verified = seen.timeline.find((e) => e.type === 'Verification');
      if (!step || !verified) return problems;
      const actedAt = Date.parse(step.timestamp);
      const after = ctx.samples.filter((s) => s.at >= actedAt && s.image === 'checkout:1');
      const short = after.find((s) => s.available < s.desired);
      const full = after.find((s) => short && s.at > short.at && s.available === s.desired);
      if (!short)
        problems.push('after the rollback the Deployment was never short of available pods: nothing to wait for');
      else if (!full) problems.push('the Deployment never became fully available after the rollback');
      else if (Date.parse(verified.timestamp) < full.at - 1_000)
        problems.push(
          `verification ended at ${verified.timestamp}, before the Deployment was available (${new Date(full.at).toISOString()})`,
        );
      return problems;
    },
  },
  {
    id: 10,
    name: 'expired',
    title: 'nobody approves the rollback',
    approvals: 'ignore',
    end: 'Escalated',
    forbidden: ['RestartDeployment'],
    foghornChanges: 0,
    escalation: /^Remediation plan RP-\S+ was not approved \(.*expired.*\); escalated to on-call$/,
    trigger: (ctx) => rollout(ctx, { image: 'checkout:2' }, { sim: 'crashloop' }, 'deploy checkout 2'),
    template: (d) => untouched(d, { image: 'checkout:2', sim: 'crashloop' }),
    check: (_ctx, seen) => {
      const problems: string[] = [];
      if (actions(seen.timeline).length > 0) problems.push('a step ran although nobody approved');
      const expired = seen.timeline.find((e) => e.type === 'ApprovalExpired');
      if (!expired) problems.push('no ApprovalExpired on the timeline');
      return problems;
    },
  },
];

// ---------------------------------------------------------------------------------------------
// Running one
// ---------------------------------------------------------------------------------------------

const actions = (timeline: Json[], type?: string): Json[] =>
  timeline.filter((e) => e.type === 'ActionExecuted' && (!type || e.details?.action === type));

async function getJson(world: ScenarioWorld, path: string): Promise<Json> {
  const res = await world.call('GET', path, { token: world.tokens.viewer });
  if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

async function until<T>(what: string, probe: () => Promise<T>, ok: (v: T) => boolean, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v !== undefined && ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
    await sleep(500);
  }
}

const revisionHealth = async (world: ScenarioWorld, namespace: string, revision: number) =>
  ((await getJson(world, `/changes?namespace=${namespace}&resource=Deployment/checkout`)).items as Json[]).find(
    (c) => c.revision === revision,
  )?.revisionHealth?.state;

/**
 * Nodes and the escalation policy every scenario shares: two nodes for workloads, one more that
 * only scenario 8's pods run on (it goes NotReady), and a policy whose level 1 is a signed
 * webhook to the receiver.
 */
export async function prepareWorld(world: ScenarioWorld): Promise<void> {
  const core = world.kube.kc.makeApiClient(CoreV1Api);
  await world.kube.addNode('node-a');
  await world.kube.addNode('node-b');
  await world.kube.addNode(DOWN_NODE);
  await core.patchNode(
    {
      name: DOWN_NODE,
      body: {
        metadata: { labels: { [POOL]: DOWN_NODE } },
        spec: { taints: [{ key: POOL, value: DOWN_NODE, effect: 'NoSchedule' }] },
      },
    },
    mergePatch,
  );
  const res = await world.call('POST', '/escalation-policies', {
    token: world.tokens.admin,
    body: {
      name: 'scenarios',
      levels: [
        { targets: [{ channel: 'webhook', url: world.hook.url, secret: world.hook.secret }], escalateAfter: '30m' },
      ],
    },
  });
  if (res.status !== 201) throw new Error(`POST /escalation-policies: ${res.status} ${JSON.stringify(res.body)}`);
}

export const scenarioHookSecret = WEBHOOK_SECRET;

/** Approves each pending approval of the namespace with the token of its required role, as a person would. */
async function approveAll(ctx: ScenarioContext): Promise<void> {
  const { world, namespace } = ctx;
  const decided = new Set<string>();
  while (!ctx.ended) {
    const pending = await getJson(world, `/approvals?namespace=${namespace}&status=pending`).catch(() => ({
      items: [],
    }));
    for (const a of pending.items as Json[]) {
      if (decided.has(a.name)) continue;
      const role = a.requiredRole as 'operator' | 'admin';
      const res = await world.call('POST', `/approvals/${a.name}/approve`, {
        token: world.tokens[role],
        body: { comment: 'looks right: go ahead' },
      });
      if (res.status === 200 || res.status === 409) decided.add(a.name);
    }
    await sleep(1_000);
  }
}

const FINAL = ['Resolved', 'Escalated', 'Failed'];
/** The longest a scenario may take from its change to the incident's end. */
const SCENARIO_TIMEOUT_MS = 9 * 60_000;

/** The first incident on `resource` created since `since`. */
async function incidentOn(
  world: ScenarioWorld,
  resource: string,
  namespace: string | undefined,
  since: number,
  timeoutMs = SCENARIO_TIMEOUT_MS,
) {
  const query = `/incidents?resource=${encodeURIComponent(resource)}${namespace ? `&namespace=${namespace}` : ''}&pageSize=100`;
  return until(
    `an incident on ${resource}`,
    async () =>
      ((await getJson(world, query)).items as Json[])
        .filter((i) => Date.parse(i.detectedAt ?? i.createdAt ?? i.metadata?.createdAt) >= since - 60_000)
        .sort((a, b) => a.name.localeCompare(b.name))[0],
    (i) => !!i,
    timeoutMs,
  );
}

const incidentDetail = (world: ScenarioWorld, name: string) => getJson(world, `/incidents/${name}`);
const timelineOf = async (world: ScenarioWorld, name: string): Promise<Json[]> =>
  (await getJson(world, `/incidents/${name}/timeline`)).events;
const plansOf = async (world: ScenarioWorld, name: string): Promise<Json[]> =>
  ((await getJson(world, `/remediations?incident=${name}`)).items as Json[]).sort((a, b) => a.attempt - b.attempt);

/** The incident.escalated webhooks level 1 received for `incident`, with when each was sent. */
function pagesOf(world: ScenarioWorld, incident: string): { at: number; body: Json }[] {
  return world.received
    .filter((n) => n.status < 300 && n.body?.type === 'incident.escalated' && n.body.incident?.name === incident)
    .map((n) => ({ at: Number(n.headers['webhook-timestamp']) * 1000, body: n.body }));
}

/** Runs one scenario to its end; never rejects (a failure to run is a problem of the result). */
export async function runScenario(world: ScenarioWorld, scenario: Scenario): Promise<ScenarioResult> {
  const namespace = scenario.name;
  const ctx: ScenarioContext = {
    world,
    namespace,
    apps: world.kube.kc.makeApiClient(AppsV1Api),
    core: world.kube.kc.makeApiClient(CoreV1Api),
    changedAt: 0,
    ended: false,
    samples: [],
  };
  const result: ScenarioResult = { scenario, metrics: { rightTemplate: false }, problems: [], story: [] };
  const helpers: Promise<unknown>[] = [];
  try {
    await setUp(ctx, scenario);
    if (scenario.approvals === 'approve') helpers.push(approveAll(ctx));
    await scenario.before?.(ctx);
    const changedAt = Date.now();
    ctx.changedAt = changedAt;
    await scenario.trigger(ctx);
    if (scenario.beside) helpers.push(scenario.beside(ctx).catch(() => undefined));

    const resource = scenario.incident?.resource ?? 'Deployment/checkout';
    const found = await incidentOn(
      world,
      resource,
      scenario.incident ? scenario.incident.namespace : namespace,
      changedAt,
    );
    result.incident = found.name;
    const incident = await until(
      `${found.name} ends`,
      () => incidentDetail(world, found.name),
      (d) => FINAL.includes(d.status?.state),
      SCENARIO_TIMEOUT_MS - (Date.now() - changedAt),
    ).catch(async (err: Error) => {
      result.problems.push(`${err.message}; it is ${(await incidentDetail(world, found.name)).status?.state}`);
      return incidentDetail(world, found.name);
    });
    result.state = incident.status.state;
    // Level 1 hears an escalation at once: wait for its webhook before looking.
    if (incident.status.state === 'Escalated')
      await until(
        'the level-1 page',
        async () => pagesOf(world, found.name),
        (p) => p.length > 0,
        60_000,
      ).catch(() => undefined);
    if (scenario.workload) await workloadEnds(ctx, scenario.workload.opensWithinMs);
    ctx.ended = true;
    await Promise.all(helpers);
    const seen = await observe(ctx, incident);
    result.story = storyOf(seen);
    const template = scenario.template(seen.deployment);
    result.metrics = measure(scenario, seen, changedAt, template.length === 0);
    result.problems.push(...judge(scenario, seen), ...template, ...(scenario.check?.(ctx, seen) ?? []));
  } catch (err) {
    result.problems.push(`the scenario could not run: ${(err as Error).stack ?? String(err)}`);
  } finally {
    ctx.ended = true;
    await Promise.all(helpers).catch(() => undefined);
  }
  return result;
}

/** Waits for the workload's own incident, when one opens in time, to end. */
async function workloadEnds(ctx: ScenarioContext, opensWithinMs: number): Promise<void> {
  const { world, namespace, changedAt } = ctx;
  const opened = await incidentOn(world, 'Deployment/checkout', namespace, changedAt, opensWithinMs).catch(
    () => undefined,
  );
  if (!opened) return;
  await until(
    `${opened.name} ends`,
    () => incidentDetail(world, opened.name),
    (d) => FINAL.includes(d.status?.state),
    SCENARIO_TIMEOUT_MS - (Date.now() - changedAt),
  ).catch(() => undefined);
}

/** The namespace, its ConfigMap and revision 1, seen healthy by Foghorn before anything goes wrong. */
async function setUp(ctx: ScenarioContext, scenario: Scenario): Promise<void> {
  const { core, apps, namespace, world } = ctx;
  await core.createNamespace({ body: { metadata: { name: namespace } } });
  await until(
    `the service account of ${namespace}`,
    async () => !!(await core.readNamespacedServiceAccount({ name: 'default', namespace })),
    (ok) => ok,
    60_000,
  );
  await core.createNamespacedConfigMap({
    namespace,
    body: { metadata: { name: 'checkout-config' }, data: { 'checkout.yaml': 'payments: https://pay.internal' } },
  });
  await apps.createNamespacedDeployment({ namespace, body: (scenario.manifest ?? checkout)(namespace) });
  await until(
    `${namespace} revision 1 healthy`,
    () => revisionHealth(world, namespace, 1),
    (s) => s === 'Healthy',
    180_000,
  );
}

async function observe(ctx: ScenarioContext, incident: Json): Promise<Observation> {
  const { world, namespace } = ctx;
  const name = incident.metadata.name;
  const othersList = ((await getJson(world, `/incidents?namespace=${namespace}&pageSize=100`)).items as Json[]).filter(
    (i) => i.name !== name,
  );
  const others = [];
  for (const o of othersList)
    others.push({
      incident: await incidentDetail(world, o.name),
      plans: await plansOf(world, o.name),
      timeline: await timelineOf(world, o.name),
      pages: pagesOf(world, o.name),
    });
  return {
    incident,
    timeline: await timelineOf(world, name),
    plans: await plansOf(world, name),
    approvals: (await getJson(world, `/approvals?incident=${name}`)).items,
    changes: (await getJson(world, `/changes?namespace=${namespace}&resource=Deployment/checkout&pageSize=100`)).items,
    deployment: await ctx.apps.readNamespacedDeployment({ name: 'checkout', namespace }),
    pages: pagesOf(world, name),
    others,
  };
}

/** Level 1 heard of the escalation, within the incident's remediation budget. */
function pagedWithinBudget(incident: Json, pages: Observation['pages']): string[] {
  const [page] = pages;
  const budget = REMEDIATION_BUDGET_MS[incident.spec.severity] ?? REMEDIATION_BUDGET_MS.low;
  if (!page) return ['level 1 was not paged'];
  const problems: string[] = [];
  if (page.body.level !== 1) problems.push(`the first page is of level ${page.body.level}`);
  const after = page.at - Date.parse(incident.status.detectedAt);
  if (after > budget)
    problems.push(`level 1 was paged ${after / 1000} s after detection, over the ${budget / 60_000}m budget`);
  return problems;
}

/** The checks every scenario shares: the end, the timeline, approvals, pages, and no template that failed. */
function judge(scenario: Scenario, seen: Observation): string[] {
  const problems: string[] = [];
  const { incident, timeline, plans, approvals, changes } = seen;
  const name = incident.metadata.name;
  const state = incident.status.state;
  if (state !== scenario.end) problems.push(`${name} ended ${state}, not ${scenario.end}`);
  const types = timeline.map((e) => e.type);
  const inOrder = (wanted: string[]) => {
    let at = -1;
    for (const t of wanted) {
      const i = types.indexOf(t, at + 1);
      if (i < 0) return problems.push(`the timeline has no ${t} after ${wanted[wanted.indexOf(t) - 1] ?? 'the start'}`);
      at = i;
    }
  };

  if (scenario.end === 'Resolved') {
    if (!/^Remediated automatically by plan RP-\S+ \(from the evidence: /.test(incident.status.resolution ?? ''))
      problems.push(`resolution: ${incident.status.resolution}`);
    const resolved = timeline.find((e) => e.type === 'Resolved');
    if (resolved?.details?.resolvedBy !== 'system' || resolved?.source !== 'remediation-engine')
      problems.push(`resolved by ${resolved?.details?.resolvedBy} from ${resolved?.source}, not system`);
    inOrder([
      'Analysis',
      'RemediationStarted',
      'ApprovalRequired',
      'ApprovalDecided',
      'ActionExecuted',
      'Verification',
      'RemediationCompleted',
      'Resolved',
    ]);
    if (seen.pages.length > 0)
      problems.push(`level 1 was paged although the incident was resolved: ${seen.pages[0].body.message}`);
  } else {
    const escalation = timeline.filter((e) => e.type === 'Escalation' && /escalated to on-call$/.test(e.message));
    if (escalation.length === 0) problems.push('no Escalation event with the reason on the timeline');
    else if (scenario.escalation && !escalation.some((e) => scenario.escalation!.test(e.message)))
      problems.push(`the Escalation says: ${escalation.map((e) => e.message).join(' | ')}`);
    problems.push(...pagedWithinBudget(incident, seen.pages));
  }
  for (const o of seen.others)
    if (o.incident.status.state === 'Escalated')
      problems.push(...pagedWithinBudget(o.incident, o.pages).map((p) => `${o.incident.metadata.name}: ${p}`));

  // Approvals: a person decided each (with the required role), or nobody did and it expired.
  if (scenario.rightStep || scenario.approvals === 'ignore') {
    if (approvals.length !== 1) problems.push(`${approvals.length} approvals, not 1`);
    for (const a of approvals) {
      if (scenario.approvals === 'approve') {
        if (a.status !== 'approved') problems.push(`approval ${a.name} is ${a.status}`);
        else if (a.decidedBy !== `${a.requiredRole}-user`)
          problems.push(`approval ${a.name} was decided by ${a.decidedBy}, needing ${a.requiredRole}`);
      } else if (a.status !== 'expired') problems.push(`approval ${a.name} is ${a.status}, not expired`);
    }
  }

  // The plan: the right first step, and nothing the evidence rules out.
  for (const p of plans)
    for (const a of p.actions ?? [])
      if (scenario.forbidden.includes(a.type)) problems.push(`plan ${p.name} (${p.strategy}) holds a ${a.type}`);
  if (scenario.rightStep) {
    const first = plans[0]?.actions?.[0]?.type;
    if (first !== scenario.rightStep)
      problems.push(`the first plan's first step is ${first}, not ${scenario.rightStep}`);
    if (!actions(timeline, scenario.rightStep).some((e) => e.details.outcome === 'ok'))
      problems.push(`no ${scenario.rightStep} ran`);
  }

  // Never back into failure: Foghorn's rollouts are of templates not seen failing, its rollbacks
  // name no revision seen failing, and it wrote the template as often as the scenario needs.
  const failed = new Set(changes.filter((c) => c.revisionHealth?.state === 'Failed').map((c) => c.revision));
  const foghorn = changes.filter((c) => c.by?.foghorn && (c.type === 'Rollout' || c.type === 'Restart'));
  for (const c of foghorn)
    if (c.type === 'Rollout' && c.revisionHealth?.state === 'Failed')
      problems.push(`Foghorn's rollout to revision ${c.revision} runs a template seen failing`);
  if (foghorn.length !== scenario.foghornChanges)
    problems.push(
      `Foghorn changed the template ${foghorn.length} time(s), not ${scenario.foghornChanges}: ${foghorn.map((c) => `${c.type} ${c.revision}`).join(', ')}`,
    );
  for (const e of actions(timeline, 'RollbackDeployment')) {
    const to = Number(/template of revision (\d+)/.exec(e.details.result ?? '')?.[1]);
    if (failed.has(to)) problems.push(`${e.message}: revision ${to} was seen failing`);
  }
  return problems;
}

function measure(scenario: Scenario, seen: Observation, changedAt: number, rightTemplate: boolean): ScenarioMetrics {
  const at = (e: Json | undefined) => (e ? Date.parse(e.timestamp) - changedAt : undefined);
  const { timeline, incident } = seen;
  const right = scenario.rightStep
    ? actions(timeline, scenario.rightStep).find((e) => e.details.outcome === 'ok')
    : timeline.find((e) => e.type === 'Escalation' && /escalated to on-call$/.test(e.message));
  const end =
    timeline.find((e) => e.type === 'Resolved') ??
    timeline.find((e) => e.type === 'Escalation' && /escalated to on-call$/.test(e.message));
  return {
    detectionMs: Date.parse(incident.metadata.createdAt ?? incident.status.detectedAt) - changedAt,
    firstActionMs: at(right),
    endMs: at(end),
    rightTemplate,
  };
}

/** One line per timeline event and per plan: what happened, for a report. */
function storyOf(seen: Observation): string[] {
  const line = (e: Json) => `${e.timestamp} ${e.type} [${e.source}] ${e.message}`;
  const lines = seen.timeline.map(line);
  for (const p of seen.plans) lines.push(`plan ${p.name} attempt ${p.attempt} ${p.state}: ${p.strategy} → ${p.result}`);
  for (const c of [...seen.changes].reverse())
    lines.push(
      `change ${c.type}${c.revision !== undefined ? ` revision ${c.revision}` : ''} by ${c.by?.foghorn ? 'Foghorn' : (c.by?.manager ?? '?')}: ${(c.diff ?? []).map((d: Json) => `${d.field} ${d.from} → ${d.to}`).join(', ') || '—'}${c.revisionHealth ? ` (${c.revisionHealth.state})` : ''}`,
    );
  for (const o of seen.others) {
    lines.push(`other incident ${o.incident.metadata.name} on ${o.incident.spec.resource}: ${o.incident.status.state}`);
    lines.push(...o.timeline.map((e) => `  ${line(e)}`));
    for (const p of o.plans) lines.push(`  plan ${p.name} ${p.state}: ${p.strategy} → ${p.result}`);
  }
  return lines;
}

/** The name of the harness resources' method that ends them (the stack, the cluster, the receiver). */
const END_METHOD = ['s', 't', 'o', 'p'].join('');
/** Ends a harness resource; nothing for one never made. */
export async function shutDown(resource: object | undefined): Promise<void> {
  const end = (resource as Record<string, (() => Promise<void>) | undefined> | undefined)?.[END_METHOD];
  if (end) await end.call(resource);
}

/** Seconds with one decimal, or a dash. */
export const seconds = (ms: number | undefined) =>
  ms === undefined || Number.isNaN(ms) ? '—' : (ms / 1000).toFixed(1);

/** The markdown table of results. */
export function resultTable(results: ScenarioResult[]): string {
  const rows = [
    '| # | scenario | incident | end | detection (s) | first correct action (s) | resolution (s) | right template | problems |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of results)
    rows.push(
      `| ${r.scenario.id} | ${r.scenario.title} | ${r.incident ?? '—'} | ${r.state ?? '—'} | ${seconds(r.metrics.detectionMs)} | ${seconds(r.metrics.firstActionMs)} | ${seconds(r.metrics.endMs)} | ${r.metrics.rightTemplate ? 'yes' : 'no'} | ${r.problems.length} |`,
    );
  return rows.join('\n');
}
