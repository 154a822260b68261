import { execFileSync } from 'child_process';
import { mkdtempSync, readFileSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import path from 'path';
import { firingAlert } from '../../bench/fixtures';
import { descendants, devEnv, startDev, stopDev, waitReady, type DevProcess } from '../harness/dev-process';
import { alive, until } from '../harness/processes';
import { CONTINUE_AS_NEW_EVENTS, HISTORY_CACHE_EXECUTIONS, TASK_QUEUE_PARTITIONS } from '../../cli/embedded/temporal';

/**
 * `foghorn dev` runs its worker in a process of its own (issue 14), supervised like the embedded
 * servers: a kill -9 of the worker costs a restart, never an incident, and no secret is on its
 * command line or in its environment. The embedded store reserves the heap it is configured
 * with as it starts, Temporal bounds every run's history and collects at its configured memory,
 * and the worker's V8 heaps have the configured limit, also after a restart.
 */
const WEBHOOK_SECRET = 'whsec-dev-worker-test-0123456789abcdef';
const MONGO_HEAP = '384m';
const TEMPORAL_MEMORY = '288MiB';
const WORKER_HEAP = 640;

const args = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return '';
  }
};

/** The process below `foghorn dev` whose command line matches, if one runs. */
const below = (dev: DevProcess, pattern: RegExp) => descendants(dev.child.pid!).find((pid) => pattern.test(args(pid)));
/** The worker process below `foghorn dev`, if one runs. */
const workerPid = (dev: DevProcess) => below(dev, /foghorn\.js worker --supervised/);

describe('foghorn dev: the worker in its own process (e2e)', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'foghorn-dev-worker-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('runs the worker apart, recovers from its kill -9 without losing an incident, and stops it', async () => {
    const env = {
      ...(await devEnv(dataDir)),
      FOGHORN_WEBHOOK_SECRET: WEBHOOK_SECRET,
      FOGHORN_MONGO_HEAP: MONGO_HEAP,
      FOGHORN_TEMPORAL_MEMORY: TEMPORAL_MEMORY,
      FOGHORN_WORKER_HEAP: String(WORKER_HEAP),
      // The test polls seven reads at a time until the restarted worker has caught up; on a busy
      // machine that outruns the default 600 a minute, which this test is not about.
      FOGHORN_RATE_LIMIT: '100000',
    };
    const dev = await startDev(env);
    let kids: number[] = [];
    try {
      await waitReady(dev.api);
      const first = workerPid(dev);
      expect(first).toBeDefined();
      expect(first).not.toBe(dev.child.pid);
      const temporal = below(dev, /temporal server start-dev/);
      expect(temporal).toBeDefined();
      // Memory bounded by configuration (docs/decisions.md, "Performance and capacity").
      const mongo = below(dev, /MongoLauncher/);
      expect(args(mongo!).split(' ')).toEqual(
        expect.arrayContaining([`-Xms${MONGO_HEAP}`, `-Xmx${MONGO_HEAP}`, '-XX:+AlwaysPreTouch']),
      );
      expect(args(temporal!)).toContain(`limit.historyCount.suggestContinueAsNew=${CONTINUE_AS_NEW_EVENTS}`);
      // One worker polls: one matching partition, so queued tasks wait in order.
      for (const kind of ['Read', 'Write'])
        expect(args(temporal!)).toContain(`matching.numTaskqueue${kind}Partitions=${TASK_QUEUE_PARTITIONS}`);
      // Its history cache bounded by configuration, not by the executions seen.
      expect(args(temporal!)).toContain(`history.hostLevelCacheMaxSize=${HISTORY_CACHE_EXECUTIONS}`);
      // Go collects at the configured limit, not whenever the heap doubles.
      const temporalEnv = readFileSync(`/proc/${temporal!}/environ`, 'utf8').split('\0');
      expect(temporalEnv).toEqual(expect.arrayContaining(['GOGC=off', `GOMEMLIMIT=${TEMPORAL_MEMORY}`]));
      // V8 collects the worker's heaps at the configured limit, not at a quarter of the machine.
      expect(args(first!).split(' ')).toContain(`--max-old-space-size=${WORKER_HEAP}`);
      // Two malloc arenas, not one per thread.
      const workerEnv = readFileSync(`/proc/${first!}/environ`, 'utf8').split('\0');
      expect(workerEnv).toContain('MALLOC_ARENA_MAX=2');
      for (const file of ['cmdline', 'environ']) {
        const text = readFileSync(`/proc/${first!}/${file}`, 'utf8');
        expect(text).not.toContain(WEBHOOK_SECRET);
        expect(text).not.toContain(dev.token);
      }

      const headers = { authorization: `Bearer ${dev.token}`, 'content-type': 'application/json' };
      /** 202, or what else answered (the body says who, should this ever fail again). */
      const fire = async (deployment: string) => {
        const res = await fetch(`${dev.api}/alerts/alertmanager`, {
          method: 'POST',
          headers,
          body: JSON.stringify(firingAlert('shop', deployment, `fp-${deployment}`)),
        });
        return res.status === 202 ? 202 : `${res.status} from ${dev.api}: ${await res.text()}`;
      };
      const before = await Promise.all(['a', 'b', 'c'].map((d) => fire(`before-${d}`)));
      process.kill(first!, 'SIGKILL'); // while their workflows run
      await until('the worker gone', () => !alive(first!), 10_000);
      // The API stays up meanwhile: alerts are accepted with no worker at all.
      const during = await Promise.all(['a', 'b', 'c'].map((d) => fire(`during-${d}`)));
      expect([...before, ...during]).toEqual(Array(6).fill(202));
      await until(
        'the worker restarted by foghorn dev',
        () => (workerPid(dev) ?? first) !== first,
        120_000,
        dev.output,
      );

      // Every incident is there and its workflow went on past detection (the analysis runs in the worker).
      let refused = '';
      /** A GET's JSON, or undefined when the API refused it (e.g. 503 while the worker restarts). */
      const read = async <T>(p: string): Promise<T | undefined> => {
        const res = await fetch(`${dev.api}${p}`, { headers });
        if (res.ok) return (await res.json()) as T;
        refused = `last refused poll: ${res.status} ${await res.text()}`;
        return undefined;
      };
      const names = async () =>
        (await read<{ items: { name: string; resource: string }[] }>('/incidents?namespace=shop&pageSize=100'))
          ?.items ?? [];
      const analysed = async (name: string) =>
        (await read<{ events: { type: string }[] }>(`/incidents/${name}/timeline`))?.events.some(
          (e) => e.type === 'Analysis',
        ) ?? false;
      await until(
        'six incidents, each analysed',
        async () => {
          const items = await names();
          return items.length === 6 && (await Promise.all(items.map((i) => analysed(i.name)))).every(Boolean);
        },
        180_000,
        () => `${refused}\n${dev.output()}`,
      );
      expect((await names()).map((i) => i.resource).sort()).toEqual(
        ['a', 'b', 'c'].flatMap((d) => [`Deployment/before-${d}`, `Deployment/during-${d}`]).sort(),
      );
      expect(dev.output()).toMatch(/worker exited unexpectedly; restarting it/);
      expect(args(workerPid(dev)!).split(' ')).toContain(`--max-old-space-size=${WORKER_HEAP}`);
    } finally {
      kids = descendants(dev.child.pid!);
      await stopDev(dev);
    }
    expect(kids.filter(alive)).toEqual([]); // the worker stopped with foghorn dev, and the servers
    expect(execFileSync('ps', ['-e', '-o', 'args='], { encoding: 'utf8' })).not.toContain(dataDir);
  }, 400_000);
});
