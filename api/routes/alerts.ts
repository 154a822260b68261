import { z } from 'zod';
import { mapAlert } from '../../domain/alertmanager';
import { alertmanagerPayloadSchema } from '../../contracts/alertmanager';
import type { SignalType } from '../../domain/incident';
import { API_VERSION } from '../../domain/envelope';
import type { IncidentOps } from '../../operations/incidents';
import { applySignals } from '../../operations/signals';
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
        const mapped = body.alerts.map((alert) => ({
          alert,
          mapped: mapAlert(alert, { signalTypeMap: alertnameMap }),
        }));
        const accepted = mapped.flatMap(({ mapped: m }) => (m.ok ? [{ signal: m.signal, status: m.status }] : []));
        // In bulk: each resource's alerts in order (fire then resolve ends resolved), resources at once.
        const outcomes = await applySignals(ops(), accepted);
        let next = 0;
        const items: Outcome[] = mapped.map(({ alert, mapped: m }) =>
          m.ok
            ? { fingerprint: m.fingerprint, status: m.status, ...outcomes[next++] }
            : { fingerprint: m.fingerprint, status: alert.status, outcome: 'rejected', reason: m.reason },
        );
        return { status: 202, body: { apiVersion: API_VERSION, kind: 'AlertIngestResult', items } };
      },
    }),
  ];
}
