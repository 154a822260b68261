import { ApplicationFailure } from '@temporalio/common';
import { z } from 'zod';
import type { AvailabilitySample } from '../domain/changes';
import type { IncidentEvidence } from '../domain/evidence';
import { CORRELATION_WINDOW_MS, splitResource } from '../domain/incident';
import { buildPostmortemReport, summarizeTrending, TRENDING_WINDOW_DAYS } from '../domain/postmortem';
import { availabilityBetween } from '../store/changes';
import { appendTimeline, getIncident, getTimeline, setPostmortemRef } from '../store/incidents';
import { getInsightByIncident } from '../store/insights';
import { completedPlanOf } from '../store/remediations';
import { createPostmortemOnce, getPostmortemByIncident, incidentsNear, trendingIncidents } from '../store/postmortems';

const inputSchema = z.object({ incident: z.string().min(1) }).strict();

/**
 * A Deployment's availability samples from the state at detection to now (the report is written
 * after resolution, so a sample taken since gives the `after` snapshot). Other kinds are not
 * sampled: [].
 */
function availabilityOf(
  incident: { cluster: string; namespace: string; resource: string; detectedAt: Date },
  until: Date,
): Promise<AvailabilitySample[]> {
  if (splitResource(incident.resource).kind !== 'Deployment') return Promise.resolve([]);
  return availabilityBetween(incident.cluster, incident.namespace, incident.resource, incident.detectedAt, until);
}

/** The postmortem workflow's side effects. Idempotent: the incident's one postmortem is created once. */
export function createPostmortemActivities() {
  return {
    /**
     * Writes the postmortem of a resolved incident from what is stored about it (timeline,
     * insight and its evidence, availability samples, earlier and neighbouring incidents), links
     * it from the incident and notes it on the timeline. Returns its name; a retry or a second
     * call returns the same name.
     */
    async generatePostmortem(input: { incident: string }): Promise<string> {
      const parsed = inputSchema.safeParse(input);
      if (!parsed.success) {
        throw ApplicationFailure.create({ message: `invalid input: ${parsed.error.message}`, nonRetryable: true });
      }
      const name = parsed.data.incident;
      const incident = await getIncident(name);
      // Thrown (and retried): the resolve is persisted before the workflow starts us.
      if (!incident) throw new Error(`incident ${name} does not exist`);
      if (incident.state !== 'Resolved' || !incident.resolvedAt) {
        throw new Error(`incident ${name} is ${incident.state}, not Resolved: no postmortem yet`);
      }

      let pm = (await getPostmortemByIncident(name))?.name;
      if (!pm) {
        const [timeline, insight, trending, related, plan, availability] = await Promise.all([
          getTimeline(name),
          getInsightByIncident(name),
          trendingIncidents(incident, TRENDING_WINDOW_DAYS),
          incidentsNear(incident, CORRELATION_WINDOW_MS),
          completedPlanOf(name),
          availabilityOf(incident, new Date(Math.max(Date.now(), incident.resolvedAt.getTime()))),
        ]);
        // Stored with the insight by the analysis (a Mixed field of the insight record).
        const evidence = (insight as { evidence?: IncidentEvidence } | undefined)?.evidence;
        const report = buildPostmortemReport({
          incident: { ...incident, resolvedAt: incident.resolvedAt },
          timeline: timeline.filter((e) => e.type !== 'PostMortemGenerated'),
          ...(insight && { insight }),
          trending: summarizeTrending(incident, trending),
          related,
          ...(plan && { remediation: plan }),
          ...(evidence && { evidence }),
          availability,
        });
        pm = (await createPostmortemOnce({ incident: name, namespace: incident.namespace, report, at: new Date() }))
          .name;
      }

      await setPostmortemRef(name, pm);
      await appendTimeline(name, [
        {
          key: `${name}/postmortem`,
          event: {
            timestamp: new Date(),
            type: 'PostMortemGenerated',
            source: 'ai-engine',
            message: `Postmortem ${pm} generated`,
            details: { postmortem: pm },
          },
        },
      ]);
      return pm;
    },
  };
}

export type PostmortemActivities = ReturnType<typeof createPostmortemActivities>;
