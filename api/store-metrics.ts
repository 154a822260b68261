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
      if (!mongoReady()) return; // a scrape during an outage shows no value rather than failing
      this.reset();
      for (const [kind, count] of Object.entries(await repairTotals())) this.inc({ kind }, count);
    },
  });
}
