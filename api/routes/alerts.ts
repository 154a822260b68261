import { z } from 'zod';
import { alertmanagerPayloadSchema, mapAlert } from '../../domain/alertmanager';
import type { SignalType } from '../../domain/incident';
import { API_VERSION } from '../../domain/schemas';
import type { IncidentOps } from '../../operations/incidents';
import { applySignal } from '../../operations/signals';
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
          // In order, one at a time: a payload that fires and resolves a resource ends resolved.
          const result = await applySignal(ops(), mapped.signal, mapped.status);
          items.push({ fingerprint: mapped.fingerprint, status: mapped.status, ...result });
        }
        return { status: 202, body: { apiVersion: API_VERSION, kind: 'AlertIngestResult', items } };
      },
    }),
  ];
}
