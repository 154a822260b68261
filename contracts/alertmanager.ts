import { z } from 'zod';
import { ALERT_STATUSES, MAX_ALERTS_PER_PAYLOAD, type AlertmanagerAlert } from '../domain/alertmanager';
import { sameType } from './type-check';

/**
 * Prometheus Alertmanager webhook body (payload version 4), as POST /alerts/alertmanager takes
 * it; domain/alertmanager.ts maps each alert to a signal.
 *
 * Payload reference: https://prometheus.io/docs/alerting/latest/configuration/#webhook_config
 */

const alertStatusSchema = z.enum(ALERT_STATUSES);
const stringRecord = z.record(z.string(), z.string());

export const alertmanagerAlertSchema = z.object({
  status: alertStatusSchema,
  labels: stringRecord,
  annotations: stringRecord.default({}),
  // Go's RFC3339Nano: up to nine fractional digits, `Z` or a numeric offset.
  startsAt: z.string().datetime({ offset: true }),
  endsAt: z.string(),
  generatorURL: z.string().default(''),
  fingerprint: z.string(),
});
sameType<z.output<typeof alertmanagerAlertSchema>, AlertmanagerAlert>(true);
export type AlertmanagerAlertInput = z.input<typeof alertmanagerAlertSchema>;

export const alertmanagerPayloadSchema = z
  .object({
    version: z.literal('4'),
    groupKey: z.string(),
    truncatedAlerts: z.number().int().min(0).optional(),
    status: alertStatusSchema,
    receiver: z.string(),
    groupLabels: stringRecord,
    commonLabels: stringRecord,
    commonAnnotations: stringRecord,
    externalURL: z.string(),
    alerts: z
      .array(alertmanagerAlertSchema)
      .min(1, 'must hold at least one alert')
      .max(MAX_ALERTS_PER_PAYLOAD, `must hold at most ${MAX_ALERTS_PER_PAYLOAD} alerts`),
  })
  .passthrough();
export type AlertmanagerPayload = z.output<typeof alertmanagerPayloadSchema>;
export type AlertmanagerPayloadInput = z.input<typeof alertmanagerPayloadSchema>;
