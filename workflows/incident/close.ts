import { allHandlersFinished, condition, continueAsNew } from '@temporalio/workflow';
import { continueAsNewDue } from '../continue-as-new';
import { ladderResolvedSignal } from '../escalation-messages';
import { stages } from './proxies';
import { tellLadder } from './handlers';
import { recordSignals, type SignalRecorder } from './signals';
import { countRecorded, isResolved, type IncidentRun, type IncidentWorkflowInput } from './state';

/**
 * Waits for a person (or the source) to resolve the incident. History stays bounded while it
 * waits: the run continues as new, carrying its state, when the server suggests it (spread by
 * continueAsNewDue so a storm's incidents do not all continue at once).
 */
export async function awaitResolution(run: IncidentRun, recorder: SignalRecorder): Promise<void> {
  const continueDue = continueAsNewDue();
  await condition(() => isResolved(run) || continueDue());
  if (isResolved(run)) return;
  await recorder.finish();
  await condition(allHandlersFinished);
  const { live, pending, signalsRecorded, ladderStarted } = run;
  await continueAsNew<(input: IncidentWorkflowInput) => Promise<void>>({
    ...run.input,
    carried: { live, pending, signalsRecorded, ...(ladderStarted && { ladder: true }) },
  });
}

/**
 * The close of a resolved incident: the ladder is told, the signals signalled one by one are
 * recorded, then one activity writes the workflow's own resolve (if it decided one), drains the
 * inbox, writes the postmortem and drains it again; what was told while it ran is recorded last.
 * An acknowledged alert is never dropped.
 */
export async function close(run: IncidentRun, recorder: SignalRecorder): Promise<void> {
  await recorder.finish();
  await tellLadder(run, ladderResolvedSignal);
  run.inboxQueued = false; // the close drains the inbox itself
  await recordSignals(run);
  await condition(allHandlersFinished);
  const closed = await stages.closeIncident({
    name: run.name,
    firstIndex: run.signalsRecorded,
    resolve: run.closingResolve,
  });
  countRecorded(run, closed.recorded);
  await recordSignals(run);
}
