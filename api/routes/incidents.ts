import type { Request } from 'express';
import { z } from 'zod';
import { incidentStateSchema, namespaceSchema, resourceRefSchema, signalSchema } from '../../contracts/incidents';
import { RESOURCE_KINDS } from '../../domain/vocabulary';
import { severitySchema } from '../../contracts/vocabulary';
import { listEnvelope, PAGE_SIZE } from '../../domain/envelope';
import { paginationQuery, timestampQuery } from '../../contracts/envelope';
import { appendAudit } from '../../store/audit';
import { countTimeline, getTimeline, listIncidents, type IncidentRecord } from '../../store/incidents';
import { plansOfIncident } from '../../store/remediations';
import {
  acknowledgeIncident,
  findIncident,
  ingestSignal,
  MANUAL_RESOLUTION,
  resolveIncident,
  snoozeDuration,
  snoozeIncident,
  type IncidentOps,
} from '../../operations/incidents';
import type { Actor } from '../../domain/incident-requests';
import { auditSource } from '../auth';
import { nonBlank, route } from '../route';
import {
  incidentAfterAcknowledge,
  incidentAfterAcknowledgeSchema,
  incidentAfterResolve,
  incidentAfterResolveSchema,
  incidentAfterSnooze,
  incidentAfterSnoozeSchema,
  incidentDetail,
  incidentDetailSchema,
  INCIDENT_LIST_FIELDS,
  incidentListItem,
  incidentListSchema,
  timelineSchema,
  timelineView,
} from '../views';

const KIND = 'Incident';
const namespaceQuery = z.object({ namespace: namespaceSchema.optional() });
const actorName = nonBlank(200);
/** `<Kind>/<name>`: the document's pattern names the kinds, which the domain checks with a refinement. */
const resourceRef = resourceRefSchema.openapi({
  pattern: `^(${RESOURCE_KINDS.join('|')})/[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`,
  example: 'Deployment/checkout-api',
});
/** Go duration text (the 24h cap is checked by the handler: JSON Schema cannot say it). */
const GO_DURATION_PATTERN = '^([0-9]*(\\.[0-9]*)?(ns|us|µs|μs|ms|s|m|h))+$|^0$';
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
      body: signalSchema.extend({ resource: resourceRef }),
      responses: {
        201: { description: 'a new incident (detail)', schema: incidentDetailSchema },
        200: {
          description: 'joined the open incident for this resource',
          schema: incidentDetailSchema,
          headers: { 'Foghorn-Deduplicated': { description: 'always true', pattern: '^true$' } },
        },
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
        const { created, incident } = await ingestSignal(ops(), body);
        if (created) await audit(incident);
        const detail = incidentDetail(
          incident,
          await countTimeline(incident.name),
          await plansOfIncident(incident.name),
        );
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
        resource: resourceRef.optional(),
        since: timestampQuery.optional(),
      }),
      responses: { 200: { description: 'IncidentList', schema: incidentListSchema } },
      handler: async ({ query }) => {
        const { page, pageSize, ...filter } = query;
        const { items, totalCount } = await listIncidents(filter, page, pageSize, INCIDENT_LIST_FIELDS);
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
      kind: KIND,
      query: namespaceQuery,
      responses: { 200: { description: 'Incident', schema: incidentDetailSchema } },
      handler: async ({ params, query }) => {
        const incident = await findIncident(params.name, query.namespace);
        return {
          body: incidentDetail(incident, await countTimeline(incident.name), await plansOfIncident(incident.name)),
        };
      },
    }),
    route({
      method: 'get',
      path: '/incidents/{name}/timeline',
      summary: "An incident's complete timeline, oldest first",
      tag: 'Incidents',
      role: 'viewer',
      kind: KIND,
      query: namespaceQuery,
      responses: { 200: { description: 'IncidentTimeline', schema: timelineSchema } },
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
      kind: KIND,
      query: namespaceQuery,
      body: z.object({ acknowledgedBy: actorName, message: z.string().max(2000).default('') }).strict(),
      responses: {
        200: { description: 'incident after acknowledge', schema: incidentAfterAcknowledgeSchema },
        409: { description: 'Incident already acknowledged (details say who and when); Incident already resolved' },
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
      kind: KIND,
      query: namespaceQuery,
      body: z
        .object({
          duration: z.string().openapi({
            description: 'Go duration above 0s and at most 24h, e.g. 30m or 2h30m (else 400 Invalid duration)',
            pattern: GO_DURATION_PATTERN,
            example: '30m',
          }),
          reason: z.string().max(2000).default(''),
          snoozedBy: actorName,
        })
        .strict(),
      responses: {
        200: { description: 'incident after snooze', schema: incidentAfterSnoozeSchema },
        400: { description: 'Invalid duration' },
        409: { description: 'Incident already resolved' },
      },
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
      kind: KIND,
      query: z.object({ namespace: namespaceSchema.default('default') }),
      body: z.object({ resolution: nonBlank(4000).optional() }).strict(),
      responses: {
        200: { description: 'incident after resolve', schema: incidentAfterResolveSchema },
        409: { description: 'Incident already resolved (details say who and when)' },
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
