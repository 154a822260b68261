/**
 * One incident's life (DESIGN §6), workflow id = the incident's name: triage (analysis, runbook
 * match, first plan) → remediation attempts run in this workflow, each verified → resolved by
 * `system` when a plan is verified, or escalated to the ladder when none is left → resolved by a
 * person or the alert source at any point → the close writes the postmortem. Acknowledge, snooze
 * and resolve are updates (handlers.ts); correlated signals are recorded as they come (signals.ts).
 */
import { installHandlers } from './handlers';
import { escalate, escalatedByTriage } from './escalate';
import { remediate } from './remediate';
import { startSignalRecorder } from './signals';
import { publish, startRun, type IncidentWorkflowInput } from './state';
import { triage } from './triage';
import { awaitResolution, close } from './close';

export type { IncidentWorkflowInput } from './state';

export async function incidentWorkflow(input: IncidentWorkflowInput): Promise<void> {
  const run = startRun(input);
  installHandlers(run);
  const recorder = startSignalRecorder(run);

  if (input.carried) publish(run);
  else {
    const triaged = await triage(run);
    if (triaged?.escalated) await escalatedByTriage(run, triaged.escalated);
    else if (triaged) {
      const gaveUp = await remediate(run, triaged);
      if (gaveUp !== undefined) await escalate(run, gaveUp);
    }
  }

  await awaitResolution(run, recorder);
  await close(run, recorder);
}
