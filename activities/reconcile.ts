import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { handOverLateMessages, LateHandOverError } from '../operations/chat-dispatch';
import {
  reconcileDedupEntries,
  reconcileIncidentRecords,
  reconcileOrphanWorkflows,
  type Repair,
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
 * wrong and counted in MongoDB, where /metrics reads `foghorn_reconciler_repairs_total`.
 */
export function createReconcileActivities(deps: ReconcileActivityDeps) {
  const report = async (repairs: Repair[]): Promise<number> => {
    const log = Context.current().log;
    for (const r of repairs) log.warn('reconciler repaired', { kind: r.kind, subject: r.subject, detail: r.detail });
    const counts: Record<string, number> = {};
    for (const r of repairs) counts[r.kind] = (counts[r.kind] ?? 0) + 1;
    await countRepairs(counts);
    return repairs.length;
  };
  const options = () => ({ client: deps.client, taskQueue: deps.taskQueue, graceMs: deps.graceMs });

  return {
    async reconcileIncidents(): Promise<number> {
      Context.current().heartbeat();
      const repairs = [
        ...(await reconcileDedupEntries(options())),
        ...(await reconcileIncidentRecords(options())),
        ...(await reconcileOrphanWorkflows(options())),
      ];
      return report(repairs);
    },

    async reconcileChats(): Promise<number> {
      const activity = Context.current();
      const count = async (handedOver: number) => {
        if (handedOver > 0)
          activity.log.warn('reconciler repaired', { kind: 'chat-message-handed-over', count: handedOver });
        await countRepairs({ 'chat-message-handed-over': handedOver });
        return handedOver;
      };
      try {
        return await count(
          await handOverLateMessages(
            deps,
            new Date(Date.now() - CHAT_GRACE_MS),
            () => activity.cancellationSignal.aborted,
          ),
        );
      } catch (err) {
        // Some chats could not be handed over (Temporal or MongoDB trouble): count the others,
        // then fail so the activity is retried.
        if (err instanceof LateHandOverError) await count(err.handedOver);
        throw err;
      }
    },
  };
}

export type ReconcileActivities = ReturnType<typeof createReconcileActivities>;
