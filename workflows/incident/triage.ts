import { workflowInfo } from '@temporalio/workflow';
import type { Triage } from '../../activities/incident-stages';
import { INCIDENT_STATE } from '../search-attributes';
import { stages } from './proxies';
import { countRecorded, isResolved, publish, type IncidentRun } from './state';

/**
 * Triage, one activity: `Analyzing`, the signals waiting in the inbox, the analysis (rules or an
 * LLM), the runbook match, the remediation options, and either the first plan or, when there is
 * nothing to try, the escalation. Null when the incident was resolved first.
 */
export async function triage(run: IncidentRun): Promise<Triage | null> {
  // The triage writes Analyzing first; the starter published it already with the run's attributes.
  const publishedAtStart = workflowInfo().typedSearchAttributes.get(INCIDENT_STATE) === 'Analyzing';
  if (!isResolved(run)) run.live.state = 'Analyzing';
  if (!publishedAtStart) publish(run);
  const opened = await stages.drainAndTriage({
    name: run.name,
    at: new Date().toISOString(),
    prepareFirstPlan: true,
    escalate: true,
    firstIndex: run.signalsRecorded,
  });
  countRecorded(run, opened.drained);
  run.triageRecordsInbox = false;
  return opened.triage;
}
