import { z } from 'zod';
import {
  INCIDENT_STATES,
  SIGNAL_DESCRIPTION_MAX,
  SIGNAL_LABEL_KEY_MAX,
  SIGNAL_LABEL_VALUE_MAX,
  type Signal,
} from '../domain/incident';
import { RESOURCE_KINDS } from '../domain/vocabulary';
import { dnsLabelSchema } from './kubernetes';
import { sameType } from './type-check';
import { severitySchema, signalTypeSchema } from './vocabulary';

export const incidentStateSchema = z.enum(INCIDENT_STATES);

/** `<Kind>/<name>` with a Kubernetes kind we know. */
export const resourceRefSchema = z
  .string()
  .regex(/^[A-Z][A-Za-z]+\/[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'must look like Deployment/checkout-api')
  .refine((r) => (RESOURCE_KINDS as readonly string[]).includes(r.split('/')[0]), {
    message: `kind must be one of ${RESOURCE_KINDS.join(', ')}`,
  });
export const namespaceSchema = dnsLabelSchema;
/** A registered cluster's name (`local` by default): part of the dedup key. */
export const clusterSchema = dnsLabelSchema;
export const labelsSchema = z.record(z.string().max(SIGNAL_LABEL_KEY_MAX), z.string().max(SIGNAL_LABEL_VALUE_MAX));

/** One detected anomaly: what POST /incidents takes (domain/incident.ts Signal once parsed). */
export const signalSchema = z
  .object({
    resource: resourceRefSchema,
    namespace: namespaceSchema.default('default'),
    signalType: signalTypeSchema,
    severity: severitySchema.optional(),
    description: z.string().max(SIGNAL_DESCRIPTION_MAX).default(''),
    cluster: clusterSchema.default('local'),
    labels: labelsSchema.default({}),
    // Required by the store: a blank one is refused here, for every caller (API, alerts, agent).
    detectionSource: z.string().max(200).regex(/\S/, 'must not be blank').trim().default('api'),
    /** When the problem began at its source (Alertmanager's `startsAt`): the start of MTTD. */
    startedAt: z.string().datetime({ offset: true, message: 'must be an RFC 3339 timestamp' }).optional(),
  })
  .strict();
sameType<z.output<typeof signalSchema>, Signal>(true);
export type SignalInput = z.input<typeof signalSchema>;
