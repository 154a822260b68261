import { existsSync } from 'fs';
import path from 'path';
import { DEFAULT_TEMPORAL_MEMORY } from '../../config/env';
import { SEARCH_ATTRIBUTES } from '../../workflows/search-attributes';
import { TOOLS_DIR } from '../paths';
import { diesWithParent, spawnServer, type ServerProcess } from './process';

export interface EmbeddedTemporal extends ServerProcess {
  address: string;
  uiUrl?: string;
}

/** How often the history service may read each of its task queues (the server's default is 20). */
export const QUEUE_POLLS_PER_SECOND = 200;
/** History events after which a run is told to continue as new (the server's default is 4,096). */
export const CONTINUE_AS_NEW_EVENTS = 1024;
/** Matching partitions of each task queue (the server's default is 4). */
export const TASK_QUEUE_PARTITIONS = 1;
/**
 * Consecutive failed (or timed-out) workflow tasks after which Temporal flags a workflow in
 * `TemporalReportedProblems`, as Temporal Cloud does; self-hosted servers leave it to this setting.
 */
export const TASK_PROBLEMS_REPORTED_AFTER = 2;
/** Executions the history service keeps in memory (by default, every one touched in the last hour). */
export const HISTORY_CACHE_EXECUTIONS = 2048;

/** The dev server's setting for {@link TASK_PROBLEMS_REPORTED_AFTER} (tests' servers use it too). */
export const TASK_PROBLEMS_SETTING = `system.numConsecutiveWorkflowTaskProblemsToTriggerSearchAttribute=${TASK_PROBLEMS_REPORTED_AFTER}`;

const typeNames: Record<string, string> = {
  KEYWORD: 'Keyword',
  TEXT: 'Text',
  INT: 'Int',
  DOUBLE: 'Double',
  BOOL: 'Bool',
  DATETIME: 'Datetime',
  KEYWORD_LIST: 'KeywordList',
};

/**
 * The Temporal CLI's dev server (DESIGN §3) with Foghorn's search attributes registered.
 * `dbFile` persists workflows across restarts; without it they live in memory.
 */
export async function startEmbeddedTemporal(opts: {
  port: number;
  uiPort?: number;
  dbFile?: string;
  namespace?: string;
  /** How often the history service may read each task queue; benchmarks compare the server's 20. */
  queuePollsPerSecond?: number;
  /** Go's memory limit when persisting to disk (FOGHORN_TEMPORAL_MEMORY); in memory, no limit. */
  memory?: string;
}): Promise<EmbeddedTemporal> {
  const binary = path.join(TOOLS_DIR, 'temporal');
  if (!existsSync(binary)) throw new Error('the Temporal CLI is not installed: run `npm run bootstrap`');
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(opts.port), '--log-level', 'warn'];
  args.push(...(opts.uiPort ? ['--ui-port', String(opts.uiPort)] : ['--headless']));
  args.push('--http-port', '0', '--metrics-port', '0');
  // Write-ahead log: one append and one fsync per transaction, where SQLite's default rollback
  // journal writes and syncs several times; as durable (synchronous stays FULL). Temporal's
  // writes bound a burst of remediations (docs/decisions.md, "Embedded servers").
  if (opts.dbFile) args.push('--db-filename', opts.dbFile, '--sqlite-pragma', 'journal_mode=wal');
  // The history service reads its queues (tasks for matching, due timers, visibility) at most
  // 20 times a second by default: ~30 ms of waiting in every workflow task on a quiet server,
  // where the work itself takes 2 ms. One host, one SQLite file: reading 200 times a second
  // costs little (docs/decisions.md, "Embedded servers").
  for (const key of ['transfer', 'timer', 'visibility'])
    args.push(
      '--dynamic-config-value',
      `history.${key}ProcessorMaxPollRPS=${opts.queuePollsPerSecond ?? QUEUE_POLLS_PER_SECOND}`,
    );
  // An incident taking a storm's duplicates adds ~100 events a minute. Every workflow a worker
  // does not hold in its cache (evicted, or the worker restarted) replays its whole history, and
  // the server keeps per-run state that grows with it: a quarter of the default bounds both
  // (docs/decisions.md, "Embedded servers").
  args.push('--dynamic-config-value', `limit.historyCount.suggestContinueAsNew=${CONTINUE_AS_NEW_EVENTS}`);
  // One matching partition per task queue (the server's default is four, for many pollers on many
  // hosts). One worker's few pollers leave tasks waiting in partitions they do not visit: in a
  // storm, new incidents waited 0–81 s for their first workflow task, in no order, all along;
  // with one partition they wait their turn and the backlog drains (docs/decisions.md,
  // "Embedded servers").
  for (const kind of ['Read', 'Write'])
    args.push('--dynamic-config-value', `matching.numTaskqueue${kind}Partitions=${TASK_QUEUE_PARTITIONS}`);
  // The history service caches every execution it touches, closed ones included, for an hour: in
  // a storm its heap grew with the incidents seen (3.5 entries each) until Go, collecting at the
  // fixed memory limit, ran ever more often. A few times the running workflows is plenty; one that
  // left the cache is read back from SQLite at its next task (docs/decisions.md, "Embedded servers").
  args.push('--dynamic-config-value', `history.hostLevelCacheMaxSize=${HISTORY_CACHE_EXECUTIONS}`);
  // A workflow whose task keeps failing makes no progress: flagged after two failures in a row,
  // it shows in /metrics (foghorn_workflows_task_failing) and the UI's "Task Failures" view
  // within seconds instead of after the fifth attempt's back-off (~50 s).
  args.push('--dynamic-config-value', TASK_PROBLEMS_SETTING);
  if (opts.namespace && opts.namespace !== 'default') args.push('--namespace', opts.namespace);
  for (const key of SEARCH_ATTRIBUTES) args.push('--search-attribute', `${key.name}=${typeNames[key.type]}`);
  // The dev server prints its addresses once every service is up.
  // The MongoDB launcher exits when its stdin closes; the Temporal CLI does not.
  const [command, commandArgs] = diesWithParent(binary, args);
  const server = await spawnServer(
    'Temporal dev server',
    command,
    commandArgs,
    (line) => /^Temporal Server:\s+\S+/.test(line),
    {
      timeoutMs: 90_000,
      // Persisting, Go collects when its memory reaches the limit instead of whenever the heap
      // doubles: the server's RSS is the limit (plus SQLite's pages), not twice whatever its runs
      // hold at the moment (docs/decisions.md, "Embedded servers"). In memory the data is the heap.
      ...(opts.dbFile && {
        env: { ...process.env, GOGC: 'off', GOMEMLIMIT: opts.memory ?? DEFAULT_TEMPORAL_MEMORY },
      }),
    },
  );
  return {
    ...server,
    address: `127.0.0.1:${opts.port}`,
    ...(opts.uiPort && { uiUrl: `http://127.0.0.1:${opts.uiPort}` }),
  };
}
