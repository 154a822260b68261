import {
  ApplicationFailure,
  CancellationScope,
  ChildWorkflowCancellationType,
  ParentClosePolicy,
  allHandlersFinished,
  condition,
  continueAsNew,
  executeChild,
  getExternalWorkflowHandle,
  isCancellation,
  proxyActivities,
  setHandler,
  startChild,
  upsertSearchAttributes,
  workflowInfo,
  type ExternalWorkflowHandle,
  type SignalDefinition,
} from '@temporalio/workflow';
import type { CallbackActivities } from '../activities/callbacks';
import type { IncidentActivities, ResolveInput } from '../activities/incidents';
import type { Endpoint, NotificationActivities } from '../activities/notifications';
import type { RemediationActivities } from '../activities/remediation';
import type { Escalated, IncidentStageActivities } from '../activities/incident-stages';
import { escalationMove, escalationReason, type Ladder } from '../domain/escalation-policy';
import type { IncidentState, Severity } from '../domain/incident';
import {
  CONFLICT,
  INBOX_BATCH,
  INVALID,
  SNOOZE_MAX_MS,
  SYSTEM_ACTOR,
  type CorrelatedSignal,
  type LiveState,
  type ResolveRequest,
} from '../domain/incident-requests';
import {
  chooseStrategy,
  FINAL_PLAN_STATES,
  giveUpReason,
  PLAN_ABANDONED_RESULT,
  type PlanState,
  type RemediationOptions,
  type Strategy,
} from '../domain/remediation';
import { startsExecuting, type PreparedPlan } from '../domain/remediation-plan';
import {
  acknowledgeUpdate,
  correlateSignal,
  liveStateQuery,
  resolveUpdate,
  signalsQueuedSignal,
  snoozeUpdate,
} from './incident-messages';
import { continueAsNewDue } from './continue-as-new';
import { escalationWorkflow } from './escalation';
import { ladderAcknowledgedSignal, ladderResolvedSignal, ladderSnoozedSignal } from './escalation-messages';
import { generatePostmortem, postmortemWorkflow } from './postmortem';
import {
  remediationWorkflow,
  runRemediation,
  type PlanInbox,
  type RemediationOutcome,
  type RemediationWorkflowInput,
} from './remediation';
import { signalJoinedSignal, sourceResolvedSignal } from './remediation-messages';
import {
  ESCALATION_STATE,
  INCIDENT,
  INCIDENT_STATE,
  NAMESPACE,
  REMEDIATION_STATE,
  RESOURCE,
  SEVERITY,
} from './search-attributes';
import { STORE_CALL_OPTIONS } from './store-options';
import {
  ESCALATE_IN_TRIAGE,
  PLAN_IN_RUN,
  PLAN_STARTS_EXECUTING,
  RELEASE_14,
  RELEASE_19,
  RELEASE_24,
  RELEASE_25,
  RELEASE_28,
  RELEASE_30,
  RELEASE_32,
  RELEASE_35,
  RESOLVE_IN_CLOSE,
  sinceRelease,
  STARTED_ANALYZING,
  TELL_STARTED_PLAN,
  TRIAGE_DRAINS_INBOX,
} from './release';

/** A message for a plan: sent through its handle (an external one, or the child's as it starts). */
type Tell = (plan: Pick<ExternalWorkflowHandle, 'signal'>) => Promise<void>;

/**
 * Persistence is quick and idempotent: retry it patiently, without a cap, so an outage of
 * MongoDB of any length delays the incident instead of failing it (the activities throw only
 * what a retry can fix).
 */
const acts = proxyActivities<IncidentActivities & RemediationActivities & NotificationActivities>(STORE_CALL_OPTIONS);
/**
 * Analysis may call an LLM: longer timeout, heartbeats (a dead worker is noticed in 10 s), and
 * it falls back to the rules analyzer itself, so what fails an attempt is the store being
 * down: retried without a cap (the cap of 5 attempts failed the incident after ~1 min). The
 * triage that holds it, and the close that writes the postmortem, run on the same terms.
 */
const analysis = proxyActivities<IncidentActivities & IncidentStageActivities>({
  startToCloseTimeout: '2m',
  heartbeatTimeout: '10s',
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '30s' }, // unlimited attempts
});

/**
 * Chat home-channel notices: worth retrying for an hour (a receiver down for minutes still
 * gets it), never worth blocking the incident. Bounded on purpose: an escalation notice hours
 * late is noise, and the delivery record keeps the last error for `gateway status`.
 */
const notify = proxyActivities<CallbackActivities>({
  startToCloseTimeout: '30s',
  scheduleToCloseTimeout: '1h',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '10m' },
});

export interface IncidentWorkflowInput {
  name: string;
  namespace: string;
  resource: string;
  severity: Severity;
  /** Carried across continue-as-new; absent on the first run. */
  carried?: {
    live: LiveState;
    pending: CorrelatedSignal[];
    signalsSeen: number;
    pastTriage: boolean;
    /** The escalation ladder (`<name>-escalation`) runs: acknowledge, snooze and resolve are forwarded to it. */
    ladder?: boolean;
  };
}

/**
 * One incident's life (DESIGN §6), workflow id = incident name:
 * Detected → Analyzing → (runbook match) → Remediating (one child workflow per attempt) →
 * Resolved by `system` when a plan is verified, or Escalated when none is left; Resolved by a
 * person or the alert source at any point. Acknowledge, snooze and resolve are updates whose validators
 * answer 409s synchronously and whose handlers persist before they return (read-your-writes).
 */
export async function incidentWorkflow(input: IncidentWorkflowInput): Promise<void> {
  const release = sinceRelease(
    RELEASE_35,
    RELEASE_32,
    RELEASE_30,
    RELEASE_28,
    RELEASE_25,
    RELEASE_24,
    RELEASE_19,
    RELEASE_14,
  );
  const { name } = input;
  const live: LiveState = input.carried?.live ?? { state: 'Detected', acknowledged: false, correlatedSignals: 0 };
  const pending: CorrelatedSignal[] = input.carried?.pending ?? [];
  let signalsSeen = input.carried?.signalsSeen ?? 0;
  let ladder = input.carried?.ladder ?? false;
  const ladderId = `${name}-escalation`;
  /** Tells the ladder, once it runs; it may have ended already (nothing to tell then). */
  const tellLadder = <Args extends unknown[]>(signal: SignalDefinition<Args>, ...args: Args): Promise<void> =>
    ladder
      ? getExternalWorkflowHandle(ladderId)
          .signal(signal, ...args)
          .catch(() => undefined)
      : Promise.resolve();
  const resolved = () => live.state === 'Resolved';

  /**
   * The end of the plan that ran in this run, when it is yet to be said: with the resolve it
   * leads to (a verified plan), one upsert for both.
   */
  let planEnd: string | undefined;
  /** `planState`: the state of the plan in this run, said with the incident's. */
  const publish = (planState = planEnd) => {
    planEnd = undefined;
    upsertSearchAttributes([
      { key: INCIDENT, value: name },
      { key: INCIDENT_STATE, value: live.state },
      { key: SEVERITY, value: input.severity },
      { key: NAMESPACE, value: input.namespace },
      { key: RESOURCE, value: input.resource },
      ...(planState ? [{ key: REMEDIATION_STATE, value: planState }] : []),
    ]);
  };
  const moveTo = async (
    state: IncidentState,
    event?: Parameters<IncidentActivities['setIncidentState']>[0]['event'],
  ) => {
    if (resolved()) return;
    await acts.setIncidentState({ name, state, at: new Date().toISOString(), event });
    if (resolved()) return; // a resolve landed while we were persisting: it wins
    live.state = state;
    publish();
  };

  /** The plan running now: new signals are forwarded to it (they fail its verification). */
  let activePlan: string | undefined;
  /** What the plan running in this run hears (since release-32): told by setting it, no signal. */
  let planInbox: PlanInbox | undefined;
  /** The source's resolution while a plan ran: applied if the plan ends without running anything. */
  let sourceResolution: ResolveRequest | undefined;
  /** A resolve the workflow decided itself, for its close to write (resolveAs). */
  let closingResolve: ResolveInput | undefined;
  setHandler(liveStateQuery, () => live);
  /**
   * The plan is starting (since release-25): what it is told now waits for its start. A signal
   * the server gets before the plan exists is dropped, and a plan that never heard that its alert
   * cleared waits for its approval until it expires.
   */
  let planStarting = false;
  const owedToPlan: Tell[] = [];
  /** Tells the plan running now, if any (nothing when it ended meanwhile). */
  const tellActivePlan = (tell: Tell): Promise<void> => {
    if (!activePlan) return Promise.resolve();
    if (planStarting) {
      owedToPlan.push(tell);
      return Promise.resolve();
    }
    return tell(getExternalWorkflowHandle(activePlan)).catch(() => undefined);
  };
  /** A new signal fails the verification of the plan running now. */
  const tellPlan = (signal: { signalType: CorrelatedSignal['signalType']; at: string }) => {
    if (planInbox) planInbox.joined++;
    else
      void tellActivePlan((plan) => plan.signal(signalJoinedSignal, { signalType: signal.signalType, at: signal.at }));
  };
  setHandler(correlateSignal, (signal) => {
    pending.push(signal);
    tellPlan(signal);
  });
  /**
   * Signals wait in the inbox (store/signal-inbox.ts). A run looks there once as it starts: a
   * hand-over lost to a crash, or signals queued while an earlier run was closing, are not missed.
   * A first run looks in its triage's activity (drainAndTriage), one round trip fewer; until that
   * answers, the pump records nothing, so no two records of signals start from the same index.
   */
  const inboxAtStart = release.has(SIGNAL_INBOX);
  let triageDrains = inboxAtStart && !input.carried && release.has(TRIAGE_DRAINS_INBOX);
  let inboxQueued = inboxAtStart && !triageDrains;
  setHandler(signalsQueuedSignal, (queued) => {
    inboxQueued = true;
    tellPlan(queued);
  });

  setHandler(
    acknowledgeUpdate,
    async (request) => {
      const at = new Date().toISOString();
      Object.assign(live, { acknowledged: true, acknowledgedBy: request.acknowledgedBy, acknowledgedAt: at });
      await acts.acknowledgeIncident({ name, request, at });
      await tellLadder(ladderAcknowledgedSignal, { by: request.acknowledgedBy, at });
    },
    {
      validator: (_request) => {
        rejectIfResolved();
        if (live.acknowledged) {
          throw ApplicationFailure.create({
            type: CONFLICT,
            message: 'Incident already acknowledged',
            details: [`acknowledged by ${live.acknowledgedBy} at ${live.acknowledgedAt}`],
          });
        }
      },
    },
  );

  setHandler(
    snoozeUpdate,
    async (request) => {
      const at = new Date();
      live.snoozeUntil = new Date(at.getTime() + request.durationMs).toISOString();
      await acts.snoozeIncident({ name, request, at: at.toISOString() });
      await tellLadder(ladderSnoozedSignal, { until: live.snoozeUntil });
    },
    {
      validator: (request) => {
        rejectIfResolved();
        if (!(request.durationMs > 0 && request.durationMs <= SNOOZE_MAX_MS)) {
          throw ApplicationFailure.create({
            type: INVALID,
            message: 'Invalid duration',
            details: [`${request.duration} is not between 0s and 24h`],
          });
        }
      },
    },
  );

  setHandler(
    resolveUpdate,
    async (request) => {
      const at = new Date().toISOString();
      if (request.atSource && live.state === 'Escalated') {
        // An escalated incident is in human hands: the source clearing does not close it.
        await acts.noteSourceResolution({ name, at });
        return false;
      }
      if (request.atSource && activePlan) {
        // A fix is running or being verified: the pods it replaced going away clears the alert,
        // which is what verification checks; the plan's verdict resolves (or not) the incident.
        // A plan still waiting for its approval ends, and the source's resolution then stands.
        sourceResolution = request;
        if (planInbox) planInbox.sourceCleared = true;
        else await tellActivePlan((plan) => plan.signal(sourceResolvedSignal));
        await acts.noteSourceResolution({ name, at, plan: activePlan });
        return false;
      }
      Object.assign(live, { state: 'Resolved', resolvedBy: request.actor.user, resolvedAt: at });
      await acts.resolveIncident({ name, request, at });
      publish();
      return true;
    },
    { validator: (_request) => rejectIfResolved() },
  );

  function rejectIfResolved() {
    if (resolved()) {
      throw ApplicationFailure.create({
        type: CONFLICT,
        message: 'Incident already resolved',
        details: [`resolved by ${live.resolvedBy} at ${live.resolvedAt}`],
      });
    }
  }

  const counted = (recorded: number) => {
    signalsSeen += recorded;
    live.correlatedSignals = signalsSeen;
  };
  /**
   * Correlated signals are recorded in arrival order, each exactly once: those signalled one by
   * one (keyed by their index), then the inbox's, a batch at a time, until it is found empty.
   */
  const recordSignals = async () => {
    while (pending.length > 0) {
      const batch = pending.splice(0, 100);
      await acts.recordCorrelatedSignals({
        name,
        signals: batch,
        firstIndex: signalsSeen,
        afterResolution: resolved(),
      });
      counted(batch.length);
    }
    while (inboxQueued) {
      inboxQueued = false;
      for (let recorded = INBOX_BATCH; recorded === INBOX_BATCH;) {
        ({ recorded } = await acts.drainSignalInbox({
          name,
          firstIndex: signalsSeen,
          afterResolution: resolved(),
          limit: INBOX_BATCH,
        }));
        counted(recorded);
      }
    }
  };
  let pumpDone = false;
  let notified: Promise<void> = Promise.resolve();
  const pump = (async () => {
    for (;;) {
      await condition(() => (!triageDrains && (pending.length > 0 || inboxQueued)) || pumpDone);
      if (pending.length === 0 && !inboxQueued) return;
      await recordSignals();
    }
  })();

  if (input.carried?.pastTriage) publish();
  else if (release.has(ONE_STEP_TRIAGE)) {
    // The triage activity writes Analyzing first: the search attributes say so from its start,
    // given by its starter since release-28 (else published now).
    const saidAtStart = workflowInfo().typedSearchAttributes.get(INCIDENT_STATE) === 'Analyzing';
    if (!resolved()) live.state = 'Analyzing';
    if (!(saidAtStart && release.has(STARTED_ANALYZING))) publish();
    const prepareFirstPlan = release.has(TRIAGE_PREPARES_PLAN);
    const triageInput = {
      name,
      at: new Date().toISOString(),
      ...(prepareFirstPlan && { prepareFirstPlan }),
      ...(release.has(ESCALATE_IN_TRIAGE) && { escalate: true }),
    };
    let triaged;
    if (triageDrains) {
      const opened = await analysis.drainAndTriage({ ...triageInput, firstIndex: signalsSeen });
      counted(opened.drained);
      triageDrains = false;
      triaged = opened.triage;
    } else triaged = await analysis.triageIncident(triageInput);
    if (triaged?.escalated) await escalatedByTriage(triaged.escalated);
    else {
      const escalation = triaged ? await remediate(triaged) : undefined;
      if (escalation !== undefined) await escalate(escalation);
    }
  } else {
    publish();
    await moveTo('Analyzing');
    if (!resolved()) await analysis.analyzeIncident({ name });
    if (!resolved()) await acts.matchRunbook({ name });
    if (release.has(REMEDIATION_ENGINE)) {
      const escalation = await remediate();
      if (escalation !== undefined) await escalate(escalation);
    } else if (!resolved()) {
      // Histories from before the remediation engine: no strategy could run, people were paged.
      await escalate(
        'No automatic remediation strategy is available; escalated to on-call',
        'no automatic remediation available',
      );
    }
  }

  /**
   * Escalated (DESIGN §6, §8): the incident's escalation policy pages people through its ladder,
   * a child workflow; the policy `none` ends the incident `Failed` instead. (Histories from before
   * the ladder sent one chat notice: they still do.)
   */
  async function escalate(message: string, why = escalationReason(message)): Promise<void> {
    if (resolved()) return;
    if (!release.has(ESCALATION_LADDER)) {
      await moveTo('Escalated', escalationMove(message, false).event);
      // Not awaited here: a slow chat system must not hold up a person's acknowledge or resolve.
      notified = notify
        .notifyHomeChannel({
          incident: name,
          event: 'escalation',
          text: `${name} escalated to on-call: ${input.severity} incident on ${input.namespace}/${input.resource}, ${why.charAt(0).toLowerCase()}${why.slice(1)}. Reply /ack ${name} to acknowledge.`,
        })
        .then(
          () => undefined,
          () => undefined, // out of tries: the delivery record keeps the error for `gateway status`
        );
      return;
    }
    const choice = await acts.chooseEscalation({ incident: name });
    const move = escalationMove(message, choice.none, why);
    await moveTo(move.state, move.event);
    if (!choice.none) await startLadder(choice.ladder, why);
  }

  /** The triage escalated (or, under the policy `none`, failed) the incident: the run follows. */
  async function escalatedByTriage(escalated: Escalated): Promise<void> {
    if (resolved()) return; // a resolve landed after the triage's move: it stands
    live.state = escalated.none ? 'Failed' : 'Escalated';
    publish();
    if (!escalated.none) await startLadder(escalated.ladder, escalationReason(escalated.message), escalated.level1);
  }

  /** Starts the ladder, a child workflow; `level1`: L1's endpoints, when the triage read them. */
  async function startLadder(timings: Ladder, why: string, level1?: Endpoint[]): Promise<void> {
    if (resolved()) return;
    const told = { acknowledged: live.acknowledged, snoozeUntil: live.snoozeUntil };
    await startChild(escalationWorkflow, {
      workflowId: ladderId,
      args: [
        {
          incident: name,
          namespace: input.namespace,
          ladder: timings,
          reason: why,
          acknowledged: told.acknowledged,
          ...(told.snoozeUntil && { snoozeUntil: told.snoozeUntil }),
          ...(level1 && { level1 }),
        },
      ],
      // It finishes its last deliveries (the resolve to PagerDuty) after the incident completes.
      parentClosePolicy: ParentClosePolicy.ABANDON,
      typedSearchAttributes: [
        { key: ESCALATION_STATE, value: 'starting' },
        { key: INCIDENT, value: name },
        { key: NAMESPACE, value: input.namespace },
      ],
    });
    ladder = true;
    // What changed while the child was starting is told now.
    if (live.acknowledged && !told.acknowledged)
      await tellLadder(ladderAcknowledgedSignal, { by: live.acknowledgedBy ?? '', at: live.acknowledgedAt ?? '' });
    if (live.snoozeUntil && live.snoozeUntil !== told.snoozeUntil)
      await tellLadder(ladderSnoozedSignal, { until: live.snoozeUntil });
  }

  /**
   * The remediation engine (DESIGN §8): one child workflow per attempt, strategy by strategy,
   * until one is verified (the incident is resolved by `system`) or none is left, the attempts
   * are used up, or a person said no (the escalation message is returned). A resolve by a
   * person cancels the running plan, which stops after its step in flight.
   */
  async function remediate(triaged?: RemediationOptions & { firstPlan?: PreparedPlan }): Promise<string | undefined> {
    if (resolved()) {
      if (triaged?.firstPlan) await abandon(triaged.firstPlan);
      return undefined;
    }
    // One-step triage gathered the options (and made the first plan, for the strategy chosen
    // here from them), and the move to Remediating rides with the plan.
    const { firstPlan, ...options }: RemediationOptions & { firstPlan?: PreparedPlan } =
      triaged ?? (await acts.remediationOptions({ name }));
    const tried: Strategy[] = [];
    for (let attempt = 1; !resolved(); attempt++) {
      const giveUp = giveUpReason(options, tried);
      if (giveUp) return giveUp;
      const strategy = chooseStrategy(options, tried)!;
      tried.push(strategy);
      const remediating = live.state !== 'Remediating';
      if (remediating && !triaged) await moveTo('Remediating');
      const plan =
        attempt === 1 && firstPlan
          ? firstPlan
          : await CancellationScope.nonCancellable(() =>
              acts.preparePlan({ name, attempt, strategy, ...(remediating && triaged && { remediating }) }),
            );
      if (remediating && triaged && !resolved()) {
        live.state = 'Remediating';
        if (!release.has(PLAN_IN_RUN)) publish(); // else with the plan's first state
      }
      if (resolved()) {
        await abandon(plan);
        return undefined;
      }
      const outcome = await runPlan(plan);
      if (resolved()) return undefined;
      if (outcome.state === 'Completed') {
        await resolveBySystem(plan, outcome);
        return undefined;
      }
      if (outcome.sourceResolved && sourceResolution) {
        await resolveAs(sourceResolution);
        return undefined;
      }
      if (outcome.approval)
        return `Remediation plan ${plan.name} was not approved (${outcome.result}); escalated to on-call`;
    }
    return undefined;
  }

  /** Resolved while the plan was being made: it never starts, and its record says so. */
  async function abandon(plan: PreparedPlan): Promise<void> {
    await CancellationScope.nonCancellable(() =>
      acts.finishPlan({ plan: plan.name, state: 'Failed', result: PLAN_ABANDONED_RESULT }),
    );
  }

  /**
   * Runs the attempt: in this run since release-32, before as a child workflow; cancelled (and
   * awaited) when a person resolves meanwhile. In the run, a plan costs a burst of remediations
   * a quarter fewer history events and workflow tasks, and its signals become variables
   * (docs/benchmarks.md, "Thirty-third pass").
   */
  async function runPlan(plan: PreparedPlan): Promise<RemediationOutcome> {
    const scope = new CancellationScope();
    activePlan = plan.name;
    // Its first move said as it starts: one visibility write fewer (the plan sees it and skips its own).
    const first = startsExecuting(plan) && release.has(PLAN_STARTS_EXECUTING) ? 'Executing' : 'Pending';
    if (release.has(PLAN_IN_RUN)) {
      const inbox: PlanInbox = { joined: 0, sourceCleared: false };
      planInbox = inbox;
      publish(first);
      const said = (state: string) => upsertSearchAttributes([{ key: REMEDIATION_STATE, value: state }]);
      const sayOrKeep = (state: PlanState) => (FINAL_PLAN_STATES.includes(state) ? (planEnd = state) : said(state));
      const run = { release, inbox, publish: sayOrKeep, published: first, inIncident: true };
      const outcome = await settle(
        plan,
        scope,
        scope.run(() => runRemediation(plan, run)),
      );
      // Only a verified plan's end is said with the resolve that follows at once; any other now.
      if (planEnd && (outcome.state !== 'Completed' || resolved())) {
        said(planEnd);
        planEnd = undefined;
      }
      return outcome;
    }
    const options = {
      workflowId: plan.name,
      args: [{ plan }] as [RemediationWorkflowInput],
      cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
      typedSearchAttributes: [
        { key: REMEDIATION_STATE, value: first },
        { key: INCIDENT, value: name },
        { key: NAMESPACE, value: input.namespace },
        { key: RESOURCE, value: input.resource },
      ],
    };
    const child = release.has(TELL_STARTED_PLAN)
      ? scope.run(async () => {
          planStarting = true;
          const started = await startChild(remediationWorkflow, options);
          planStarting = false;
          // All at once, in the order told: no handler can send one in between.
          await Promise.all(owedToPlan.splice(0).map((tell) => tell(started).catch(() => undefined)));
          return started.result();
        })
      : scope.run(() => executeChild(remediationWorkflow, options));
    return settle(plan, scope, child);
  }

  /** The attempt's outcome: a failed one when it was cancelled, or failed as a workflow. */
  async function settle(
    plan: PreparedPlan,
    scope: CancellationScope,
    child: Promise<RemediationOutcome>,
  ): Promise<RemediationOutcome> {
    // (Rejected only if this workflow itself is cancelled, which cancels the scope anyway.)
    void condition(resolved).then(
      () => scope.cancel(),
      () => undefined,
    );
    try {
      return await child;
    } catch (err) {
      if (isCancellation(err) || resolved()) return { state: 'Failed', result: 'cancelled: the incident was resolved' };
      // A plan that failed as a workflow (a bug, not a failed fix) counts as a failed attempt; its
      // record is closed here (a no-op when the plan closed it itself).
      const result = `plan workflow failed: ${(err as Error).message}`;
      await CancellationScope.nonCancellable(() => acts.finishPlan({ plan: plan.name, state: 'Failed', result }));
      return { state: 'Failed', result };
    } finally {
      activePlan = undefined;
      planInbox = undefined;
      planStarting = false;
      owedToPlan.length = 0;
    }
  }

  /** A verified fix resolves the incident: resolver `system`, resolution naming the plan. */
  function resolveBySystem(plan: PreparedPlan, outcome: RemediationOutcome): Promise<void> {
    return resolveAs({
      resolution: `Remediated automatically by plan ${plan.name} (${plan.strategy}): ${outcome.result}`,
      actor: SYSTEM_ACTOR,
      atSource: false,
      automatic: true,
    });
  }

  /**
   * Resolves from the workflow itself (a verified plan, or the source's deferred resolution).
   * Since release-30 the close writes it, first: an activity and a workflow task fewer for every
   * incident automation fixed (docs/benchmarks.md, "Thirtieth pass").
   */
  async function resolveAs(request: ResolveRequest): Promise<void> {
    if (resolved()) return;
    const at = new Date().toISOString();
    Object.assign(live, { state: 'Resolved', resolvedBy: request.actor.user, resolvedAt: at });
    if (release.has(RESOLVE_IN_CLOSE)) closingResolve = { name, request, at };
    else await acts.resolveIncident({ name, request, at });
    publish();
  }

  // Wait for a person (or the source) to resolve; keep history bounded while we wait.
  const continueDue = release.has(SPREAD_CONTINUE_AS_NEW)
    ? continueAsNewDue()
    : () => workflowInfo().continueAsNewSuggested;
  await condition(() => resolved() || continueDue());
  if (!resolved()) {
    pumpDone = true;
    await pump;
    await notified;
    await condition(allHandlersFinished);
    await continueAsNew<typeof incidentWorkflow>({
      ...input,
      carried: { live, pending, signalsSeen, pastTriage: true, ...(ladder && { ladder }) },
    });
  }

  pumpDone = true;
  await pump;
  await notified;
  await tellLadder(ladderResolvedSignal);
  if (release.has(ONE_STEP_CLOSE)) {
    // One activity drains the inbox, writes the postmortem and drains it again.
    inboxQueued = false;
    await recordSignals(); // those signalled one by one (histories from before the inbox)
    await condition(allHandlersFinished);
    counted((await analysis.closeIncident({ name, firstIndex: signalsSeen, resolve: closingResolve })).recorded);
    await recordSignals(); // told of more while it ran
    return;
  }
  // Runs from before the one-step close that took release-30's resolve as they went on.
  if (closingResolve) await acts.resolveIncident(closingResolve);
  // Whatever was queued up to the resolve is recorded before the postmortem is written.
  if (release.has(SIGNAL_INBOX)) inboxQueued = true;
  await recordSignals();
  await condition(allHandlersFinished);
  // The postmortem is one activity: called here since this patch, not by a child workflow of its own.
  if (release.has(POSTMORTEM_IN_RUN)) await generatePostmortem({ incident: name });
  else await executeChild(postmortemWorkflow, { workflowId: `${name}-postmortem`, args: [{ incident: name }] });
  // Signals that arrived while the postmortem was written are recorded too: an acknowledged alert
  // is never dropped. (Patched: runs recorded before this change completed without this step.)
  if (release.has(RECORD_SIGNALS_AFTER_POSTMORTEM)) {
    if (release.has(SIGNAL_INBOX)) inboxQueued = true;
    await recordSignals();
  }
}

/**
 * Runs before this change triaged in five activities (Analyzing, analysis, runbook match, options,
 * Remediating); newer ones in one, with Remediating written by the plan's preparation.
 */
const ONE_STEP_TRIAGE = 'one-step-triage';
/** Runs before this change prepared the first plan in an activity of its own; newer ones in the triage. */
const TRIAGE_PREPARES_PLAN = 'triage-prepares-plan';
/** Runs before this change closed in three activities (drain, postmortem, drain); newer ones in one. */
const ONE_STEP_CLOSE = 'one-step-close';
/** Runs before this change had no signal inbox: they never drain one unasked. */
const SIGNAL_INBOX = 'signal-inbox';

const RECORD_SIGNALS_AFTER_POSTMORTEM = 'record-signals-after-postmortem';
/** Runs before this change wrote the postmortem in a child workflow (`<incident>-postmortem`). */
const POSTMORTEM_IN_RUN = 'postmortem-in-run';
/** Runs before this change continued as new as soon as the server suggested it; newer ones spread it. */
const SPREAD_CONTINUE_AS_NEW = 'spread-continue-as-new';
/** Runs before this change escalated right after the runbook match; newer ones remediate first. */
const REMEDIATION_ENGINE = 'remediation-engine';
/** Runs before this change sent one chat notice on escalation; newer ones run the policy's ladder. */
const ESCALATION_LADDER = 'escalation-ladder';
