import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { handOverLateMessages, LateHandOverError } from '../operations/chat-dispatch';
import {
  reconcileDedupEntries,
  reconcileIncidentRecords,
  reconcileSignalInbox,
  reconcileOrphanWorkflows,
  type Repair,
  type RepairKind,
} from '../operations/reconcile';
import { countRepairs } from '../store/reconcile';

export interface ReconcileActivityDeps {
  client: Client;
  taskQueue: string;
  /** How long a state must have been still before the reconciler treats it as stuck. */
  graceMs: number;
}

/** Messages younger than this are the gateway's own to hand over (its deadline is seconds). */
const CHAT_GRACE_MS = 15_000;

/**
 * The reconciler's side effects (workflows/reconciler.ts). Each repair is logged with what was
 * wrong and counted in MongoDB, where /metrics reads `foghorn_reconciler_repairs_total`. Both
 * heartbeat for every item they look at, so a long pass is never mistaken for a dead worker.
 */
export function createReconcileActivities(deps: ReconcileActivityDeps) {
  /** Logs each repair (or a count of one kind) and adds them to the totals. */
  const record = async (repairs: Repair[], extra?: { kind: RepairKind; count: number }): Promise<number> => {
    const log = Context.current().log;
    const counts: Record<string, number> = {};
    for (const r of repairs) {
      log.warn('reconciler repaired', { kind: r.kind, subject: r.subject, detail: r.detail });
      counts[r.kind] = (counts[r.kind] ?? 0) + 1;
    }
    if (extra && extra.count > 0) {
      log.warn('reconciler repaired', { kind: extra.kind, count: extra.count });
      counts[extra.kind] = (counts[extra.kind] ?? 0) + extra.count;
    }
    await countRepairs(counts);
    return repairs.length + (extra?.count ?? 0);
  };

  return {
    async reconcileIncidents(): Promise<number> {
      const activity = Context.current();
      const options = {
        client: deps.client,
        taskQueue: deps.taskQueue,
        graceMs: deps.graceMs,
        progress: () => activity.heartbeat(),
      };
      return record([
        ...(await reconcileDedupEntries(options)),
        ...(await reconcileIncidentRecords(options)),
        ...(await reconcileSignalInbox(options)),
        ...(await reconcileOrphanWorkflows(options)),
      ]);
    },

    async reconcileChats(): Promise<number> {
      const activity = Context.current();
      const handedOver = (count: number) => record([], { kind: 'chat-message-handed-over', count });
      try {
        return await handedOver(
          await handOverLateMessages(deps, new Date(Date.now() - CHAT_GRACE_MS), () => {
            activity.heartbeat();
            return activity.cancellationSignal.aborted;
          }),
        );
      } catch (err) {
        // Some chats could not be handed over (Temporal or MongoDB trouble): count the others,
        // then fail so the activity is retried.
        if (err instanceof LateHandOverError) await handedOver(err.handedOver);
        throw err;
      }
    },
  };
}

export type ReconcileActivities = ReturnType<typeof createReconcileActivities>;
