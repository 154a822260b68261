import { z } from 'zod';
import { CHANGE_TYPES, REVISION_STATES } from '../domain/changes';
import { dnsLabelSchema } from './kubernetes';

/**
 * The change record at the API (`GET /changes`, domain/changes.ts): what changed in a watched
 * cluster, when it reached the cluster, who changed it, and beside each rollout what Foghorn has
 * seen of the revision.
 */

const timestamp = z.string().datetime();

/** `<Kind>/<name>` of any object the change record names (workloads, ConfigMaps, Secrets, nodes). */
export const changedObjectSchema = z
  .string()
  .regex(/^[A-Z][A-Za-z]+\/[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'must look like Deployment/checkout or ConfigMap/app');

export const revisionHealthViewSchema = z.object({
  state: z.enum(REVISION_STATES).describe('Healthy: fully available for the stability window; Failed: see failure'),
  healthyAt: timestamp.optional(),
  failure: z
    .object({
      signal: z.string(),
      reason: z.string(),
      exitCode: z.number().int().optional(),
      at: timestamp,
    })
    .optional(),
  images: z.array(z.string()).describe('`container=image`'),
});

export const changeViewSchema = z.object({
  id: z.string().describe('stable: the same change seen twice has the same id'),
  cluster: z.string(),
  namespace: z.string().describe("'' for nodes"),
  resource: changedObjectSchema,
  type: z.enum(CHANGE_TYPES),
  at: timestamp.describe('when the change reached the cluster'),
  revision: z.number().int().optional(),
  previousRevision: z.number().int().optional(),
  summary: z.string(),
  diff: z
    .array(z.object({ field: z.string(), from: z.string(), to: z.string() }))
    .describe("what differs; a Secret's change shows keyed content hashes, never its content"),
  by: z.object({
    manager: z.string().describe('the field manager that wrote the change'),
    changeCause: z.string().describe('kubernetes.io/change-cause'),
    source: z.string().describe('the GitOps or release source named on the object (Argo CD, Flux, Helm)'),
    foghorn: z.boolean().describe("Foghorn's own action"),
  }),
  workloads: z.array(z.string()).describe('the workloads the change concerns'),
  revisionHealth: revisionHealthViewSchema.optional().describe('rollouts and restarts of a Deployment'),
});

export const changesQuerySchema = z.object({
  cluster: dnsLabelSchema.optional(),
  namespace: dnsLabelSchema.optional(),
  resource: changedObjectSchema.optional().describe('the changed object, or a workload it concerns'),
});
