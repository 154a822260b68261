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

/** The evidence behind an insight (domain/evidence.ts), as the API shows it. */
export const evidenceViewSchema = z.object({
  collectedAt: timestamp,
  firstSignalAt: timestamp,
  windowMs: z.number().int(),
  ownerChain: z.array(z.string()),
  changes: z.array(changeViewSchema.omit({ revisionHealth: true })),
  suspect: z
    .object({
      change: z.string().describe('the change id'),
      resource: z.string(),
      type: z.enum(CHANGE_TYPES),
      revision: z.number().int().optional(),
      previousRevision: z.number().int().optional(),
      summary: z.string(),
      at: timestamp,
      leadMs: z.number().describe('how long before the first failure it reached the cluster'),
      confidence: z.number().min(0).max(1),
      reason: z.string(),
      by: changeViewSchema.shape.by,
      evidence: z.string().describe('the evidence item that shows it'),
    })
    .optional(),
  revisions: z.array(
    z.object({ revision: z.number().int(), state: z.enum(REVISION_STATES), images: z.array(z.string()) }).passthrough(),
  ),
  pods: z.array(
    z.object({
      name: z.string(),
      node: z.string(),
      phase: z.string(),
      restarts: z.number().int(),
      waitingReason: z.string(),
      lastTermination: z
        .object({ reason: z.string(), exitCode: z.number().int(), at: timestamp.optional() })
        .optional(),
      previousLogs: z.array(z.string()).describe('tail, redacted'),
      currentLogs: z.array(z.string()).describe('tail, redacted'),
    }),
  ),
  events: z.array(
    z.object({
      object: z.string(),
      reason: z.string(),
      message: z.string(),
      count: z.number(),
      at: timestamp.optional(),
    }),
  ),
  nodes: z.array(z.object({ name: z.string(), ready: z.string(), conditions: z.array(z.string()) })),
  replicas: z.object({ desired: z.number(), available: z.number(), updated: z.number() }).optional(),
  items: z
    .array(z.object({ id: z.string(), kind: z.string(), summary: z.string(), at: timestamp.optional() }))
    .describe('the citable facts: recommendations name their ids'),
  notes: z.array(z.string()).describe('what could not be collected, and why'),
});
