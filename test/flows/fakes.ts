import { Context } from '@temporalio/activity';
import type { WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { DeliveryInput, Endpoint } from '../../activities/notifications';
import type { PreparedTurn } from '../../activities/chat';
import type { AgentMessage, AgentToolCall } from '../../domain/agent-conversation';
import type { ToolCall, ToolCaller, ToolResult } from '../../domain/agent-tools';
import type { ChatTurn, MediaRef } from '../../domain/chat';
import type { Ladder } from '../../domain/escalation-policy';
import type { RemediationOptions } from '../../domain/remediation';
import type { KubeStepInput, PreparedPlan, ResolvedKubeStep } from '../../domain/remediation-plan';
import type { ActivityFns } from '../harness/flow-env';
import type { Actor } from '../../domain/incident-requests';
import type { UserRole } from '../../domain/roles';

/**
 * Fake activities for the workflow tests of test/flows/: each a jest.fn recording its calls,
 * answering as the real activity (activities/*.ts) would for a healthy store and cluster. A test
 * changes the answers it needs (`fakes.drainAndTriage.mockResolvedValueOnce(…)`) and asserts on
 * the calls: the workflow's decisions.
 */

export const MINUTE = 60_000;

/** The Deployment every fake incident is about. */
export const TARGET = { cluster: 'prod', namespace: 'shop', deployment: 'api' };

export const slack: Endpoint = {
  ref: 'policy/p/0/0',
  id: 'slack-1',
  channel: 'slack',
  target: 'hooks.slack.com',
  stateful: false,
};
export const pagerDuty: Endpoint = {
  ref: 'policy/p/0/1',
  id: 'pd-1',
  channel: 'pagerduty',
  target: 'events.pagerduty.com',
  stateful: true,
};

/** Three levels, 5m then 10m apart, the last one again every 30m (twice). */
export const LADDER: Ladder = {
  policy: 'critical',
  escalateAfterMs: [5 * MINUTE, 10 * MINUTE, 0],
  repeat: { everyMs: 30 * MINUTE, times: 2 },
};

/** One runbook (a Kubernetes step) and a registered cluster: one strategy, two attempts allowed. */
export function options(overrides: Partial<RemediationOptions> = {}): RemediationOptions {
  return {
    maxAttempts: 2,
    clusterRegistered: true,
    deployment: true,
    runbooks: [{ name: 'scale-api', tier: 1, maxAttempts: 1, usesKubernetes: true }],
    llm: false,
    ...overrides,
  };
}

/** A plan as preparePlan makes it: one ScaleDeployment step, no approval, verified for 5 minutes. */
export function plan(overrides: Partial<PreparedPlan> = {}): PreparedPlan {
  return {
    name: 'RP-1',
    incident: 'INC-1',
    namespace: TARGET.namespace,
    cluster: TARGET.cluster,
    resource: { kind: 'Deployment', name: TARGET.deployment },
    attempt: 1,
    strategy: 'runbook scale-api (tier 1: category+severity+kind)',
    agentic: false,
    runbook: 'scale-api',
    actions: [{ type: 'ScaleDeployment', params: { replicas: 4 } }],
    recordedExecuting: true,
    riskScore: 40,
    incidentRisk: 30,
    approval: { required: false, reasons: [], requiredRole: 'operator' },
    verifyWindowMs: 5 * MINUTE,
    approvalTtlMs: 30 * MINUTE,
    riskThreshold: 70,
    ...overrides,
  };
}

/** The same plan, waiting for an operator's approval first. */
export const planNeedingApproval = (overrides: Partial<PreparedPlan> = {}): PreparedPlan =>
  plan({
    recordedExecuting: false,
    approval: { required: true, reasons: ['runbook scale-api requires approval'], requiredRole: 'operator' },
    ...overrides,
  });

/** A Kubernetes step resolved as resolveKubeStep records it: replicas 2 → 4 on the incident's Deployment. */
function resolvedStep(input: { plan: string; index: number }): ResolvedKubeStep {
  const step: KubeStepInput = {
    action: 'ScaleDeployment',
    input: { key: `${input.plan}/${input.index}/0`, ...TARGET, replicas: 4 },
  };
  return { inputs: [step], revisionBefore: 3 };
}

const kubeResult = <A extends string>(
  action: A,
  input: { key: string; cluster: string },
  before: object,
  after: object,
) => ({
  key: input.key,
  action,
  cluster: input.cluster,
  target: `deployment ${TARGET.namespace}/${TARGET.deployment}`,
  before,
  after,
  repeated: false,
});

/** Server time (the time-skipping server's clock runs ahead of the machine's): when the activity was scheduled. */
const scheduledAt = () => Context.current().info.currentAttemptScheduledTimestampMs;

let approvals = 0;

/** Every activity a Foghorn workflow calls, with the real activity's answer for the ordinary case. */
function defaults() {
  /** The Deployment's replicas as the fake cluster has them: what a scale finds before it, and an undo restores. */
  let replicas = 2;
  return {
    // Incident (activities/incidents.ts, activities/incident-stages.ts)
    drainAndTriage: async (_: { name: string; firstIndex: number }) => ({ drained: 0, triage: options() as unknown }),
    preparePlan: async (input: { name: string; attempt: number }) =>
      plan({ name: `RP-${input.attempt}`, incident: input.name, attempt: input.attempt }),
    setIncidentState: async (_: unknown) => true,
    acknowledgeIncident: async (_: unknown) => undefined,
    snoozeIncident: async (_: unknown) => undefined,
    resolveIncident: async (_: unknown) => undefined,
    noteSourceResolution: async (_: unknown) => undefined,
    recordCorrelatedSignals: async (_: unknown) => undefined,
    drainSignalInbox: async (_: unknown) => ({ recorded: 0 }),
    closeIncident: async (_: { name: string; firstIndex: number }) => ({ recorded: 0, postmortem: 'PM-1' }),
    generatePostmortem: async (_: unknown) => 'PM-1',
    chooseEscalation: async (_: { incident: string }) => ({ ladder: LADDER, none: false }),
    // Plans (activities/remediation.ts, remediation-verify.ts, kube-*.ts, agentic.ts)
    setPlanState: async (_: unknown) => undefined,
    recordStep: async (_: unknown) => undefined,
    recordVerification: async (_: unknown) => undefined,
    finishPlan: async (_: unknown) => undefined,
    resolveKubeStep: async (input: { plan: string; index: number }) => resolvedStep(input),
    kubeScaleDeployment: async (input: { key: string; cluster: string; replicas: number }) => {
      const before = replicas;
      replicas = input.replicas;
      return kubeResult('ScaleDeployment', input, { replicas: before }, { replicas: input.replicas });
    },
    kubeRestartDeployment: async (input: { key: string; cluster: string }) =>
      kubeResult('RestartDeployment', input, { restartedAt: null }, { restartedAt: '2026-01-01T00:00:00Z' }),
    kubeAdjustResources: async (input: { key: string; cluster: string }) =>
      kubeResult(
        'AdjustResources',
        input,
        { container: 'app', requests: {}, limits: {} },
        { container: 'app', requests: {}, limits: {} },
      ),
    kubeRollbackDeployment: async (input: { key: string; cluster: string; toRevision?: number }) =>
      kubeResult(
        'RollbackDeployment',
        input,
        { revision: 4, images: ['api:2'] },
        { revision: input.toRevision ?? 3, images: ['api:1'] },
      ),
    kubeDeletePod: async (input: { key: string; cluster: string }) =>
      kubeResult('DeletePod', input, { uid: 'u1', phase: 'Running', node: 'n1' }, { deleted: true }),
    kubePreviewAction: async (_: unknown) => ({
      target: `deployment ${TARGET.namespace}/${TARGET.deployment}`,
      summary: 'replicas 2 → 4',
      diff: '-  replicas: 2\n+  replicas: 4',
      dryRun: true,
    }),
    kubeGetResource: async (_: unknown) => ({ kind: 'Deployment', name: TARGET.deployment }),
    kubeListPods: async (_: unknown) => ({ pods: [] }),
    kubeRecentEvents: async (_: unknown) => ({ events: [] }),
    kubeLogTail: async (_: unknown) => ({ lines: [] }),
    runHttpPlanStep: async (_: { plan: string; index: number }) => ({
      status: 200,
      ok: true,
      durationMs: 12,
      repeated: false,
    }),
    runScriptPlanStep: async (_: { plan: string; index: number }) => ({
      exitCode: 0 as number | null,
      output: 'done',
      truncated: false,
      timedOut: false,
      durationMs: 30,
      repeated: false,
    }),
    notifyStep: async (_: { plan: string; index: number }) => 'sent to slack hooks.slack.com',
    awaitTargetHealthy: async (_: { timeoutMs: number }) => ({
      healthy: true,
      checked: ['deployment shop/api rolled out and available'],
      seen: ['4/4 updated, 4/4 available'],
      summary: 'deployment shop/api is healthy',
    }),
    agenticContext: async (_: unknown) => ({ incident: { name: 'INC-1' }, insight: null }),
    agenticDecide: async (_: unknown) => ({
      kind: 'verdict',
      verdict: 'give_up',
      summary: 'nothing to do',
      reasoning: '',
    }),
    recordAgenticStep: async (_: unknown) => undefined,
    addAgenticAction: async (_: unknown) => 0,
    offerRunbook: async (_: unknown) => null,
    // Approvals (activities/approvals.ts)
    requestApproval: async (input: { ttlMs: number }) => ({
      name: `APR-${++approvals}`,
      expiresAt: new Date(scheduledAt() + input.ttlMs).toISOString(),
    }),
    announceApproval: async (_: unknown) => undefined,
    approvalNotice: async (input: { name: string }) => `Approval ${input.name} asked: ScaleDeployment on shop/api`,
    recordApprovalDecision: async (_: unknown) => undefined,
    expireApproval: async (_: unknown) => undefined,
    // Notifications (activities/notifications.ts, callbacks.ts)
    levelEndpoints: async (_: { level: number }) => [slack, pagerDuty],
    maintenanceWindow: async (_: { namespace: string }) =>
      undefined as { name: string; until: string; reason: string } | undefined,
    noteLadder: async (_: unknown) => undefined,
    deliverNotification: async (_: DeliveryInput) => 'delivered',
    noteNotificationFailed: async (_: unknown) => undefined,
    deliverCallback: async (_: { messageId: string; chatId: string; kind: string; seq: number; text: string }) =>
      'delivered',
    // Chat (activities/chat.ts, agent-llm.ts, agent-tools.ts, media.ts, transcribe.ts)
    loadChatHistory: async (_: { chatId: string; limit: number }) => [] as ChatTurn[],
    prepareTurn: async (_: { messageId: string }): Promise<PreparedTurn> => ({
      chatId: 'room-1',
      userId: 'u-ana',
      text: '/incidents',
      agent: 'builtin',
      shell: false,
    }),
    completeTurn: async (_: { messageId: string; prompt: string; reply: string; replyKind: string }) => undefined,
    fetchMedia: async (input: { messageId: string; field: string; url: string; mime?: string }): Promise<MediaRef> => ({
      fileId: `file-${input.field}`,
      ...(input.mime && { mime: input.mime }),
    }),
    transcribeAudio: async (_: { fileId: string; mime?: string }) => ({ text: 'list incidents', backend: 'whisper' }),
    llmAgentStep: async (_: { messages: AgentMessage[]; shell: boolean; imageFileId?: string }) => ({
      content: 'All quiet.',
      toolCalls: [] as AgentToolCall[],
    }),
    runAgentTool: async (_: { caller: ToolCaller; call: ToolCall }): Promise<ToolResult> => ({
      text: 'No open incidents.',
    }),
    // Clusters, reconciler, audit export
    watchCluster: async (_: { cluster: string; checkpoint?: unknown; roundMs?: number }) => ({ version: 1 }) as unknown,
    checkClusterHealth: async (_: { cluster: string }) => ({
      phase: 'Connected',
      connected: true,
      checkedAt: new Date().toISOString(),
      message: '3/3 nodes ready',
    }),
    reconcileIncidents: async () => 0,
    reconcileChats: async () => 0,
    writeAuditExport: async (_: { jobId: string }) => ({ records: 120, bytes: 40_960 }),
    failAuditExport: async (_: { jobId: string; reason: string }) => undefined,
    expireAuditExport: async (_: { jobId: string }) => undefined,
  };
}

type Defaults = ReturnType<typeof defaults>;
/** The fakes: a jest.fn per activity, typed by its default's signature. */
export type Fakes = { [K in keyof Defaults]: jest.Mock<ReturnType<Defaults[K]>, Parameters<Defaults[K]>> };

/** Fresh fakes with the ordinary answers; `overrides` replaces some implementations. */
export function createFakes(overrides: Partial<{ [K in keyof Defaults]: Defaults[K] }> = {}): Fakes {
  const all = { ...defaults(), ...overrides };
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each fake keeps its default's signature
  return Object.fromEntries(Object.entries(all).map(([name, fn]) => [name, jest.fn(fn as any)])) as unknown as Fakes;
}

/** The fakes as the worker registers them. */
export const asActivities = (fakes: object): ActivityFns => fakes as ActivityFns;

/** The first argument of each call of a fake. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- callers narrow with their expectations
export const inputs = (fake: jest.Mock): any[] => fake.mock.calls.map((call) => call[0]);

/** Polls `check` (real time: workflows and activities move asynchronously) until it holds; fails naming `what`. */
export async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** A promise a fake waits on until the test opens it: holds a workflow at an activity. */
export function gate(): { wait: () => Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { wait: () => opened, open };
}

/** For a fake with a heartbeat timeout (triage, close): waits on `held`, heartbeating, so the server never times it out. */
export async function heldWithHeartbeats(held: { wait: () => Promise<void> }): Promise<void> {
  const activity = Context.current();
  const beat = setInterval(() => activity.heartbeat(), 1_000);
  try {
    await held.wait();
  } finally {
    clearInterval(beat);
  }
}

/**
 * Until `workflow` has no activity in flight and no workflow task pending. Before a test cancels
 * something (a resolve cancels the plan, a cancel the approval): the time-skipping server leaves a
 * workflow stuck for good, and time skipping locked for every later test, when one workflow task
 * both sees an activity complete and asks to cancel it ("ACTIVITY_UNKNOWN",
 * temporalio/sdk-typescript#1058). A real server takes that in its stride.
 */
export function untilIdle(workflow: WorkflowHandle, timeoutMs?: number): Promise<void> {
  // From the history: the test server's DescribeWorkflowExecution lists no pending activities.
  return until(
    async () => {
      const events = (await workflow.fetchHistory()).events ?? [];
      const count = (types: number[]) => events.filter((e) => types.includes(e.eventType ?? 0)).length;
      const last = events[events.length - 1]?.eventType ?? 0;
      // Every activity closed and every workflow task done (the last one saw them), or the run ended.
      return (
        RUN_CLOSED.includes(last) ||
        (count([ACTIVITY_SCHEDULED]) === count(ACTIVITY_CLOSED) &&
          count([WORKFLOW_TASK_SCHEDULED]) === count(WORKFLOW_TASK_CLOSED))
      );
    },
    `${workflow.workflowId} idle`,
    timeoutMs,
  );
}

const E = temporal.api.enums.v1.EventType;
const ACTIVITY_SCHEDULED = E.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED;
const ACTIVITY_CLOSED = [
  E.EVENT_TYPE_ACTIVITY_TASK_COMPLETED,
  E.EVENT_TYPE_ACTIVITY_TASK_FAILED,
  E.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT,
  E.EVENT_TYPE_ACTIVITY_TASK_CANCELED,
];
const WORKFLOW_TASK_SCHEDULED = E.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED;
const WORKFLOW_TASK_CLOSED = [
  E.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
  E.EVENT_TYPE_WORKFLOW_TASK_FAILED,
  E.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT,
];
const RUN_CLOSED: number[] = [
  E.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED,
  E.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED,
  E.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED,
  E.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED,
  E.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT,
  E.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW,
];

/**
 * Ends a test's workflows: each terminated once it has no activity in flight (at most a few
 * seconds: a test that failed may hold one for good). The time-skipping server keeps time locked
 * for an activity of a workflow terminated while it ran, and every later test of the file would
 * wait for its timers in real time.
 */
export async function terminateWhenIdle(workflows: WorkflowHandle[]): Promise<void> {
  for (const workflow of workflows) {
    await untilIdle(workflow, 5_000).catch(() => undefined); // gone, or held by a failed test
    await workflow.terminate('test over').catch(() => undefined); // completed already
  }
}

/** The input a run started with (a continued run's: what the run before carried). */
export async function startInput<T>(workflow: WorkflowHandle, runId?: string): Promise<T> {
  const handle = runId ? workflow.client.getHandle(workflow.workflowId, runId) : workflow;
  const [started] = (await handle.fetchHistory()).events ?? [];
  const payload = started?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  if (!payload) throw new Error(`${workflow.workflowId} has no start input`);
  return defaultPayloadConverter.fromPayload<T>(payload);
}

/** A person acting through the API, as the updates receive them (identity from the token). */
export const person = (user: string, role: UserRole = 'operator'): Actor => ({
  user,
  role,
  sourceIP: '10.0.0.9',
  userAgent: 'foghorn-cli',
});
