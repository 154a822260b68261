import { z } from 'zod';
import type { WatchCheckpoint } from '../domain/kube-watch-state';
import { signalSchema } from './incidents';
import { sameType } from './type-check';
import { signalTypeSchema } from './vocabulary';

/**
 * The cluster watcher's checkpoint as the watch activity reads it back, from its heartbeat
 * details or its input (domain/kube-watch-state.ts writes it): one that does not parse is not
 * resumed from.
 */

const checkpointWorkloadSchema = z.object({
  open: z.boolean(),
  sent: z.number().int().min(0),
  lastType: signalTypeSchema,
  reported: z.record(signalTypeSchema),
  pending: z.array(z.object({ member: z.string(), type: signalTypeSchema, signal: signalSchema })).default([]),
});

export const watchCheckpointSchema = z.object({
  version: z.literal(1),
  /** Last resourceVersion seen per watched collection (pods, deployments, …), for diagnosis: a resume relists. */
  resourceVersions: z.record(z.string()).default({}),
  /** `<namespace>/<Kind>/<name>` → state. */
  workloads: z.record(checkpointWorkloadSchema).default({}),
  /** Deployment key → when it was first seen short of replicas (ms). */
  unavailableSince: z.record(z.number()).default({}),
  /** Members left out of the checkpoint by its size cap (a resumed watcher may re-send those). */
  truncated: z.number().int().min(0).default(0),
  changes: z
    .object({
      revisions: z.record(z.number().int()),
      replicas: z.record(z.number().int()),
      configs: z.record(z.record(z.string())),
      nodes: z.record(z.record(z.string())),
      hashKeyId: z.string().optional(),
    })
    .optional(),
});
sameType<z.output<typeof watchCheckpointSchema>, WatchCheckpoint>(true);
