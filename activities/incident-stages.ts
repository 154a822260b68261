import { Context } from '@temporalio/activity';
import { INBOX_BATCH } from '../domain/incident-requests';
import type { RemediationOptions } from '../domain/remediation';
import { withHeartbeat } from './context';
import type { createIncidentActivities } from './incidents';
import type { createPostmortemActivities } from './postmortem';
import type { createRemediationActivities } from './remediation';

type IncidentSteps = Pick<
  ReturnType<typeof createIncidentActivities>,
  'setIncidentState' | 'analyzeIncident' | 'matchRunbook' | 'drainSignalInbox'
>;
type RemediationSteps = Pick<ReturnType<typeof createRemediationActivities>, 'remediationOptions'>;
type PostmortemSteps = Pick<ReturnType<typeof createPostmortemActivities>, 'generatePostmortem'>;

/**
 * An incident's opening and closing stages, one activity each: each step was an activity of its
 * own, and each round trip through Temporal cost a burst of incidents as much as the step
 * (docs/benchmarks.md, "Thirteenth pass"). Every step is idempotent, so a retry redoes only what
 * did not finish.
 */
export function createIncidentStageActivities(
  incidents: IncidentSteps,
  remediation: RemediationSteps,
  postmortems: PostmortemSteps,
) {
  /** Records what waits in the inbox, a batch at a time until it is found empty; how many. */
  async function drain(name: string, firstIndex: number): Promise<number> {
    let total = 0;
    for (let recorded = INBOX_BATCH; recorded === INBOX_BATCH; total += recorded)
      ({ recorded } = await incidents.drainSignalInbox({
        name,
        firstIndex: firstIndex + total,
        afterResolution: true,
        limit: INBOX_BATCH,
      }));
    return total;
  }

  return {
    /**
     * Triage: `Analyzing`, the analysis, the runbook match and the remediation options. Null
     * when the incident was resolved (or is gone) before it began.
     */
    async triageIncident(input: { name: string; at: string }): Promise<RemediationOptions | null> {
      return withHeartbeat(async () => {
        const { name } = input;
        if (!(await incidents.setIncidentState({ name, state: 'Analyzing', at: input.at }))) return null;
        await incidents.analyzeIncident({ name });
        await incidents.matchRunbook({ name });
        return remediation.remediationOptions({ name });
      });
    },

    /**
     * The close of a resolved incident: the signals queued up to now, its postmortem, then those
     * queued while it was written (an acknowledged alert is never dropped). Signals recorded from
     * `firstIndex` on; returns how many. How many its drains recorded travels in the heartbeat,
     * so an attempt after a failed one (the postmortem's write, say) goes on counting from there:
     * started again from `firstIndex`, it would take signals queued meanwhile for ones already
     * counted, and the incident's count would come up short.
     */
    async closeIncident(input: {
      name: string;
      firstIndex: number;
    }): Promise<{ recorded: number; postmortem: string }> {
      const activity = Context.current();
      let recorded = (activity.info.heartbeatDetails as { recorded?: number } | undefined)?.recorded ?? 0;
      const progress = () => ({ recorded });
      return withHeartbeat(async () => {
        recorded += await drain(input.name, input.firstIndex + recorded);
        activity.heartbeat(progress());
        const postmortem = await postmortems.generatePostmortem({ incident: input.name });
        recorded += await drain(input.name, input.firstIndex + recorded);
        return { recorded, postmortem };
      }, progress);
    },
  };
}

export type IncidentStageActivities = ReturnType<typeof createIncidentStageActivities>;
