import { z } from 'zod';
import { alertmanagerPayloadSchema, mapAlert } from '../../domain/alertmanager';
import { resourceKey, type SignalType } from '../../domain/incident';
import { API_VERSION } from '../../domain/schemas';
import { findOpenIncident } from '../../store/incidents';
import {
  ingestSignal,
  resolveIncident,
  SOURCE_RESOLUTION,
  SYSTEM_ACTOR,
  type IncidentOps,
} from '../../operations/incidents';
import { route } from '../route';

/** What happened to each alert of a webhook delivery: nothing is dropped silently. */
const outcomeSchema = z.object({
  fingerprint: z.string(),
  status: z.enum(['firing', 'resolved']).optional(),
  outcome: z.enum([
    'opened',
    'correlated',
    'resolved',
    'kept-escalated',
    'no-open-incident',
    'already-resolved',
    'rejected',
  ]),
  incident: z.string().optional(),
  reason: z.string().optional(),
});
type Outcome = z.infer<typeof outcomeSchema>;

/** The Prometheus Alertmanager webhook (payload version 4, DESIGN §6). */
export function alertRoutes(ops: () => IncidentOps, alertnameMap?: Record<string, SignalType>) {
  return [
    route({
      method: 'post',
      path: '/alerts/alertmanager',
      summary: 'Alertmanager webhook: firing alerts open or join incidents, resolved alerts resolve them',
      tag: 'Alerts',
      role: 'operator',
      // Unknown top-level fields (newer Alertmanager versions) are accepted and ignored.
      body: alertmanagerPayloadSchema.strip(),
      responses: {
        202: {
          description: 'what happened to each alert',
          schema: z.object({
            apiVersion: z.literal(API_VERSION),
            kind: z.literal('AlertIngestResult'),
            items: z.array(outcomeSchema),
          }),
        },
      },
      handler: async ({ body }) => {
        const items: Outcome[] = [];
        // In order: a payload that fires and resolves the same resource must end resolved.
        for (const alert of body.alerts) {
          const mapped = mapAlert(alert, { signalTypeMap: alertnameMap });
          if (!mapped.ok) {
            items.push({
              fingerprint: mapped.fingerprint,
              status: alert.status,
              outcome: 'rejected',
              reason: mapped.reason,
            });
            continue;
          }
          if (mapped.status === 'firing') {
            const { created, incident } = await ingestSignal(ops(), mapped.signal);
            items.push({
              fingerprint: mapped.fingerprint,
              status: 'firing',
              outcome: created ? 'opened' : 'correlated',
              incident: incident.name,
            });
            continue;
          }
          const incident = await findOpenIncident(resourceKey(mapped.signal));
          if (!incident) {
            items.push({ fingerprint: mapped.fingerprint, status: 'resolved', outcome: 'no-open-incident' });
            continue;
          }
          try {
            const { resolved } = await resolveIncident(ops(), incident, {
              resolution: SOURCE_RESOLUTION,
              actor: SYSTEM_ACTOR,
              atSource: true,
            });
            items.push({
              fingerprint: mapped.fingerprint,
              status: 'resolved',
              outcome: resolved ? 'resolved' : 'kept-escalated',
              incident: incident.name,
            });
          } catch (err) {
            if ((err as { status?: number }).status !== 409) throw err;
            items.push({
              fingerprint: mapped.fingerprint,
              status: 'resolved',
              outcome: 'already-resolved',
              incident: incident.name,
            });
          }
        }
        return { status: 202, body: { apiVersion: API_VERSION, kind: 'AlertIngestResult', items } };
      },
    }),
  ];
}
