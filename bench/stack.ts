import path from 'path';
import { devEnv, startDev, stopDev, waitReady, type DevProcess } from '../test/harness/dev-process';
import { useReplicaStack } from '../test/harness/replica-stack';
import { flag } from './args';
import { cpuSeconds, stackCpu } from './processes';

/**
 * The stack a benchmark measures: `foghorn dev` (the embedded default), or with
 * `--replicas=APIS,WORKERS` that many `foghorn api` and `foghorn worker` processes over the same
 * embedded Temporal and MongoDB-wire servers (test/harness/replica-stack.ts), as production
 * scales out. The load goes to each API alike (`api(i)`), as a round-robin load balancer
 * would send it.
 */
export interface BenchStack {
  /** `foghorn dev`, or `2 APIs + 2 workers` */
  label: string;
  apis: string[];
  /** The API for the i-th request. */
  api(i: number): string;
  token: string;
  /** The embedded Temporal's address. */
  temporal: string;
  /** The `foghorn dev` process (undefined with --replicas). */
  dev?: DevProcess;
  /** A reader of the CPU seconds each process has used so far, by name (as bench/processes.ts stackCpu). */
  cpu(): () => Map<string, number>;
  shutdown(): Promise<void>;
}

/** `--replicas=2,2`: APIs and workers; undefined without the flag. */
export function replicasFlag(): { apis: number; workers: number } | undefined {
  const value = flag('replicas');
  if (value === undefined) return undefined;
  const [apis, workers] = value.split(',').map(Number);
  if (!(apis >= 1 && workers >= 1)) throw new Error(`--replicas=APIS,WORKERS, e.g. --replicas=2,2 (got ${value})`);
  return { apis, workers };
}

/** Starts the stack on a fresh data directory, ready to serve; `env` goes to every process. */
export async function startBenchStack(
  dataDir: string,
  env: NodeJS.ProcessEnv,
  nodeFlags: string[] = [],
): Promise<BenchStack> {
  const replicas = replicasFlag();
  if (!replicas) {
    const base = await devEnv(dataDir);
    const dev = await startDev({ ...base, ...env }, [], nodeFlags);
    await waitReady(dev.api);
    return {
      label: 'foghorn dev',
      apis: [dev.api],
      api: () => dev.api,
      token: dev.token,
      temporal: `127.0.0.1:${base.FOGHORN_TEMPORAL_PORT}`,
      dev,
      cpu: () => stackCpu(dev.child.pid!),
      shutdown: () => stopDev(dev),
    };
  }
  if (nodeFlags.length) throw new Error('node flags (--js-profile) are for foghorn dev only');
  const stack = await useReplicaStack(path.join(dataDir, 'replicas'), { ...replicas, env });
  return {
    label: `${replicas.apis} API${replicas.apis > 1 ? 's' : ''} + ${replicas.workers} worker${replicas.workers > 1 ? 's' : ''}`,
    apis: stack.apis,
    api: (i) => stack.apis[i % stack.apis.length],
    token: stack.token,
    temporal: stack.temporalAddress,
    cpu: () => {
      const procs = stack.processes();
      return () => new Map(procs.map((p) => [p.name, cpuSeconds(p.pid)]));
    },
    shutdown: () => stack.shutdown(),
  };
}
