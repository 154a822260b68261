import type { RemediationOptions } from '../domain/remediation';
import { withHeartbeat } from './context';
import type { createIncidentActivities } from './incidents';
import type { createRemediationActivities } from './remediation';

type IncidentSteps = Pick<
  ReturnType<typeof createIncidentActivities>,
  'setIncidentState' | 'analyzeIncident' | 'matchRunbook'
>;
type RemediationSteps = Pick<ReturnType<typeof createRemediationActivities>, 'remediationOptions'>;

/**
 * A new incident's triage as one activity: `Analyzing`, the analysis, the runbook match and the
 * remediation options. Each step was an activity of its own, and each round trip through
 * Temporal cost a burst of incidents as much CPU as the step (docs/benchmarks.md, "Thirteenth
 * pass"). Every step is idempotent, so a retry redoes only what did not finish.
 */
export function createTriageActivities(incidents: IncidentSteps, remediation: RemediationSteps) {
  return {
    /** The incident's remediation options; null when it was resolved (or is gone) before triage began. */
    async triageIncident(input: { name: string; at: string }): Promise<RemediationOptions | null> {
      return withHeartbeat(async () => {
        const { name } = input;
        if (!(await incidents.setIncidentState({ name, state: 'Analyzing', at: input.at }))) return null;
        await incidents.analyzeIncident({ name });
        await incidents.matchRunbook({ name });
        return remediation.remediationOptions({ name });
      });
    },
  };
}

export type TriageActivities = ReturnType<typeof createTriageActivities>;
