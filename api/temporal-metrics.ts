import type { Client } from '@temporalio/client';
import { defineSearchAttributeKey } from '@temporalio/common';
import { Gauge, type Registry } from 'prom-client';

/**
 * Running workflows whose workflow task keeps failing: Temporal flags them with its
 * `TemporalReportedProblems` search attribute (a nondeterminism error after a bad deploy, a bug
 * that throws in workflow code) and clears it at their next successful task. Such a workflow
 * answers no query, takes no decision and makes no progress, yet nothing else reports it: the
 * reconciler cannot repair it (docs/reliability.md §4).
 */
export const REPORTED_PROBLEMS = defineSearchAttributeKey('TemporalReportedProblems', 'KEYWORD_LIST');
const TASK_FAILING_QUERY = `ExecutionStatus = "Running" AND ${REPORTED_PROBLEMS.name} IS NOT NULL`;
/** A scrape does not wait longer than this for Temporal's count. */
const COUNT_DEADLINE_MS = 2_000;

/** Metrics whose truth is in Temporal's visibility store, read at scrape time. */
export function registerTemporalMetrics(registry: Registry, client?: Client): void {
  if (!client) return;
  new Gauge({
    name: 'foghorn_workflows_task_failing',
    help: 'Running workflows whose workflow task keeps failing (TemporalReportedProblems); see docs/reliability.md',
    registers: [registry],
    async collect() {
      // Temporal down or too old to know the attribute: the scrape still succeeds, with the
      // value last read.
      const counted = await client
        .withDeadline(Date.now() + COUNT_DEADLINE_MS, () => client.workflow.count(TASK_FAILING_QUERY))
        .catch(() => undefined);
      if (counted) this.set(counted.count);
    },
  });
}
