import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { z } from 'zod';
import type { Config } from '../config/env';
import { ACTIVE_STATES } from '../domain/incident';
import { clusterSchema } from '../contracts/incidents';
import { parseWorkloadKey } from '../domain/kube-owners';
import { WATCHER_DETECTION_SOURCE } from '../domain/kube-signals';
import { type WatchCheckpoint } from '../domain/kube-watch-state';
import { watchCheckpointSchema } from '../contracts/kube-watch';
import { type SignalType } from '../domain/vocabulary';
import { signalTypeSchema } from '../contracts/vocabulary';
import { applySignal } from '../operations/signals';
import { listIncidents } from '../store/incidents';
import {
  latestScaleAndConfig,
  pruneChanges,
  recordAvailability,
  recordChanges,
  recordRevision,
} from '../store/changes';
import { contentHashKey } from '../store/cluster-secrets';
import { kubeConfigFor } from './kube/client';
import { ClusterWatcher, type KnownIncident } from './kube-watch/engine';

/**
 * The cluster watcher as a long-running activity (issue 9 §3). It watches until `roundMs` has
 * passed and returns its checkpoint, so the workflow can continue-as-new; meanwhile it heartbeats
 * the same checkpoint. A retry on another worker (this one died) or the next round relists the
 * cluster and diffs it against that checkpoint and ingestion's record, sending only the
 * difference — failures that began while nobody watched, and recoveries. (The resourceVersions in
 * the checkpoint are for diagnosis; nothing watches from them.)
 */

export interface KubeWatchDeps {
  config: Config;
  client: Client;
  taskQueue: string;
}

export const watchClusterInputSchema = z.object({
  cluster: clusterSchema,
  checkpoint: watchCheckpointSchema.optional(),
  /** How long this attempt watches before it returns (tests shorten it). */
  roundMs: z.number().int().positive().optional(),
});
export type WatchClusterInput = z.input<typeof watchClusterInputSchema>;

const HEARTBEAT_MS = 5_000;
const DEFAULT_ROUND_MS = 15 * 60_000;
/** Open watcher incidents read per page: one page for any cluster that is not on fire everywhere. */
const PAGE_SIZE = 500;
const MAX_KNOWN_INCIDENTS = 5_000;

/**
 * The open incidents this watcher opened on `cluster`, with the members their signals named.
 * Offset pages over a set that may change meanwhile: a row seen twice is harmless (the tracker
 * merges), and one missed (an incident resolved between pages) costs at most a repeated signal.
 */
async function knownIncidents(cluster: string): Promise<KnownIncident[]> {
  const known: KnownIncident[] = [];
  const filter = { state: ACTIVE_STATES, cluster, detectionSource: WATCHER_DETECTION_SOURCE };
  for (let page = 1; page <= MAX_KNOWN_INCIDENTS / PAGE_SIZE; page++) {
    const { items } = await listIncidents(filter, page, PAGE_SIZE);
    for (const row of items) {
      const workload = parseWorkloadKey(`${row.namespace}/${row.resource}`);
      if (!workload) continue;
      const members: [string, SignalType][] = [];
      const add = (labels: Record<string, string> | undefined, type: string) => {
        const t = signalTypeSchema.safeParse(type);
        if (labels?.object && t.success) members.push([labels.object, t.data]);
      };
      add(row.labels, row.signalType);
      for (const s of row.correlatedSignals ?? [])
        if (s.source === WATCHER_DETECTION_SOURCE) add(s.labels, s.signalType);
      // An Escalated incident waits for a human: the watcher must not resolve it (open: false).
      known.push({ workload, members, open: row.state !== 'Escalated' });
    }
    if (items.length < PAGE_SIZE) break;
  }
  return known;
}

export function createKubeWatchActivities({ config, client, taskQueue }: KubeWatchDeps) {
  const ops = { client, taskQueue };
  return {
    /** Watches one cluster for a round; returns the checkpoint for the next round. */
    async watchCluster(raw: WatchClusterInput): Promise<WatchCheckpoint> {
      const ctx = Context.current();
      const input = watchClusterInputSchema.parse(raw);
      // A retry (the previous worker died or the attempt failed) starts from its last heartbeated checkpoint.
      const beat = watchCheckpointSchema.safeParse(ctx.info.heartbeatDetails);
      const checkpoint = beat.success ? beat.data : input.checkpoint;
      // Non-retryable failures the workflow handles: ClusterNotFound ends the watch;
      // ClusterCredentialsUnreadable (e.g. a rotated FOGHORN_SECRET_KEY) is tried again later.
      const kc = await kubeConfigFor(input.cluster);
      const watcher = new ClusterWatcher({
        cluster: input.cluster,
        kc,
        thresholds: { notReadyAfterMs: config.FOGHORN_WATCH_NOT_READY_AFTER },
        deliver: (signal, status) => applySignal(ops, signal, status),
        knownIncidents: () => knownIncidents(input.cluster),
        log: ctx.log,
        changes: {
          sink: {
            changes: (c) => recordChanges(c),
            revision: recordRevision,
            availability: recordAvailability,
            latest: () => latestScaleAndConfig(input.cluster),
          },
          hashKey: contentHashKey(),
          stableAfterMs: config.FOGHORN_REVISION_STABLE_AFTER,
          retentionMs: config.FOGHORN_CHANGE_RETENTION,
        },
      });
      if (checkpoint) watcher.restore(checkpoint);
      ctx.log.info('cluster watch starting', {
        cluster: input.cluster,
        resumed: beat.success ? 'heartbeat' : checkpoint ? 'previous round' : 'fresh',
        attempt: ctx.info.attempt,
      });
      ctx.heartbeat(checkpoint);
      const heartbeat = setInterval(() => ctx.heartbeat(watcher.checkpoint()), HEARTBEAT_MS);
      // Retention while the watch runs: a prune over a large record takes seconds, and must not
      // keep the round's first heartbeat waiting. A failed prune is tried again next round.
      const pruning = pruneChanges(
        input.cluster,
        new Date(Date.now() - config.FOGHORN_CHANGE_RETENTION),
        config.FOGHORN_CHANGE_MAX_RECORDS,
      ).then(
        (pruned) => ctx.log.info('change record pruned', { cluster: input.cluster, pruned }),
        (err: unknown) =>
          ctx.log.warn('change record not pruned; next round tries again', {
            cluster: input.cluster,
            error: err instanceof Error ? err.constructor.name : typeof err,
          }),
      );
      try {
        await Promise.race([watcher.start(), ctx.cancelled]);
        await ctx.sleep(input.roundMs ?? DEFAULT_ROUND_MS); // rejects when cancelled (cluster deleted)
      } finally {
        // Heartbeats go on until stop() is done (it waits for deliveries in flight, bounded):
        // a silent stop past the heartbeat timeout would let a second attempt start beside this one.
        try {
          await watcher.stop();
          await pruning;
        } finally {
          clearInterval(heartbeat);
        }
      }
      const result = watcher.checkpoint();
      ctx.log.info('cluster watch round done', {
        cluster: input.cluster,
        ...watcher.stats,
        ...watcher.trackerStats(),
        ...(watcher.changes && { changes: watcher.changes.stats }),
      });
      return result;
    },
  };
}

export type KubeWatchActivities = ReturnType<typeof createKubeWatchActivities>;
