import { z } from 'zod';
import {
  KUBE_READ_KINDS,
  MAX_EVENTS,
  MAX_LOG_LINES,
  MAX_PODS_LISTED,
  MAX_REPLICAS,
  WORKLOAD_KINDS,
  type AdjustResourcesInput,
  type DeletePodInput,
  type RestartDeploymentInput,
  type RollbackDeploymentInput,
  type ScaleDeploymentInput,
} from '../domain/kube-actions';
import { MAX_SIGNATURE_LOG_LINE, type FailureSignature } from '../domain/kube-health';
import { clusterSchema, namespaceSchema } from './incidents';
import { dnsLabelSchema, objectNameSchema, quantitySchema } from './kubernetes';
import { sameType } from './type-check';

/**
 * The inputs of the Kubernetes activities (DESIGN §8), validated by each activity before it
 * reaches a cluster: the actions a remediation step runs, the reads, and a fix's verification.
 * The action inputs parse to domain/kube-actions.ts's types.
 */

/** `RP-20261123-001/2`: printable ASCII without spaces, so it reads well in logs and records. */
export const actionKeySchema = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces');

const base = { key: actionKeySchema, cluster: clusterSchema, namespace: namespaceSchema };

export const restartDeploymentInput = z.object({ ...base, deployment: objectNameSchema }).strict();
sameType<z.output<typeof restartDeploymentInput>, RestartDeploymentInput>(true);

export const scaleDeploymentInput = z
  .object({ ...base, deployment: objectNameSchema, replicas: z.number().int().min(0).max(MAX_REPLICAS) })
  .strict();
sameType<z.output<typeof scaleDeploymentInput>, ScaleDeploymentInput>(true);

const cpuMemory = z.object({ cpu: quantitySchema.optional(), memory: quantitySchema.optional() }).strict();
export const adjustResourcesInput = z
  .object({
    ...base,
    deployment: objectNameSchema,
    container: dnsLabelSchema,
    requests: cpuMemory.optional(),
    limits: cpuMemory.optional(),
  })
  .strict()
  .refine((p) => [p.requests?.cpu, p.requests?.memory, p.limits?.cpu, p.limits?.memory].some((v) => v !== undefined), {
    message: 'at least one of requests.cpu, requests.memory, limits.cpu, limits.memory is required',
  });
sameType<z.output<typeof adjustResourcesInput>, AdjustResourcesInput>(true);

export const rollbackDeploymentInput = z
  .object({
    ...base,
    deployment: objectNameSchema,
    toRevision: z.number().int().min(1).optional(), // absent = the previous revision (`kubectl rollout undo`)
  })
  .strict();
sameType<z.output<typeof rollbackDeploymentInput>, RollbackDeploymentInput>(true);

export const deletePodInput = z.object({ ...base, pod: objectNameSchema }).strict();
sameType<z.output<typeof deletePodInput>, DeletePodInput>(true);

// ---------------------------------------------------------------------------------------------
// Reads: what the remediation engine and the agent look at
// ---------------------------------------------------------------------------------------------

export const kubeGetResourceInput = z
  .object({
    cluster: clusterSchema,
    kind: z.enum(KUBE_READ_KINDS),
    namespace: namespaceSchema.optional(), // required except for nodes
    name: objectNameSchema,
  })
  .strict()
  .refine((p) => p.kind === 'Node' || p.namespace !== undefined, { message: 'namespace is required for this kind' });

export const kubeListPodsInput = z
  .object({
    cluster: clusterSchema,
    namespace: namespaceSchema,
    kind: z.enum(WORKLOAD_KINDS),
    name: objectNameSchema,
    limit: z.number().int().min(1).max(MAX_PODS_LISTED).default(20),
  })
  .strict();

export const kubeRecentEventsInput = z
  .object({
    cluster: clusterSchema,
    kind: z.enum(KUBE_READ_KINDS),
    namespace: namespaceSchema.optional(),
    name: objectNameSchema,
    limit: z.number().int().min(1).max(MAX_EVENTS).default(20),
  })
  .strict()
  .refine((p) => p.kind === 'Node' || p.namespace !== undefined, { message: 'namespace is required for this kind' });

export const kubeLogTailInput = z
  .object({
    cluster: clusterSchema,
    namespace: namespaceSchema,
    pod: objectNameSchema,
    container: dnsLabelSchema.optional(), // absent = the pod's only (or first) container
    tailLines: z.number().int().min(1).max(MAX_LOG_LINES).default(50),
    previous: z.boolean().default(false), // the last terminated container's log (after a crash)
  })
  .strict();

export type KubeGetResourceInput = z.input<typeof kubeGetResourceInput>;
export type KubeListPodsInput = z.input<typeof kubeListPodsInput>;
export type KubeRecentEventsInput = z.input<typeof kubeRecentEventsInput>;
export type KubeLogTailInput = z.input<typeof kubeLogTailInput>;

// ---------------------------------------------------------------------------------------------
// Verification: did a fix work (domain/kube-health.ts judges what the activity gathers)
// ---------------------------------------------------------------------------------------------

const MAX_SIGNATURE_REASONS = 10;
const MAX_SIGNATURE_REASON = 64;

export const verifyTargetInput = z
  .object({
    cluster: clusterSchema,
    namespace: namespaceSchema,
    deployment: objectNameSchema,
    /** When the fix was applied: crashes before it are the incident, not a verdict on the fix. */
    since: z.string().datetime({ offset: true, message: 'must be an RFC 3339 timestamp' }),
    /** What the original failure looked like: the fix is good only when no judged pod shows it again. */
    signature: z
      .object({
        /** Container reasons (`OOMKilled`, `CrashLoopBackOff`): printable ASCII without spaces. */
        reasons: z
          .array(
            z
              .string()
              .min(1)
              .max(MAX_SIGNATURE_REASON)
              .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces'),
          )
          .max(MAX_SIGNATURE_REASONS),
        exitCode: z.number().int().min(-2147483648).max(2147483647).optional(),
        /** One line of the failing containers' log, matched trimmed (so stored trimmed). */
        logLine: z
          .string()
          .trim()
          .min(1)
          .max(MAX_SIGNATURE_LOG_LINE)
          .regex(/^[^\r\n]*$/, 'must be one line')
          .optional(),
      })
      .strict()
      .optional(),
  })
  .strict();
export type VerifyTargetInput = z.infer<typeof verifyTargetInput>;
sameType<NonNullable<VerifyTargetInput['signature']>, FailureSignature>(true);
