import {
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  condition,
  executeChild,
  isCancellation,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { AgenticActivities } from '../activities/agentic';
import type { ApprovalActivities } from '../activities/approvals';
import type { CallbackActivities } from '../activities/callbacks';
import type { NotificationActivities } from '../activities/notifications';
import type { createKubeActionActivities } from '../activities/kube-actions';
import type { createKubePreviewActivities } from '../activities/kube-preview';
import type { createKubeReadActivities } from '../activities/kube-reads';
import type { RemediationActivities } from '../activities/remediation';
import type { RemediationVerifyActivities } from '../activities/remediation-verify';
import {
  AGENTIC_ACTIVITY_OPTIONS,
  AGENTIC_BUDGET_MS,
  AGENTIC_MAX_STEPS,
  clipObservation,
  type AgenticDecision,
  type AgenticStepRecord,
} from '../domain/agentic';
import type { ApprovalOutcome } from '../domain/approval-requests';
import { formatDuration, parseDuration } from '../domain/duration';
import { KUBE_ACTION_ACTIVITY_OPTIONS, KUBE_READ_ACTIVITY_OPTIONS } from '../domain/kube-actions';
import { approvalNeed, isKubeAction, planRisk, type PlanState } from '../domain/remediation';
import {
  describeKubeResult,
  publicStep,
  undoInput,
  type KubeStepInput,
  type KubeStepResult,
  type PreparedPlan,
  type Verdict,
} from '../domain/remediation-plan';
import {
  HTTP_STEP_ACTIVITY_OPTIONS,
  HTTP_STEP_LOCAL_ACTIVITY_OPTIONS,
  SCRIPT_STEP_ACTIVITY_OPTIONS,
} from '../domain/remediation-steps';
import type { RunbookAction } from '../domain/runbook';
import { approvalWorkflow } from './approval';
import { failureText } from './failure-text';
import { signalJoinedSignal, sourceResolvedSignal } from './remediation-messages';
import { INCIDENT, NAMESPACE, REMEDIATION_STATE, RESOURCE } from './search-attributes';
import { PATIENT_RETRY, STORE_CALL_OPTIONS } from './store-options';
import {
  LOCAL_HTTP_STEPS,
  PLAN_MADE_EXECUTING,
  PLAN_RECORDS_AS_ACTIVITIES,
  RELEASE_14,
  RELEASE_24,
  RELEASE_28,
  sinceRelease,
  VERIFYING_WITH_LAST_STEP,
} from './release';

type KubeActionActivities = ReturnType<typeof createKubeActionActivities>;
type KubeReadActivities = ReturnType<typeof createKubeReadActivities>;
type KubePreviewActivities = ReturnType<typeof createKubePreviewActivities>;

/** Plan bookkeeping in MongoDB: quick, idempotent, retried without a cap (an outage delays, never fails). */
const acts = proxyActivities<RemediationActivities & ApprovalActivities>(STORE_CALL_OPTIONS);
/**
 * The same bookkeeping run in the worker, inside the workflow task that asks for it: a marker in
 * the history instead of a round trip through the Temporal server each (docs/benchmarks.md,
 * "Thirteenth pass"). Only in a plan's own workflow, whose handlers set variables and add no
 * command. In its incident's run (release-32 on) the incident's handlers add commands while one
 * is in flight, and a crash then replayed a run into a nondeterminism error (the fifth pass saw
 * it too): since release-35 the records there are activities (`PLAN_RECORDS_AS_ACTIVITIES`).
 */
const books = proxyLocalActivities<RemediationActivities>(STORE_CALL_OPTIONS);
/** Resolving a Kubernetes step reads the cluster: bounded like the reads, then the step fails. */
const resolve = proxyActivities<RemediationActivities>(KUBE_READ_ACTIVITY_OPTIONS);
/** Kubernetes writes: retried for 10 min, safe because each key is applied once (activities/kube-actions.ts). */
const kube = proxyActivities<KubeActionActivities>(KUBE_ACTION_ACTIVITY_OPTIONS);
/** The agent's reads and the approval previews: a few quick tries, then the caller goes on without them. */
const reads = proxyActivities<KubeReadActivities & KubePreviewActivities>(KUBE_READ_ACTIVITY_OPTIONS);
/** HTTP steps read their headers and body from the plan record: they never travel in the payload. */
const http = proxyActivities<RemediationActivities>(HTTP_STEP_ACTIVITY_OPTIONS);
/**
 * The same, run in the worker inside the workflow task: a request takes seconds, where its round
 * trip through the Temporal server as an activity cost a burst of plans as much again
 * (docs/benchmarks.md, "Twenty-fourth pass"). Only in a plan's own workflow (runs from before
 * release-32): in the incident's run it would hold up an operator's acknowledge until the service
 * answered, so the step is an activity there (`PlanRun.inIncident`).
 */
const localHttp = proxyLocalActivities<RemediationActivities>(HTTP_STEP_LOCAL_ACTIVITY_OPTIONS);
/** Script steps, too, read their text from the plan record. */
const script = proxyActivities<RemediationActivities>(SCRIPT_STEP_ACTIVITY_OPTIONS);
const agent = proxyActivities<AgenticActivities>(AGENTIC_ACTIVITY_OPTIONS);
/**
 * Waiting for the target to be healthy runs in real time for up to the verification window;
 * heartbeats every poll, so a dead worker is noticed in 30 s and a cancelled wait stops at once.
 */
const verify = proxyActivities<RemediationVerifyActivities>({
  startToCloseTimeout: '35m',
  heartbeatTimeout: '30s',
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 5 },
});
/** Notify steps: the chat home channel, a few minutes of retries (a late notice is still worth it). */
const notify = proxyActivities<CallbackActivities>({
  startToCloseTimeout: '30s',
  scheduleToCloseTimeout: '10m',
  retry: PATIENT_RETRY,
});

/** Notify steps through the incident policy's channels: each endpoint's delivery is keyed, so a retry sends nothing twice. */
const notifySteps = proxyActivities<NotificationActivities>({
  startToCloseTimeout: '2m',
  scheduleToCloseTimeout: '10m',
  retry: PATIENT_RETRY,
});

export interface RemediationWorkflowInput {
  plan: PreparedPlan;
}

export interface RemediationOutcome {
  state: Extract<PlanState, 'Completed' | 'Failed' | 'RolledBack'>;
  result: string;
  /** Set when the plan waited for a person and did not get a yes. */
  approval?: Exclude<ApprovalOutcome['status'], 'approved'>;
  approvalName?: string;
  /** The alert cleared at source while the plan still waited for its approval: nothing ran. */
  sourceResolved?: boolean;
}

/** A Kubernetes step that ran: how to describe and how to undo it. */
interface Executed {
  index: number;
  type: string;
  undo: KubeStepInput[];
}

/** What a running plan is told: new firing signals that joined its incident, its alert clearing at source. */
export interface PlanInbox {
  joined: number;
  sourceCleared: boolean;
}

/** Where a plan runs: its own workflow, or its incident's run (since release-32). */
export interface PlanRun {
  /** The patches the plan takes: its own workflow's release, or its incident run's. */
  release: { started: boolean; has: (patch: string) => boolean };
  inbox: PlanInbox;
  /** Says the plan's state in the search attributes of the workflow it runs in. */
  publish: (state: PlanState) => void;
  /** The state said already (by its start): not said again. */
  published?: string;
  /**
   * In its incident's workflow: a slow service must not hold up that workflow's task (and an
   * operator's acknowledge with it), so HttpRequest steps run as activities there.
   */
  inIncident?: boolean;
}

/**
 * One remediation attempt as a workflow of its own, workflow id = the plan's name `RP-…`: how
 * every plan ran before release-32, and how those still in flight finish.
 */
export async function remediationWorkflow({ plan }: RemediationWorkflowInput): Promise<RemediationOutcome> {
  const release = sinceRelease(RELEASE_28, RELEASE_24, RELEASE_14);
  const inbox: PlanInbox = { joined: 0, sourceCleared: false };
  setHandler(signalJoinedSignal, () => void inbox.joined++);
  setHandler(sourceResolvedSignal, () => void (inbox.sourceCleared = true));
  const publish = (state: PlanState) =>
    upsertSearchAttributes([
      { key: REMEDIATION_STATE, value: state },
      { key: INCIDENT, value: plan.incident },
      { key: NAMESPACE, value: plan.namespace },
      { key: RESOURCE, value: `${plan.resource.kind}/${plan.resource.name}` },
    ]);
  const published = workflowInfo().typedSearchAttributes.get(REMEDIATION_STATE);
  return runRemediation(plan, { release, inbox, publish, ...(published && { published }) });
}

/**
 * One remediation attempt (DESIGN §8): an approval when the plan needs one, then its steps one
 * activity each (keyed by plan + step), then verification for the runbook's window, and the
 * rollback of what can be undone when the fix did not hold. Cancelled (a person resolved the
 * incident) it stops after the step in flight and records so.
 */
export async function runRemediation(plan: PreparedPlan, run: PlanRun): Promise<RemediationOutcome> {
  const { release, inbox } = run;
  let state: PlanState = 'Pending';
  let fixedAt = new Date().toISOString();
  const executed: Executed[] = [];
  /** An approval asked for whose workflow has not given its outcome: expired if the plan is cancelled. */
  let undecided: string | undefined;
  const kubeTarget = plan.resource.kind === 'Deployment';
  /** Runs from before the patch keep their bookkeeping activities and their separate Verification. */
  const local = release.has(LOCAL_BOOKKEEPING);
  /**
   * In the incident's run since release-35 the records are activities again (see `books`), one
   * after the other, and the plan goes on while a step's record is written: the round trip runs
   * beside the next step or the verification window instead of before it.
   */
  const recordsBeside = local && !!run.inIncident && release.has(PLAN_RECORDS_AS_ACTIVITIES);
  const book = recordsBeside ? inOrder(acts) : local ? books : acts;

  const publish = () => run.publish(state);
  /** The state its start said (`Executing` when that is its first move, since release-24): not said again. */
  let published = run.published;
  /** `recorded`: the record says `next` already (made so, or written with the last step). */
  const moveTo = async (next: PlanState, approval?: string, recorded = false) => {
    if (!recorded) await book.setPlanState({ plan: plan.name, state: next, ...(approval && { approval }) });
    state = next;
    if (published !== next) publish();
    published = undefined;
  };
  const finish = async (
    end: RemediationOutcome['state'],
    result: string,
    extra: Partial<RemediationOutcome> = {},
    verification?: Verdict,
  ) => {
    await CancellationScope.nonCancellable(() =>
      book.finishPlan({ plan: plan.name, state: end, result, ...(verification && { verification }) }),
    );
    state = end;
    publish();
    return { state: end, result, ...extra };
  };
  // Runs from before the release said again what their start had said.
  if (!release.started) publish();

  // Made Failed (a template problem): its end is recorded on the timeline, nothing runs.
  if (plan.problem) return await finish('Failed', plan.problem);

  try {
    if (plan.approval.required && !plan.agentic) {
      if (inbox.sourceCleared)
        return await finish('Failed', 'the alert resolved at source before an approval was asked; nothing ran', {
          approval: 'expired',
          sourceResolved: true,
        });
      const decision = await askApproval(plan.name, plan.actions, plan.approval, plan.riskScore);
      if (decision.status !== 'approved')
        return await finish('Failed', approvalText(decision, decision.name), {
          approval: decision.status,
          approvalName: decision.name,
          ...(inbox.sourceCleared && decision.status === 'expired' ? { sourceResolved: true } : {}),
        });
    }
    await moveTo('Executing', undefined, !!plan.recordedExecuting && release.has(PLAN_MADE_EXECUTING));

    /** A runbook's move to Verifying rides with its last step's record: one write and one local activity fewer. */
    const verifyingWithLast = !plan.agentic && plan.actions.length > 0 && release.has(VERIFYING_WITH_LAST_STEP);
    if (plan.agentic) {
      const end = await agenticLoop();
      if (end.kind === 'stop') return await finish(...(await failAndUndo(end.result)));
      if (end.kind === 'approval')
        return await finish('Failed', end.result, {
          approval: end.status,
          approvalName: end.approval,
          ...(inbox.sourceCleared && end.status === 'expired' ? { sourceResolved: true } : {}),
        });
    } else {
      for (const [index, action] of plan.actions.entries()) {
        // Steps that change things finish once started (nonCancellable); a cancel is seen between
        // them. A Wait changes nothing: it is cut short.
        if (CancellationScope.current().consideredCancelled) throw new CancelledFailure('the plan was cancelled');
        const then = verifyingWithLast && index === plan.actions.length - 1 ? 'Verifying' : undefined;
        try {
          if (action.type === 'Wait') await runStep(index, action, then);
          else await CancellationScope.nonCancellable(() => runStep(index, action, then));
        } catch (err) {
          if (isCancellation(err)) throw err;
          return await finish(...(await failAndUndo(`step ${index + 1} ${action.type} failed: ${failureText(err)}`)));
        }
      }
    }

    await moveTo('Verifying', undefined, verifyingWithLast);
    let verdict: Verdict;
    try {
      verdict = await verification();
    } catch (err) {
      if (isCancellation(err)) throw err;
      // The cluster could not be read (down, forbidden, gone): the fix is not proven.
      const why = failureText(err);
      verdict = { passed: false, checked: [], seen: [why], summary: `verification could not run: ${why}` };
    }
    // A verified runbook ends here: its Verification event is written with its end.
    if (verdict.passed && !plan.agentic && local)
      return await finish('Completed', `verified: ${verdict.summary}`, {}, verdict);
    await book.recordVerification({ plan: plan.name, ...verdict });
    if (verdict.passed) {
      if (plan.agentic) await acts.offerRunbook({ plan: plan.name });
      return await finish('Completed', `verified: ${verdict.summary}`);
    }
    return await finish(...(await failAndUndo(`verification failed: ${verdict.summary}`)));
  } catch (err) {
    // Anything unexpected still ends the plan: undone where possible and recorded, never left open.
    if (!isCancellation(err)) return await finish(...(await failAndUndo(`the plan failed: ${failureText(err)}`)));
    // Cancelled after the approval was recorded but before its workflow ran (or answered): without
    // this it stays `pending` for ever, listed and answering 503. A no-op once it is decided.
    const orphan = undecided;
    if (orphan)
      await CancellationScope.nonCancellable(() =>
        acts.expireApproval({ name: orphan, at: new Date().toISOString(), reason: 'incident resolved' }),
      );
    return await finish(
      'Failed',
      `cancelled in state ${state}: the incident was resolved while the plan ran (no further step ran; ${executed.length} step(s) stayed applied)`,
    );
  }

  // -------------------------------------------------------------------------------------------

  /** Asks for (and waits on) an approval; the previews show what each Kubernetes step changes. */
  async function askApproval(
    key: string,
    actions: RunbookAction[],
    need: PreparedPlan['approval'],
    risk: number,
    indexes: number[] = actions.map((_, i) => i),
  ): Promise<ApprovalOutcome & { name: string }> {
    const previews = [];
    for (const [n, action] of actions.entries()) {
      const index = indexes[n];
      if (!isKubeAction(action.type)) continue;
      try {
        const resolved = await resolve.resolveKubeStep({ plan: plan.name, index });
        for (const step of resolved.inputs) {
          const { key: _key, ...input } = step.input;
          const preview = await reads.kubePreviewAction({ action: step.action, ...input } as never);
          previews.push({ step: index + 1, action: step.action, ...preview });
        }
      } catch (err) {
        if (isCancellation(err)) throw err;
        previews.push({
          step: index + 1,
          action: action.type,
          target: '',
          summary: 'no preview',
          diff: '',
          dryRun: false,
          error: failureText(err),
        });
      }
    }
    const approvalInput = {
      key,
      incident: plan.incident,
      namespace: plan.namespace,
      plan: plan.name,
      action: actions.map((a) => describeAction(publicStep(a))).join(', then '),
      riskScore: risk,
      requiredRole: need.requiredRole,
      runbook: plan.runbook,
      reasons: need.reasons,
      previews,
      ttlMs: plan.approvalTtlMs,
    };
    // Not cancellable: once the record may exist, we must know its name to expire it.
    const request = await CancellationScope.nonCancellable(() => acts.requestApproval(approvalInput));
    undecided = request.name;
    await book.setPlanState({ plan: plan.name, state: 'Pending', approval: request.name });
    // The wait ends early when the alert clears at source: nothing ran, nothing is left to approve.
    const waiting = new CancellationScope();
    const child = waiting.run(() =>
      executeChild(approvalWorkflow, {
        workflowId: request.name,
        args: [
          {
            name: request.name,
            incident: plan.incident,
            namespace: plan.namespace,
            plan: plan.name,
            requiredRole: need.requiredRole,
            ttlMs: plan.approvalTtlMs,
            expiresAt: request.expiresAt,
          },
        ],
      }),
    );
    // (Rejected when the plan itself is cancelled: the scope is cancelled with it, nothing to do.)
    void condition(() => inbox.sourceCleared).then(
      () => waiting.cancel(),
      () => undefined,
    );
    let outcome: ApprovalOutcome;
    try {
      outcome = await child;
    } catch (err) {
      if (!(inbox.sourceCleared && isCancellation(err))) throw err;
      // Cancelled before its workflow could answer: the record must not stay pending.
      const at = new Date().toISOString();
      await CancellationScope.nonCancellable(() =>
        acts.expireApproval({ name: request.name, at, reason: 'the alert resolved at source' }),
      );
      outcome = { status: 'expired', reason: 'incident resolved' };
    }
    if (inbox.sourceCleared && outcome.status === 'expired')
      outcome = { ...outcome, reason: 'the alert resolved at source' };
    undecided = undefined;
    return { ...outcome, name: request.name };
  }

  /**
   * Runs step `index`, writes `ActionExecuted` + audit (and the plan's move to `then` when it
   * succeeded); throws when the step failed.
   */
  async function runStep(index: number, action: RunbookAction, then?: PlanState): Promise<string> {
    const params = action.params as Record<string, unknown>;
    let result: string;
    try {
      result = await execute(index, action);
    } catch (err) {
      // A Wait cut short by a resolve did not fail: no record (the records since release-35 are
      // not cancellable; before, the cancelled scope stopped this one from being written).
      if (recordsBeside && isCancellation(err)) throw err;
      await book.recordStep({
        plan: plan.name,
        index,
        outcome: 'failed',
        result: failureText(err),
        params,
        type: action.type,
      });
      throw err;
    }
    const written = book.recordStep({
      plan: plan.name,
      index,
      outcome: 'ok',
      result,
      params,
      type: action.type,
      ...(then && { then }),
    });
    // Beside the rest (release-35): a record that failed fails the plan's next write instead.
    // An agentic plan's loop writes its plan (the next action) outside the queue: it waits.
    if (recordsBeside && !plan.agentic) written.catch(() => undefined);
    else await written;
    return result;
  }

  async function execute(index: number, action: RunbookAction): Promise<string> {
    if (isKubeAction(action.type)) {
      const resolved = await resolve.resolveKubeStep({ plan: plan.name, index });
      const lines: string[] = [];
      // Recorded before the first call: a step that fails half way (one container of two) is
      // undone as far as it got.
      const done: Executed = { index, type: action.type, undo: [] };
      executed.push(done);
      for (const [n, step] of resolved.inputs.entries()) {
        const r = await runKube(step);
        lines.push(describeKubeResult(r));
        const back = undoInput(step, r, resolved.revisionBefore, `${plan.name}/undo/${index}/${n}`);
        if (back) done.undo.push(back);
      }
      fixedAt = new Date().toISOString();
      return lines.join('; ');
    }
    switch (action.type) {
      case 'Wait':
        await sleep(parseDuration(action.params.duration));
        return `waited ${action.params.duration}`;
      case 'Notify': {
        if (release.has(NOTIFY_STEP_CHANNELS)) return await notifySteps.notifyStep({ plan: plan.name, index });
        const sent = await notify.notifyHomeChannel({
          incident: plan.incident,
          event: `${plan.name}.${index}`,
          text: `${plan.incident} (${plan.name}): ${action.params.message}`,
        });
        const via =
          action.params.channel === 'chat'
            ? ''
            : ` (asked for ${action.params.channel}; sent to the chat home channel)`;
        return sent === 'skipped'
          ? 'no chat home channel configured; message recorded here only'
          : `chat home channel: ${sent}${via}`;
      }
      case 'HttpRequest': {
        const p = action.params;
        const inTask = release.has(LOCAL_HTTP_STEPS) && !run.inIncident;
        const r = await (inTask ? localHttp : http).runHttpPlanStep({ plan: plan.name, index });
        if (!r.ok)
          throw ApplicationFailure.nonRetryable(
            `${p.method} answered ${r.status}${p.expectStatus ? ` (expected ${p.expectStatus})` : ''}`,
          );
        return `${p.method} answered ${r.status} in ${r.durationMs} ms`;
      }
      case 'RunScript': {
        const r = await script.runScriptPlanStep({ plan: plan.name, index });
        if (r.exitCode !== 0)
          throw ApplicationFailure.nonRetryable(
            `script ${r.timedOut ? 'timed out' : `exited ${r.exitCode}`}: ${r.output.slice(-300)}`,
          );
        return `script exited 0 in ${r.durationMs} ms${r.output ? `: ${r.output.slice(-300)}` : ''}`;
      }
      default:
        throw ApplicationFailure.nonRetryable(`${action.type} cannot run here`);
    }
  }

  async function runKube(step: KubeStepInput): Promise<KubeStepResult> {
    switch (step.action) {
      case 'RestartDeployment':
        return kube.kubeRestartDeployment(step.input);
      case 'ScaleDeployment':
        return kube.kubeScaleDeployment(step.input);
      case 'AdjustResources':
        return kube.kubeAdjustResources(step.input);
      case 'RollbackDeployment':
        return kube.kubeRollbackDeployment(step.input);
      case 'DeletePod':
        return kube.kubeDeletePod(step.input);
    }
  }

  /** Undoes what can be undone, newest first; the plan's end state and result. */
  async function failAndUndo(reason: string): Promise<['Failed' | 'RolledBack', string]> {
    return CancellationScope.nonCancellable(async () => {
      let undone = 0;
      const problems: string[] = [];
      for (const step of [...executed].reverse()) {
        if (step.undo.length === 0) continue;
        const lines: string[] = [];
        try {
          for (const back of step.undo) lines.push(describeKubeResult(await runKube(back)));
          undone++;
          await book.recordStep({
            plan: plan.name,
            index: step.index,
            outcome: 'undone',
            result: lines.join('; '),
            params: {},
            type: step.type,
          });
        } catch (err) {
          problems.push(`step ${step.index + 1} ${step.type} could not be undone: ${failureText(err)}`);
        }
      }
      const rolledBack = undone > 0 && problems.length === 0;
      const tail =
        undone > 0 ? `; rolled back ${undone} step(s)` : executed.length > 0 ? '; nothing could be undone' : '';
      return [
        rolledBack ? 'RolledBack' : 'Failed',
        `${reason}${tail}${problems.length ? `; ${problems.join('; ')}` : ''}`,
      ];
    });
  }

  /**
   * Passes when the target is healthy again and no new firing signal joined during the window.
   * The health wait runs in real time (an activity); the rest of the window is a durable timer.
   */
  async function verification(): Promise<Verdict> {
    const windowMs = plan.verifyWindowMs;
    const window = formatDuration(windowMs);
    const before = inbox.joined;
    const newSignal = () => inbox.joined > before;
    const started = Date.now();
    const signalText = `no new firing signal joined ${plan.incident} during the ${window} window`;
    if (!(kubeTarget && executed.length > 0)) {
      const failed = await condition(newSignal, windowMs);
      return {
        passed: !failed,
        checked: [signalText],
        seen: [failed ? 'a new firing signal joined the incident' : 'no new signal'],
        summary: failed
          ? `a new firing signal joined the incident within ${window}`
          : `no new firing signal within ${window} (the resource is in no registered cluster or was not changed: only signals were checked)`,
      };
    }
    const target = { cluster: plan.cluster, namespace: plan.namespace, deployment: plan.resource.name, since: fixedAt };
    const scope = new CancellationScope();
    const health = scope.run(() => verify.awaitTargetHealthy({ ...target, timeoutMs: windowMs }));
    const first = await Promise.race([health, condition(newSignal).then(() => null)]);
    if (first === null) {
      scope.cancel();
      await health.catch(() => undefined);
      return {
        passed: false,
        checked: [signalText],
        seen: ['a new firing signal joined the incident'],
        summary: `a new firing signal joined the incident before deployment ${plan.namespace}/${plan.resource.name} was healthy`,
      };
    }
    if (!first.healthy)
      return { passed: false, checked: [...first.checked, signalText], seen: first.seen, summary: first.summary };
    const rest = windowMs - (Date.now() - started);
    if (rest > 0 && (await condition(newSignal, rest)))
      return {
        passed: false,
        checked: [...first.checked, signalText],
        seen: [...first.seen, 'a new firing signal joined the incident'],
        summary: `healthy at first, but a new firing signal joined the incident within ${window}`,
      };
    const last = await verify.awaitTargetHealthy({ ...target, timeoutMs: 0 });
    return {
      passed: last.healthy,
      checked: [...last.checked, signalText],
      seen: [...last.seen, 'no new signal'],
      summary: last.healthy ? `${last.summary}; no new firing signal within ${window}` : `relapsed: ${last.summary}`,
    };
  }

  type LoopEnd =
    | { kind: 'fixed' }
    | { kind: 'stop'; result: string }
    | { kind: 'approval'; status: 'rejected' | 'expired'; approval: string; result: string };

  /** Observe → decide → act, at most 10 steps and 10 minutes; every action passes the approval gate. */
  async function agenticLoop(): Promise<LoopEnd> {
    const context = await acts.agenticContext({ name: plan.incident });
    const steps: AgenticStepRecord[] = [];
    const started = Date.now();
    /** Time spent waiting for a person's decision: the budget bounds the agent, not the approver. */
    let waited = 0;
    for (let n = 1; n <= AGENTIC_MAX_STEPS; n++) {
      if (Date.now() - started - waited > AGENTIC_BUDGET_MS)
        return {
          kind: 'stop',
          result: `the agent used its ${formatDuration(AGENTIC_BUDGET_MS)} budget without a verdict`,
        };
      let decision: AgenticDecision;
      try {
        decision = await agent.agenticDecide({ ...context, steps, stepNumber: n, maxSteps: AGENTIC_MAX_STEPS });
      } catch (err) {
        if (isCancellation(err)) throw err;
        return { kind: 'stop', result: `the model failed at step ${n}: ${failureText(err)}` };
      }
      const record = async (tool: string, params: Record<string, unknown>, observation: string) => {
        const step = { step: n, reasoning: decision.reasoning, tool, params, observation };
        await acts.recordAgenticStep({ plan: plan.name, ...step });
        steps.push(step);
      };
      if (decision.kind === 'verdict') {
        await record('finish', { verdict: decision.verdict }, decision.summary);
        if (decision.verdict === 'fixed') return { kind: 'fixed' };
        return { kind: 'stop', result: `the agent gave up at step ${n}: ${decision.summary}` };
      }
      if (decision.kind === 'read') {
        let observation: string;
        try {
          observation = clipObservation(await agentRead(decision));
        } catch (err) {
          if (isCancellation(err)) throw err;
          observation = `read failed: ${failureText(err)}`;
        }
        await record(decision.tool, decision.params as Record<string, unknown>, observation);
        continue;
      }
      const action = { type: decision.action, params: decision.params } as RunbookAction;
      const index = await acts.addAgenticAction({ plan: plan.name, step: n, action });
      const risk = planRisk(plan.incidentRisk, [action]);
      const need = approvalNeed({ risk, threshold: plan.riskThreshold });
      if (need.required) {
        const asked = Date.now();
        const decided = await askApproval(`${plan.name}/${n}`, [action], need, risk, [index]);
        waited += Date.now() - asked;
        if (decided.status !== 'approved')
          return {
            kind: 'approval',
            status: decided.status,
            approval: decided.name,
            result: approvalText(decided, decided.name),
          };
        await moveTo('Executing');
      }
      let observation: string;
      try {
        observation = await CancellationScope.nonCancellable(() => runStep(index, action));
      } catch (err) {
        if (isCancellation(err)) throw err;
        observation = `action failed: ${failureText(err)}`;
      }
      await record(decision.action, decision.params, observation);
    }
    return { kind: 'stop', result: `the agent used its ${AGENTIC_MAX_STEPS} steps without a verdict` };
  }

  async function agentRead(d: Extract<AgenticDecision, { kind: 'read' }>): Promise<unknown> {
    const where = { cluster: plan.cluster, namespace: plan.namespace };
    switch (d.tool) {
      case 'get_resource':
        return reads.kubeGetResource({
          cluster: plan.cluster,
          kind: d.params.kind,
          name: d.params.name,
          ...(d.params.kind !== 'Node' && { namespace: plan.namespace }),
        });
      case 'list_pods':
        return reads.kubeListPods({ ...where, kind: 'Deployment', name: plan.resource.name });
      case 'recent_events':
        return reads.kubeRecentEvents({
          cluster: plan.cluster,
          kind: d.params.kind,
          name: d.params.name,
          ...(d.params.kind !== 'Node' && { namespace: plan.namespace }),
        });
      case 'log_tail':
        return reads.kubeLogTail({ ...where, ...d.params });
    }
  }
}

/** The plan's record keeping: its state moves, its steps, its verification, its end. */
type Books = Pick<RemediationActivities, 'setPlanState' | 'recordStep' | 'recordVerification' | 'finishPlan'>;

/**
 * The records written one after the other, in the order asked, whether or not the plan awaits
 * each: a step's record lands before the next one and before the plan's end. Not cancellable:
 * a resolve that cancels the plan must not cut off a record of what ran. (The activities retry
 * without a cap, so a record fails only when the store throws what no retry can fix; that
 * failure then fails every later write.)
 */
function inOrder(books: Books): Books {
  let last: Promise<unknown> = Promise.resolve();
  const queue = <T>(call: () => Promise<T>): Promise<T> => {
    const next = last.then(() => CancellationScope.nonCancellable(call));
    last = next;
    return next;
  };
  return {
    setPlanState: (input) => queue(() => books.setPlanState(input)),
    recordStep: (input) => queue(() => books.recordStep(input)),
    recordVerification: (input) => queue(() => books.recordVerification(input)),
    finishPlan: (input) => queue(() => books.finishPlan(input)),
  };
}

/** `Approval APR-… rejected by bob: not now` / `expired: no decision within 30m`. */
function approvalText(outcome: ApprovalOutcome, name: string): string {
  if (outcome.status === 'expired') return `approval ${name} expired: ${outcome.reason ?? 'no decision in time'}`;
  return `approval ${name} ${outcome.status} by ${outcome.decidedBy}${outcome.comment ? `: ${outcome.comment}` : ''}`;
}

/**
 * `ScaleDeployment {"replicas":3}` for the approval's `action` text, which is stored, listed by
 * GET /approvals, put on the timeline and sent to chat (so only a step's public form, publicStep).
 */
function describeAction(a: RunbookAction): string {
  if (a.type === 'HttpRequest') return `HttpRequest ${a.params.method} ${a.params.url}`;
  const params = JSON.stringify(a.params);
  return params === '{}' ? a.type : `${a.type} ${params}`;
}

/**
 * Runs before this change kept their records through activities, and a passed verification in
 * one of its own; newer ones use local activities, and write a passed verification with the end.
 */
const LOCAL_BOOKKEEPING = 'local-plan-bookkeeping';
/** Runs before this change sent Notify steps to the chat home channel; newer ones use the policy's channels. */
const NOTIFY_STEP_CHANNELS = 'notify-step-channels';
