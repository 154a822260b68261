import { condition } from '@temporalio/workflow';
import { notes } from '../notify';
import { muted, publish, stopped, timeToContinue, type LadderRun } from './state';

/** Re-check an active maintenance window this often: it may be edited or removed meanwhile. */
const MAINTENANCE_RECHECK_MS = 5 * 60_000;

export async function holdWhileSnoozed(run: LadderRun, stop = () => stopped(run)): Promise<void> {
  while (muted(run) && !stop()) {
    publish(run, 'snoozed');
    const until = run.snoozeUntil;
    await condition(() => stop() || run.snoozeUntil !== until, Math.max(1, until - Date.now()));
  }
}

/**
 * Before a rung: not while snoozed, not during a maintenance window of the namespace (said once
 * per window). `stop` ends the hold: an acknowledge or resolve for later rungs, only a resolve
 * for L1 (which an earlier acknowledge does not cancel, but a snooze still delays).
 */
export async function holdWhileQuiet(run: LadderRun, stop = () => stopped(run)): Promise<void> {
  const { input } = run;
  for (;;) {
    if (stop()) return;
    if (muted(run)) {
      await holdWhileSnoozed(run, stop);
      continue;
    }
    const window = await notes.maintenanceWindow({ namespace: input.namespace });
    if (stop()) return;
    if (muted(run)) continue; // snoozed while the window was read
    if (!window) {
      if (run.heldFor) {
        run.heldFor = undefined;
        await notes.noteLadder({
          incident: input.incident,
          message: `Maintenance over: the escalation goes on with L${run.level + 1}`,
        });
      }
      return;
    }
    const id = `${window.name}@${window.until}`;
    if (run.heldFor !== id) {
      run.heldFor = id;
      await notes.noteLadder({
        incident: input.incident,
        message: `Escalation held: maintenance window ${window.name} covers namespace ${input.namespace} until ${window.until}${window.reason ? ` (${window.reason})` : ''}; L${run.level + 1} is notified when it ends`,
      });
    }
    publish(run, 'held');
    const wait = Math.min(MAINTENANCE_RECHECK_MS, Math.max(1_000, Date.parse(window.until) - Date.now()));
    await condition(() => stop() || muted(run), wait); // the loop's top decides what is next
  }
}

/** Runs the clock to the next rung; frozen while snoozed. False when stopped (or it is time to continue as new). */
export async function runClock(run: LadderRun): Promise<boolean> {
  while ((run.remainingMs ?? 0) > 0) {
    if (stopped(run)) return false;
    if (muted(run)) {
      await holdWhileSnoozed(run);
      continue;
    }
    if (timeToContinue(run)) return false;
    publish(run, `L${run.level + 1}`);
    const started = Date.now();
    const remaining = run.remainingMs!;
    const interrupted = await condition(() => stopped(run) || muted(run) || timeToContinue(run), remaining);
    run.remainingMs = interrupted ? Math.max(0, remaining - (Date.now() - started)) : 0;
  }
  return !stopped(run);
}
