import type { Request } from 'express';
import { z } from 'zod';
import { incidentStateSchema, namespaceSchema, resourceRefSchema, signalSchema } from '../../domain/incident';
import { severitySchema } from '../../domain/runbook';
import { listEnvelope, PAGE_SIZE, paginationQuery, timestampQuery } from '../../domain/schemas';
import { appendAudit } from '../../store/audit';
import { countTimeline, getTimeline, listIncidents, type IncidentRecord } from '../../store/incidents';
import {
  acknowledgeIncident,
  findIncident,
  ingestSignal,
  IngestUnavailableError,
  MANUAL_RESOLUTION,
  resolveIncident,
  snoozeDuration,
  snoozeIncident,
  type IncidentOps,
} from '../../operations/incidents';
import type { Actor } from '../../workflows/incident-messages';
import { auditSource } from '../auth';
import { route } from '../route';
import {
  incidentAfterAcknowledge,
  incidentAfterResolve,
  incidentAfterSnooze,
  incidentDetail,
  incidentListItem,
  timelineView,
} from '../views';

const namespaceQuery = z.object({ namespace: namespaceSchema.optional() });
const actorOf = (req: Request): Actor => auditSource(req);

/** Incidents: ingestion, reads, and the operator actions (DESIGN §6). */
export function incidentRoutes(basePath: string, ops: () => IncidentOps) {
  return [
    route({
      method: 'post',
      path: '/incidents',
      summary: 'Open an incident for a signal, or join the open incident of that resource',
      tag: 'Incidents',
      role: 'operator',
      body: signalSchema,
      responses: {
        201: { description: 'a new incident (detail)' },
        200: { description: 'joined the open incident for this resource (header Foghorn-Deduplicated: true)' },
      },
      handler: async ({ body, req }) => {
        const audit = (incident: IncidentRecord) =>
          appendAudit({
            action: 'incident.create',
            ...auditSource(req),
            resource: incident.name,
            resourceType: 'Incident',
            namespace: incident.namespace,
            details: { resource: incident.resource, signalType: incident.signalType, severity: incident.severity },
          });
        let ingested: Awaited<ReturnType<typeof ingestSignal>>;
        try {
          ingested = await ingestSignal(ops(), body);
        } catch (err) {
          // 503: the record was written but its workflow could not start. It was still created
          // (the retry joins it), so the creation is audited now.
          if (err instanceof IngestUnavailableError && err.created && err.incident) await audit(err.incident);
          throw err;
        }
        const { created, incident } = ingested;
        if (created) await audit(incident);
        const detail = incidentDetail(incident, await countTimeline(incident.name));
        const headers: Record<string, string> = created
          ? { Location: `${basePath}/incidents/${incident.name}` }
          : { 'Foghorn-Deduplicated': 'true' };
        return { status: created ? 201 : 200, headers, body: detail };
      },
    }),
    route({
      method: 'get',
      path: '/incidents',
      summary: 'List incidents, newest first',
      tag: 'Incidents',
      role: 'viewer',
      query: paginationQuery(PAGE_SIZE.max, PAGE_SIZE.default).extend({
        severity: severitySchema.optional(),
        state: incidentStateSchema.optional(),
        namespace: namespaceSchema.optional(),
        resource: resourceRefSchema.optional(),
        since: timestampQuery.optional(),
      }),
      responses: { 200: { description: 'IncidentList' } },
      handler: async ({ query }) => {
        const { page, pageSize, ...filter } = query;
        const { items, totalCount } = await listIncidents(filter, page, pageSize);
        const now = new Date();
        return {
          body: listEnvelope(
            'IncidentList',
            items.map((i) => incidentListItem(i, now)),
            totalCount,
            page,
            pageSize,
          ),
        };
      },
    }),
    route({
      method: 'get',
      path: '/incidents/{name}',
      summary: 'One incident in full',
      tag: 'Incidents',
      role: 'viewer',
      query: namespaceQuery,
      responses: { 200: { description: 'Incident' }, 404: { description: 'Incident not found' } },
      handler: async ({ params, query }) => {
        const incident = await findIncident(params.name, query.namespace);
        return { body: incidentDetail(incident, await countTimeline(incident.name)) };
      },
    }),
    route({
      method: 'get',
      path: '/incidents/{name}/timeline',
      summary: "An incident's complete timeline, oldest first",
      tag: 'Incidents',
      role: 'viewer',
      query: namespaceQuery,
      responses: { 200: { description: 'IncidentTimeline' }, 404: { description: 'Incident not found' } },
      handler: async ({ params, query }) => {
        const incident = await findIncident(params.name, query.namespace);
        return { body: timelineView(incident, await getTimeline(incident.name)) };
      },
    }),
    route({
      method: 'post',
      path: '/incidents/{name}/acknowledge',
      summary: 'Acknowledge: pauses escalation',
      tag: 'Incidents',
      role: 'operator',
      query: namespaceQuery,
      body: z
        .object({ acknowledgedBy: z.string().trim().min(1).max(200), message: z.string().max(2000).default('') })
        .strict(),
      responses: {
        200: { description: 'incident after acknowledge' },
        409: { description: 'Incident already acknowledged' },
      },
      handler: async ({ params, query, body, req }) => {
        const incident = await findIncident(params.name, query.namespace);
        const after = await acknowledgeIncident(ops(), incident, { ...body, actor: actorOf(req) });
        return { body: incidentAfterAcknowledge(after) };
      },
    }),
    route({
      method: 'post',
      path: '/incidents/{name}/snooze',
      summary: 'Snooze notifications for a Go duration (max 24h)',
      tag: 'Incidents',
      role: 'operator',
      query: namespaceQuery,
      body: z
        .object({
          duration: z.string(),
          reason: z.string().max(2000).default(''),
          snoozedBy: z.string().trim().min(1).max(200),
        })
        .strict(),
      responses: { 200: { description: 'incident after snooze' }, 400: { description: 'Invalid duration' } },
      handler: async ({ params, query, body, req }) => {
        const durationMs = snoozeDuration(body.duration);
        const incident = await findIncident(params.name, query.namespace);
        const after = await snoozeIncident(ops(), incident, { ...body, durationMs, actor: actorOf(req) });
        return { body: incidentAfterSnooze(after) };
      },
    }),
    route({
      method: 'post',
      path: '/incidents/{name}/resolve',
      summary: 'Resolve manually; writes annotations, clears dedup, generates the postmortem',
      tag: 'Incidents',
      role: 'operator',
      query: z.object({ namespace: namespaceSchema.default('default') }),
      body: z.object({ resolution: z.string().trim().min(1).max(4000).optional() }).strict(),
      responses: {
        200: { description: 'incident after resolve' },
        404: { description: 'Incident not found' },
        409: { description: 'Incident already resolved' },
      },
      handler: async ({ params, query, body, req }) => {
        const incident = await findIncident(params.name, query.namespace);
        const { incident: after } = await resolveIncident(ops(), incident, {
          resolution: body.resolution ?? MANUAL_RESOLUTION,
          actor: actorOf(req),
          atSource: false,
        });
        return { body: incidentAfterResolve(after) };
      },
    }),
  ];
}
