import { condition } from '@temporalio/workflow';
import { INBOX_BATCH } from '../../domain/incident-requests';
import { incidentStore } from './proxies';
import { countRecorded, isResolved, type IncidentRun } from './state';

/** Records the correlated signals that join the incident, in the background of the run. */
export interface SignalRecorder {
  /** Records what is left, then ends the recorder. */
  finish(): Promise<void>;
}

/**
 * Correlated signals are recorded in arrival order, each exactly once: those signalled one by one
 * (keyed by their index), then the inbox's (store/signal-inbox.ts), a batch at a time, until it
 * is found empty.
 */
export async function recordSignals(run: IncidentRun): Promise<void> {
  const { name, pending } = run;
  while (pending.length > 0) {
    const batch = pending.splice(0, 100);
    await incidentStore.recordCorrelatedSignals({
      name,
      signals: batch,
      firstIndex: run.signalsRecorded,
      afterResolution: isResolved(run),
    });
    countRecorded(run, batch.length);
  }
  while (run.inboxQueued) {
    run.inboxQueued = false;
    for (let recorded = INBOX_BATCH; recorded === INBOX_BATCH;) {
      ({ recorded } = await incidentStore.drainSignalInbox({
        name,
        firstIndex: run.signalsRecorded,
        afterResolution: isResolved(run),
        limit: INBOX_BATCH,
      }));
      countRecorded(run, recorded);
    }
  }
}

/** Starts recording signals as they are announced; the triage's own drain goes first. */
export function startSignalRecorder(run: IncidentRun): SignalRecorder {
  let finishing = false;
  const waiting = () => run.pending.length > 0 || run.inboxQueued;
  const recording = (async () => {
    for (;;) {
      await condition(() => (!run.triageRecordsInbox && waiting()) || finishing);
      if (!waiting()) return;
      await recordSignals(run);
    }
  })();
  return {
    finish: () => {
      finishing = true;
      return recording;
    },
  };
}
