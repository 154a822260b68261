import { Counter, type Registry } from 'prom-client';
import { mongoReady } from '../store/connection';
import { repairTotals } from '../store/reconcile';

/**
 * Metrics whose truth is in MongoDB, read at scrape time: the reconciler runs in whichever
 * worker Temporal picks, so only the store knows the totals of all of them.
 */
export function registerStoreMetrics(registry: Registry): void {
  new Counter({
    name: 'foghorn_reconciler_repairs_total',
    help: 'Repairs made by the reconciler, by kind (see docs/reliability.md)',
    labelNames: ['kind'] as const,
    registers: [registry],
    async collect() {
      // During an outage the scrape still succeeds, showing the totals last read.
      if (!mongoReady()) return;
      const totals = await repairTotals().catch(() => undefined);
      if (!totals) return;
      this.reset();
      for (const [kind, count] of Object.entries(totals)) this.inc({ kind }, count);
    },
  });
}
