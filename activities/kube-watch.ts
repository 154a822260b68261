import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { z } from 'zod';
import type { Config } from '../domain/config';
import { ACTIVE_STATES, clusterSchema } from '../domain/incident';
import { parseWorkloadKey } from '../domain/kube-owners';
import { WATCHER_DETECTION_SOURCE } from '../domain/kube-signals';
import { watchCheckpointSchema, type WatchCheckpoint } from '../domain/kube-watch-state';
import { signalTypeSchema, type SignalType } from '../domain/vocabulary';
import { applySignal } from '../operations/signals';
import { listIncidents } from '../store/incidents';
import { kubeConfigFor } from './kube/client';
import { ClusterWatcher, type KnownIncident } from './kube-watch/engine';

/**
 * The cluster watcher as a long-running activity (issue 9 §3). It watches until `roundMs` has
 * passed and returns its checkpoint, so the workflow can continue-as-new; meanwhile it heartbeats
 * the same checkpoint, and a retry on another worker (this one died) resumes from it: relist,
 * then send only the difference — failures that began while nobody watched, and recoveries.
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
const MAX_KNOWN_INCIDENTS = 5_000;
const PAGE_SIZE = 100;

/**
 * The open incidents this watcher opened on `cluster`, with the members their signals named.
 * Pages through the open incidents (few, whatever the history holds) and keeps this cluster's.
 */
async function knownIncidents(cluster: string): Promise<KnownIncident[]> {
  const known: KnownIncident[] = [];
  for (let page = 1; page <= MAX_KNOWN_INCIDENTS / PAGE_SIZE; page++) {
    const { items } = await listIncidents({ state: ACTIVE_STATES }, page, PAGE_SIZE);
    for (const row of items) {
      if (row.cluster !== cluster || row.detectionSource !== WATCHER_DETECTION_SOURCE) continue;
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
      // A retry (the previous worker died or the attempt failed) resumes from its last heartbeat.
      const beat = watchCheckpointSchema.safeParse(ctx.info.heartbeatDetails);
      const checkpoint = beat.success ? beat.data : input.checkpoint;
      const kc = await kubeConfigFor(input.cluster); // ClusterNotFound: non-retryable, ends the workflow
      const watcher = new ClusterWatcher({
        cluster: input.cluster,
        kc,
        thresholds: { notReadyAfterMs: config.FOGHORN_WATCH_NOT_READY_AFTER },
        deliver: (signal, status) => applySignal(ops, signal, status),
        knownIncidents: () => knownIncidents(input.cluster),
        log: ctx.log,
      });
      if (checkpoint) watcher.restore(checkpoint);
      ctx.log.info('cluster watch starting', {
        cluster: input.cluster,
        resumed: beat.success ? 'heartbeat' : checkpoint ? 'previous round' : 'fresh',
        attempt: ctx.info.attempt,
      });
      ctx.heartbeat(checkpoint);
      const heartbeat = setInterval(() => ctx.heartbeat(watcher.checkpoint()), HEARTBEAT_MS);
      try {
        await Promise.race([watcher.start(), ctx.cancelled]);
        await ctx.sleep(input.roundMs ?? DEFAULT_ROUND_MS); // rejects when cancelled (cluster deleted)
      } finally {
        clearInterval(heartbeat);
        await watcher.stop();
      }
      const result = watcher.checkpoint();
      ctx.log.info('cluster watch round done', { cluster: input.cluster, ...watcher.stats, ...watcher.trackerStats() });
      return result;
    },
  };
}

export type KubeWatchActivities = ReturnType<typeof createKubeWatchActivities>;
