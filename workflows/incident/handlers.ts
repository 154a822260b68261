import { ApplicationFailure, getExternalWorkflowHandle, setHandler, type SignalDefinition } from '@temporalio/workflow';
import { CONFLICT, INVALID, SNOOZE_MAX_MS } from '../../domain/incident-requests';
import { ladderAcknowledgedSignal, ladderSnoozedSignal } from '../escalation-messages';
import {
  acknowledgeUpdate,
  correlateSignal,
  liveStateQuery,
  resolveUpdate,
  signalsQueuedSignal,
  snoozeUpdate,
} from '../incident-messages';
import { incidentStore } from './proxies';
import { isResolved, ladderId, publish, type IncidentRun } from './state';

/**
 * The incident's messages. Acknowledge, snooze and resolve are updates: their validators answer
 * conflicts synchronously (the API's 409s), and their handlers persist before they return, so the
 * API reads its own writes. A new firing signal fails the verification of the plan running now.
 */
export function installHandlers(run: IncidentRun): void {
  const { name, live } = run;
  const signalJoined = () => {
    if (run.plan) run.plan.inbox.joined++;
  };
  setHandler(liveStateQuery, () => live);
  setHandler(correlateSignal, (signal) => {
    run.pending.push(signal);
    signalJoined();
  });
  setHandler(signalsQueuedSignal, () => {
    run.inboxQueued = true;
    signalJoined();
  });

  setHandler(
    acknowledgeUpdate,
    async (request) => {
      const at = new Date().toISOString();
      Object.assign(live, { acknowledged: true, acknowledgedBy: request.acknowledgedBy, acknowledgedAt: at });
      await incidentStore.acknowledgeIncident({ name, request, at });
      await tellLadder(run, ladderAcknowledgedSignal, { by: request.acknowledgedBy, at });
    },
    {
      validator: (_request) => {
        rejectIfResolved(run);
        if (live.acknowledged)
          throw ApplicationFailure.create({
            type: CONFLICT,
            message: 'Incident already acknowledged',
            details: [`acknowledged by ${live.acknowledgedBy} at ${live.acknowledgedAt}`],
          });
      },
    },
  );

  setHandler(
    snoozeUpdate,
    async (request) => {
      const at = new Date();
      live.snoozeUntil = new Date(at.getTime() + request.durationMs).toISOString();
      await incidentStore.snoozeIncident({ name, request, at: at.toISOString() });
      await tellLadder(run, ladderSnoozedSignal, { until: live.snoozeUntil });
    },
    {
      validator: (request) => {
        rejectIfResolved(run);
        if (!(request.durationMs > 0 && request.durationMs <= SNOOZE_MAX_MS))
          throw ApplicationFailure.create({
            type: INVALID,
            message: 'Invalid duration',
            details: [`${request.duration} is not between 0s and 24h`],
          });
      },
    },
  );

  setHandler(
    resolveUpdate,
    async (request) => {
      const at = new Date().toISOString();
      if (request.atSource && live.state === 'Escalated') {
        // An escalated incident is in human hands: the source clearing does not close it.
        await incidentStore.noteSourceResolution({ name, at });
        return false;
      }
      if (request.atSource && run.plan) {
        // A fix is running or being verified: the pods it replaced going away clears the alert,
        // which is what verification checks; the plan's verdict resolves (or not) the incident.
        // A plan still waiting for its approval ends, and the source's resolution then stands.
        run.sourceResolution = request;
        run.plan.inbox.sourceCleared = true;
        await incidentStore.noteSourceResolution({ name, at, plan: run.plan.name });
        return false;
      }
      Object.assign(live, { state: 'Resolved', resolvedBy: request.actor.user, resolvedAt: at });
      await incidentStore.resolveIncident({ name, request, at });
      publish(run);
      return true;
    },
    { validator: (_request) => rejectIfResolved(run) },
  );
}

function rejectIfResolved(run: IncidentRun): void {
  if (isResolved(run))
    throw ApplicationFailure.create({
      type: CONFLICT,
      message: 'Incident already resolved',
      details: [`resolved by ${run.live.resolvedBy} at ${run.live.resolvedAt}`],
    });
}

/** Tells the ladder, once it runs; it may have ended already (nothing to tell then). */
export function tellLadder<Args extends unknown[]>(
  run: IncidentRun,
  signal: SignalDefinition<Args>,
  ...args: Args
): Promise<void> {
  if (!run.ladderStarted) return Promise.resolve();
  return getExternalWorkflowHandle(ladderId(run))
    .signal(signal, ...args)
    .catch(() => undefined);
}
