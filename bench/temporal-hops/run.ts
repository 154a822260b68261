/**
 * What one hop through the embedded Temporal costs, with nothing of Foghorn's in the way: a
 * workflow of three workflow tasks and two no-op activities, run one at a time on a fresh
 * in-memory dev server, once with the server's default queue reads (20 a second per history
 * queue) and once with Foghorn's (`QUEUE_POLLS_PER_SECOND`). Prints the per-workflow latency and,
 * from one workflow's history, the gap between each workflow task's scheduling and its start.
 * Usage: npx ts-node --transpile-only bench/temporal-hops/run.ts [workflows=40]
 */
import { Client, Connection } from '@temporalio/client';
import { tsToMs } from '@temporalio/common/lib/time';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { QUEUE_POLLS_PER_SECOND, startEmbeddedTemporal } from '../../cli/embedded/temporal';
import { freePort } from '../../test/harness/ports';
import { summary } from '../stats';

const WORKFLOWS = Number(process.argv[2] ?? 40);
/** The first workflows ride the rate limiter's burst allowance; they are not measured. */
const UNMEASURED = 10;

async function measure(queuePollsPerSecond: number) {
  const temporal = await startEmbeddedTemporal({ port: await freePort(), queuePollsPerSecond });
  const connection = await NativeConnection.connect({ address: temporal.address });
  const worker = await Worker.create({
    connection,
    taskQueue: 'hops',
    workflowsPath: require.resolve('./workflows'),
    activities: { noop: async () => undefined },
  });
  const client = new Client({ connection: await Connection.connect({ address: temporal.address }) });
  try {
    return await worker.runUntil(async () => {
      const latencies: number[] = [];
      for (let i = 0; i < UNMEASURED + WORKFLOWS; i++) {
        const started = performance.now();
        await client.workflow.execute('twoHops', { taskQueue: 'hops', workflowId: `hops-${i}` });
        if (i >= UNMEASURED) latencies.push(performance.now() - started);
      }
      const events = (await client.workflow.getHandle(`hops-${UNMEASURED}`).fetchHistory()).events ?? [];
      const gaps: number[] = [];
      events.forEach((e, i) => {
        if (!e.workflowTaskStartedEventAttributes) return;
        const scheduled = events
          .slice(0, i)
          .reverse()
          .find((s) => s.workflowTaskScheduledEventAttributes);
        gaps.push(tsToMs(e.eventTime) - tsToMs(scheduled?.eventTime));
      });
      return { latencies, gaps };
    });
  } finally {
    await client.connection.close();
    await connection.close();
    await temporal.stop();
  }
}

async function main() {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  console.log(`${WORKFLOWS} workflows one at a time (3 workflow tasks, 2 activities each), in-memory dev server`);
  console.log('| history queue reads per second | workflow p50 / p99 ms | workflow task scheduled → started, ms |');
  console.log('|---|---|---|');
  for (const rate of [20, QUEUE_POLLS_PER_SECOND]) {
    const { latencies, gaps } = await measure(rate);
    const { p50, p99 } = summary(latencies);
    console.log(
      `| ${rate}${rate === 20 ? " (the server's default)" : ' (Foghorn)'} | ${p50.toFixed(0)} / ${p99.toFixed(0)} | ${gaps.join(', ')} |`,
    );
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
