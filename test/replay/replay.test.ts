import { readdirSync, readFileSync } from 'fs';
import path from 'path';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { WORKFLOW_BUNDLER_OPTIONS } from '../../worker/workflow-bundle';
import {
  incidentStates,
  localActivityMarkers,
  planRecordActivities,
  remediationStates,
  scheduledActivities as activities,
} from '../harness/history';
import {
  LOCAL_HTTP_STEPS,
  PLAN_IN_RUN,
  PLAN_MADE_EXECUTING,
  PLAN_RECORDS_AS_ACTIVITIES,
  RELEASE_14,
  RELEASE_19,
  RELEASE_24,
  RELEASE_25,
  RELEASE_28,
  RELEASE_30,
  RELEASE_32,
  RELEASE_35,
  RESOLVE_IN_CLOSE,
  STARTED_ANALYZING,
  TRIAGE_DRAINS_INBOX,
  VERIFYING_WITH_LAST_STEP,
} from '../../workflows/release';

/**
 * Incidents and chats in flight must survive upgrades: every recorded history (test/replay/
 * histories, made by record.ts with an earlier release) must replay on today's workflow code
 * without a non-determinism error. A workflow change that alters its commands needs `patched()`
 * or a new workflow type; this test is what catches one that forgot.
 */
const dir = path.join(__dirname, 'histories');
const files = readdirSync(dir).filter((f) => f.endsWith('.pb'));
const load = (f: string) => temporal.api.history.v1.History.decode(readFileSync(path.join(dir, f)));
/** The patches a run took (`patched()` markers), in order. */
const patchIds = (events: temporal.api.history.v1.IHistoryEvent[]) =>
  events.flatMap((e) => {
    const data = e.markerRecordedEventAttributes?.details?.['patch-data']?.payloads?.[0]?.data;
    return data ? [(JSON.parse(Buffer.from(data).toString()) as { id: string }).id] : [];
  });

/** The releases, newest first (workflows/release.ts). */
const RELEASES = [RELEASE_35, RELEASE_32, RELEASE_30, RELEASE_28, RELEASE_25, RELEASE_24, RELEASE_19, RELEASE_14];
/**
 * Whether a run took `patch`: its own marker, or that of the release it started on, which stands
 * for every patch but those of the releases after it.
 */
const took = (events: temporal.api.history.v1.IHistoryEvent[], patch: string) => {
  const ids = patchIds(events);
  if (ids.includes(patch)) return true;
  const started = RELEASES.findIndex((r) => ids.includes(r.name));
  return started >= 0 && !RELEASES.slice(0, started).some((later) => later.patches.includes(patch));
};

/** Whether a run started a child workflow of `type`. */
const startedChild = (events: temporal.api.history.v1.IHistoryEvent[], type: string) =>
  events.some((e) => e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowType?.name === type);
/** The histories of runs of `type` that completed. */
const completedRuns = (type: string) =>
  files
    .map((f) => load(f).events)
    .filter(
      (events) =>
        events[0].workflowExecutionStartedEventAttributes!.workflowType!.name === type &&
        events.at(-1)!.workflowExecutionCompletedEventAttributes,
    );

describe('replay of recorded histories', () => {
  // Every long-lived type. The reconciler's runs last seconds and the schedule starts a fresh
  // one every minute, so none is in flight across an upgrade (and the time-skipping server
  // that records these cannot list workflows, which its pass needs).
  it('has histories of every long-lived workflow type to replay', () => {
    const types = new Set(
      files.map((f) => load(f).events[0].workflowExecutionStartedEventAttributes!.workflowType!.name),
    );
    expect([...types].sort()).toEqual([
      'agentTurnWorkflow',
      'approvalWorkflow',
      'auditExportWorkflow',
      'chatWorkflow',
      'clusterHealthWorkflow',
      'clusterWatchWorkflow',
      'escalationWorkflow',
      'incidentWorkflow',
      'postmortemWorkflow',
      'remediationWorkflow',
    ]);
  });

  it('has chat histories of both hand-over shapes: one message per signal, and batches', () => {
    const signals = new Set(
      files.flatMap((f) => load(f).events.flatMap((e) => e.workflowExecutionSignaledEventAttributes?.signalName ?? [])),
    );
    expect([...signals]).toEqual(expect.arrayContaining(['chatMessage', 'chatMessages']));
  });

  it('has incident histories of both ways signals join: one per signal, and told of the inbox', () => {
    const signals = new Set(
      files.flatMap((f) => load(f).events.flatMap((e) => e.workflowExecutionSignaledEventAttributes?.signalName ?? [])),
    );
    expect([...signals]).toEqual(expect.arrayContaining(['correlate', 'signalsQueued']));
  });

  it('has completed incident histories of the three ways the postmortem is written: a child workflow, in the run, in the close', () => {
    const completed = completedRuns('incidentWorkflow');
    const byChild = completed.filter((events) => startedChild(events, 'postmortemWorkflow'));
    const inRun = completed.filter((events) => patchIds(events).includes('postmortem-in-run'));
    const inClose = completed.filter((events) => took(events, 'one-step-close'));
    expect(byChild.length).toBeGreaterThan(0);
    expect(inRun.length).toBeGreaterThan(0);
    expect(inClose.length).toBeGreaterThan(0);
    expect(byChild.length + inRun.length + inClose.length).toBe(completed.length);
  });

  it('has remediated incident histories of the three triages: an activity a step, one activity, one that makes the first plan', () => {
    const remediated = files.map((f) => load(f).events).filter((events) => startedChild(events, 'remediationWorkflow'));
    const stepwise = remediated.filter((events) => activities(events).includes('matchRunbook'));
    const oneStep = remediated.filter((events) => took(events, 'one-step-triage'));
    const withPlan = oneStep.filter((events) => took(events, 'triage-prepares-plan'));
    expect(stepwise.length).toBeGreaterThan(0);
    expect(oneStep.length).toBeGreaterThan(withPlan.length);
    expect(withPlan.length).toBeGreaterThan(0);
    for (const events of oneStep)
      expect(activities(events)).not.toEqual(expect.arrayContaining(['analyzeIncident', 'matchRunbook']));
    // The first plan starts with no preparePlan before it.
    for (const events of withPlan) {
      const child = events.findIndex((e) => e.startChildWorkflowExecutionInitiatedEventAttributes);
      expect(activities(events.slice(0, child))).not.toContain('preparePlan');
    }
  });

  it('has remediated incident histories of both resolves by a verified plan: an activity of its own, and in the close', () => {
    const remediated = completedRuns('incidentWorkflow').filter(
      (events) => startedChild(events, 'remediationWorkflow') && activities(events).includes('closeIncident'),
    );
    const inClose = remediated.filter((events) => took(events, RESOLVE_IN_CLOSE));
    expect(inClose.length).toBeGreaterThan(0);
    expect(remediated.length).toBeGreaterThan(inClose.length);
    /** The `resolve` the close was given, if any. */
    const closeResolve = (events: temporal.api.history.v1.IHistoryEvent[]) => {
      const close = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'closeIncident');
      const data = close!.activityTaskScheduledEventAttributes!.input!.payloads![0].data!;
      return (JSON.parse(Buffer.from(data).toString()) as { resolve?: { request: { automatic: boolean } } }).resolve;
    };
    for (const events of inClose) {
      expect(activities(events)).not.toContain('resolveIncident');
      expect(closeResolve(events)).toMatchObject({ request: { automatic: true } });
    }
    for (const events of remediated.filter((e) => !took(e, RESOLVE_IN_CLOSE))) {
      expect(activities(events).slice(-2)).toEqual(['resolveIncident', 'closeIncident']);
      expect(closeResolve(events)).toBeUndefined();
    }
  });

  it('has remediated incident histories of both plans: a child workflow, and in the run, beside handlers', () => {
    const incidents = files
      .map((f) => load(f).events)
      .filter((events) => events[0].workflowExecutionStartedEventAttributes!.workflowType!.name === 'incidentWorkflow');
    const byChild = incidents.filter((events) => startedChild(events, 'remediationWorkflow'));
    const inRun = incidents.filter((events) => remediationStates(events).upserted.length > 0);
    expect(byChild.length).toBeGreaterThan(0);
    expect(inRun.length).toBeGreaterThan(0);
    for (const events of inRun) {
      expect(took(events, PLAN_IN_RUN)).toBe(true);
      expect(startedChild(events, 'remediationWorkflow')).toBe(false);
      // It is told by variables, not signals.
      expect(events.some((e) => e.signalExternalWorkflowExecutionInitiatedEventAttributes)).toBe(false);
    }
    for (const events of byChild) expect(took(events, PLAN_IN_RUN)).toBe(false);
    // One waited for its approval while an operator acknowledged and a new signal joined: their
    // handlers ran beside the plan's records.
    const busy = inRun.filter(
      (events) =>
        events.some((e) => e.workflowExecutionUpdateAcceptedEventAttributes) &&
        events.some((e) => e.workflowExecutionSignaledEventAttributes),
    );
    expect(busy.length).toBeGreaterThan(0);
  });

  it('has plan-in-run histories of both records: local activities (release-32), activities (release-35)', () => {
    const inRun = files
      .map((f) => load(f).events)
      .filter(
        (events) =>
          events[0].workflowExecutionStartedEventAttributes!.workflowType!.name === 'incidentWorkflow' &&
          remediationStates(events).upserted.length > 0,
      );
    const asActivities = inRun.filter((events) => took(events, PLAN_RECORDS_AS_ACTIVITIES));
    const local = inRun.filter((events) => !took(events, PLAN_RECORDS_AS_ACTIVITIES));
    expect(asActivities.length).toBeGreaterThan(0);
    expect(local.length).toBeGreaterThan(0);
    for (const events of local) {
      expect(localActivityMarkers(events).length).toBeGreaterThan(0);
      expect(planRecordActivities(events)).toEqual([]);
    }
    for (const events of asActivities) {
      expect(localActivityMarkers(events)).toEqual([]);
      expect(planRecordActivities(events).length).toBeGreaterThan(0);
    }
  });

  it('has completed plan histories of both bookkeepings: activities, and local activities', () => {
    const plans = completedRuns('remediationWorkflow');
    const local = plans.filter((events) => took(events, 'local-plan-bookkeeping'));
    expect(local.length).toBeGreaterThan(0);
    expect(plans.length).toBeGreaterThan(local.length);
    for (const events of local) expect(activities(events)).not.toContain('finishPlan');
  });

  it('has incident and plan histories started on each release: its one marker, none of an earlier patch', () => {
    for (const [type, release] of [
      ['incidentWorkflow', RELEASE_14],
      ['incidentWorkflow', RELEASE_19],
      ['incidentWorkflow', RELEASE_24],
      ['incidentWorkflow', RELEASE_25],
      ['incidentWorkflow', RELEASE_28],
      ['incidentWorkflow', RELEASE_30],
      ['incidentWorkflow', RELEASE_32],
      ['incidentWorkflow', RELEASE_35],
      ['remediationWorkflow', RELEASE_14],
      ['remediationWorkflow', RELEASE_24],
      ['remediationWorkflow', RELEASE_28],
    ] as const) {
      const released = completedRuns(type).filter((events) => patchIds(events).includes(release.name));
      expect(released.length).toBeGreaterThan(0);
      for (const events of released) expect(patchIds(events)).toEqual([release.name]);
    }
  });

  it('has incident histories of both first looks into the inbox: an activity of its own, and in the triage', () => {
    const triaged = files
      .map((f) => load(f).events)
      .filter((events) => activities(events).some((a) => a === 'triageIncident' || a === 'drainAndTriage'));
    const inTriage = triaged.filter((events) => took(events, TRIAGE_DRAINS_INBOX));
    expect(inTriage.length).toBeGreaterThan(0);
    expect(triaged.length).toBeGreaterThan(inTriage.length);
    // Nothing drains before the triage has answered.
    for (const events of inTriage) expect(activities(events)[0]).toBe('drainAndTriage');
  });

  it('has plan histories of the three HttpRequest steps: an activity, a local activity, and an activity of the incident', () => {
    const withHttp = files
      .map((f) => load(f).events)
      .filter(
        (events) =>
          activities(events).includes('runHttpPlanStep') ||
          localActivityMarkers(events).some((m) => m.activity_type === 'runHttpPlanStep'),
      );
    const isPlan = (events: temporal.api.history.v1.IHistoryEvent[]) =>
      events[0].workflowExecutionStartedEventAttributes!.workflowType!.name === 'remediationWorkflow';
    const plans = withHttp.filter(isPlan);
    const local = plans.filter((events) => took(events, LOCAL_HTTP_STEPS));
    expect(local.length).toBeGreaterThan(0);
    expect(plans.length).toBeGreaterThan(local.length);
    for (const events of local) expect(activities(events)).not.toContain('runHttpPlanStep');
    // In the incident's run (release-32) the step is an activity again: it must not hold up the
    // incident's workflow task while the service answers.
    const inRun = withHttp.filter((events) => !isPlan(events));
    expect(inRun.length).toBeGreaterThan(0);
    for (const events of inRun) {
      expect(took(events, PLAN_IN_RUN)).toBe(true);
      expect(activities(events)).toContain('runHttpPlanStep');
      expect(localActivityMarkers(events).map((m) => m.activity_type)).not.toContain('runHttpPlanStep');
    }
  });

  it('has plan histories of both starts: Pending, and Executing when that is its first move (not upserted again)', () => {
    const plans = files
      .map((f) => load(f).events)
      .filter(
        (events) => events[0].workflowExecutionStartedEventAttributes!.workflowType!.name === 'remediationWorkflow',
      )
      .map(remediationStates);
    const executing = plans.filter((states) => states.started === 'Executing');
    expect(executing.length).toBeGreaterThan(0);
    expect(plans.filter((states) => states.started === 'Pending').length).toBeGreaterThan(0);
    for (const states of executing) expect(states.upserted).not.toContain('Executing');
  });

  it('has completed plan histories of both bookkeepings of its moves: a write each, and with its record and last step', () => {
    // Runbook plans that ran their steps with local bookkeeping (the shape release-28 changed).
    const plans = completedRuns('remediationWorkflow').filter(
      (events) => took(events, 'local-plan-bookkeeping') && remediationStates(events).upserted.includes('Verifying'),
    );
    const moves = (events: temporal.api.history.v1.IHistoryEvent[]) =>
      localActivityMarkers(events).filter((m) => m.activity_type === 'setPlanState').length;
    const fewer = plans.filter((events) => took(events, VERIFYING_WITH_LAST_STEP));
    expect(fewer.length).toBeGreaterThan(0);
    expect(plans.length).toBeGreaterThan(fewer.length);
    for (const events of plans.filter((e) => !took(e, VERIFYING_WITH_LAST_STEP))) expect(moves(events)).toBe(2);
    for (const events of fewer) {
      expect(took(events, PLAN_MADE_EXECUTING)).toBe(true);
      expect(moves(events)).toBe(0); // Executing made with the record, Verifying with the last step
    }
  });

  it('has new incident histories of both first tasks: Analyzing upserted, and said by its start', () => {
    const triaged = files
      .map((f) => load(f).events)
      .filter((events) => activities(events)[0] === 'drainAndTriage')
      .map((events) => ({ events, states: incidentStates(events) }));
    const saidAtStart = triaged.filter(({ events }) => took(events, STARTED_ANALYZING));
    expect(saidAtStart.length).toBeGreaterThan(0);
    expect(triaged.length).toBeGreaterThan(saidAtStart.length);
    for (const { states } of saidAtStart) {
      expect(states.started).toBe('Analyzing');
      expect(states.upserted[0]).not.toBe('Analyzing');
    }
    for (const { states } of triaged.filter(({ events }) => !took(events, STARTED_ANALYZING))) {
      expect(states.started).toBe('Detected');
      expect(states.upserted[0]).toBe('Analyzing');
    }
  });

  it('has escalated incident histories of both escalations: activities of their own, and in the triage', () => {
    const escalated = files.map((f) => load(f).events).filter((events) => startedChild(events, 'escalationWorkflow'));
    const byTriage = escalated.filter((events) => took(events, 'escalate-in-triage'));
    expect(byTriage.length).toBeGreaterThan(0);
    expect(escalated.length).toBeGreaterThan(byTriage.length);
    for (const events of byTriage)
      expect(activities(events)).not.toEqual(expect.arrayContaining(['chooseEscalation', 'setIncidentState']));
    // Their ladders started with L1's endpoints in hand: no read of the window or the endpoints first.
    const ladders = files
      .map((f) => load(f).events)
      .filter(
        (events) => events[0].workflowExecutionStartedEventAttributes!.workflowType!.name === 'escalationWorkflow',
      );
    const given = ladders.filter((events) => {
      const data = events[0].workflowExecutionStartedEventAttributes!.input!.payloads![0].data!;
      return 'level1' in (JSON.parse(Buffer.from(data).toString()) as object);
    });
    expect(given.length).toBeGreaterThan(0);
    expect(ladders.length).toBeGreaterThan(given.length);
    for (const events of given) {
      const clock = events.findIndex((e) => e.timerStartedEventAttributes); // L2's
      const l1 = clock < 0 ? events : events.slice(0, clock);
      expect(activities(l1)).not.toContain('maintenanceWindow');
      expect(activities(l1)).not.toContain('levelEndpoints');
    }
  });

  it('replays every history on the current workflow code', async () => {
    const histories = files.map((f) => ({
      workflowId: f.replace(/\.pb$/, ''),
      history: load(f),
    }));
    const failures: string[] = [];
    for await (const result of Worker.runReplayHistories(
      {
        workflowsPath: require.resolve('../../workflows'),
        bundlerOptions: WORKFLOW_BUNDLER_OPTIONS,
        replayName: 'foghorn-replay',
      },
      histories,
    )) {
      if (result.error) failures.push(`${result.workflowId}: ${result.error.message}`);
    }
    expect(failures).toEqual([]);
    expect(files.length).toBeGreaterThanOrEqual(5);
  }, 120_000);
});
