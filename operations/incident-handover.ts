import type { Client } from '@temporalio/client';
import type { CorrelatedSignal } from '../domain/incident-requests';
import type { IncidentRecord } from '../domain/incident-record';

/**
 * The hand-over of accepted signals to incident workflows, off the request path (issue 14): by
 * the time a signal gets here it is durable (an incident record, or a row in the incident's
 * signal inbox) and its sender has been answered. Per incident:
 * - a new incident's workflow is started;
 * - queued signals are told with one `signalsQueued` signal carrying their count, at most one
 *   per incident per COALESCE_MS, however many arrive (an alert storm is mostly duplicates);
 * - one call at a time, so a start is never overtaken by a signal-with-start of older arguments;
 * - Temporal unreachable: retried with backoff for a while, then left to the reconciler (which
 *   starts incidents without a workflow and tells incidents with old queued signals). Nothing
 *   is lost either way: the workflow drains its inbox as it starts and before it ends.
 * What it does with Temporal (start, signal, repair a closed run) is `IncidentCalls`, the
 * operations module's: this file owns the timing only.
 */
export interface IncidentCalls {
  /** Starts the incident's workflow; resolves when started (or already running). */
  start(incident: IncidentRecord): Promise<void>;
  /** Signal-with-start of signalsQueued; repairs a closed run itself. */
  tell(
    incident: IncidentRecord,
    queued: { count: number; last: Pick<CorrelatedSignal, 'signalType' | 'at'> },
  ): Promise<void>;
}

/** At most one signal per incident per this long. */
export const COALESCE_MS = 1_000;
/** One hand-over call may take this long before it counts as failed (and is retried). */
const CALL_DEADLINE_MS = 5_000;
const RETRY_FIRST_MS = 1_000;
const RETRY_MAX_MS = 30_000;
/** Failed tries before the reconciler is left to it (about 5 minutes of retries). */
const MAX_FAILURES = 14;

interface Pending {
  incident: IncidentRecord;
  start: boolean;
  count: number;
  last?: Pick<CorrelatedSignal, 'signalType' | 'at'>;
  lastSentAt: number;
  failures: number;
  busy: boolean;
  timer?: NodeJS.Timeout;
}

export class IncidentHandOver {
  private readonly pending = new Map<string, Pending>();
  private readonly inFlight = new Set<Promise<void>>();
  /**
   * One per call in flight: the client adds an abort listener (holding the call) to the signal it
   * is given and never removes it, so a signal shared by every call would keep every call alive.
   */
  private readonly calls = new Set<AbortController>();
  private stopped = false;

  constructor(
    private readonly client: Client,
    private readonly temporal: IncidentCalls,
    private readonly opts: {
      coalesceMs?: number;
      /** A call failed: retried in `retryInMs`, or (absent) left to the reconciler. */
      onError?: (incident: string, err: unknown, retryInMs?: number) => void;
    } = {},
  ) {}

  /**
   * Stops handing over: pending work is left to the reconciler and to the workflows' own drains,
   * calls in flight are cancelled. Before the client's connection closes: a call retrying on a
   * closed connection would throw where nothing catches it.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const call of this.calls) call.abort();
    for (const p of this.pending.values()) clearTimeout(p.timer);
    this.pending.clear();
    await Promise.allSettled([...this.inFlight]);
  }

  /** A new incident was recorded: start its workflow. */
  started(incident: IncidentRecord): void {
    if (this.stopped) return; // the reconciler starts it
    const p = this.entry(incident);
    p.start = true;
    this.schedule(p, 0);
  }

  /** Signals were queued in the incident's inbox: tell its workflow (coalesced). */
  queued(incident: IncidentRecord, signals: Pick<CorrelatedSignal, 'signalType' | 'at'>[]): void {
    if (signals.length === 0 || this.stopped) return; // the workflow's drains and the reconciler have them
    const p = this.entry(incident);
    p.count += signals.length;
    p.last = signals[signals.length - 1];
    this.schedule(p, Math.max(0, p.lastSentAt + (this.opts.coalesceMs ?? COALESCE_MS) - Date.now()));
  }

  /** Incidents with something not yet handed over (or in flight). */
  get size(): number {
    return [...this.pending.values()].filter((p) => p.start || p.count > 0 || p.busy).length;
  }

  private entry(incident: IncidentRecord): Pending {
    let p = this.pending.get(incident.name);
    if (!p) {
      p = { incident, start: false, count: 0, lastSentAt: 0, failures: 0, busy: false };
      this.pending.set(incident.name, p);
    }
    p.incident = incident; // the newest read: a restart carries its state
    return p;
  }

  private schedule(p: Pending, delayMs: number): void {
    if (p.busy || p.timer || this.stopped) return; // the call in flight reschedules when it ends
    p.timer = setTimeout(() => {
      p.timer = undefined;
      const sent = this.send(p);
      this.inFlight.add(sent);
      void sent.finally(() => this.inFlight.delete(sent));
    }, delayMs);
    p.timer.unref(); // a stopping process does not wait: the inbox and the reconciler have it
  }

  private async send(p: Pending): Promise<void> {
    const { start, count, last } = p;
    if (!start && count === 0) return this.forgetIfIdle(p);
    p.busy = true;
    p.start = false;
    p.count = 0;
    const call = new AbortController();
    this.calls.add(call);
    try {
      await this.client.withAbortSignal(call.signal, () =>
        this.client.withDeadline(Date.now() + CALL_DEADLINE_MS, () =>
          count > 0 && last ? this.temporal.tell(p.incident, { count, last }) : this.temporal.start(p.incident),
        ),
      );
      p.failures = 0;
      p.lastSentAt = Date.now();
    } catch (err) {
      p.start ||= start;
      p.count += count;
      p.last ??= last;
      p.failures++;
      p.busy = false;
      const retryInMs =
        p.failures >= MAX_FAILURES ? undefined : Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** (p.failures - 1));
      this.report(p.incident.name, err, retryInMs);
      if (retryInMs === undefined)
        this.pending.delete(p.incident.name); // the reconciler's now
      else this.schedule(p, retryInMs);
      return;
    } finally {
      this.calls.delete(call);
    }
    p.busy = false;
    // The next window: what arrived meanwhile goes then; with nothing, the entry is forgotten.
    this.schedule(p, this.opts.coalesceMs ?? COALESCE_MS);
  }

  private report(incident: string, err: unknown, retryInMs?: number): void {
    try {
      this.opts.onError?.(incident, err, retryInMs);
    } catch {
      // a reporting problem must not stop the hand-over
    }
  }

  private forgetIfIdle(p: Pending): void {
    if (!p.busy && !p.start && p.count === 0 && Date.now() - p.lastSentAt >= (this.opts.coalesceMs ?? COALESCE_MS))
      this.pending.delete(p.incident.name);
  }
}

/** One hand-over per Temporal client and task queue, made on first use. */
const handOvers = new WeakMap<Client, Map<string, IncidentHandOver>>();
export function handOverFor(client: Client, taskQueue: string, make: () => IncidentHandOver): IncidentHandOver {
  let byQueue = handOvers.get(client);
  if (!byQueue) handOvers.set(client, (byQueue = new Map()));
  let h = byQueue.get(taskQueue);
  if (!h) byQueue.set(taskQueue, (h = make()));
  return h;
}

/** Stops the client's hand-overs: call it before closing the client's connection. */
export async function stopHandOvers(client: Client): Promise<void> {
  const byQueue = handOvers.get(client);
  handOvers.delete(client);
  await Promise.all([...(byQueue?.values() ?? [])].map((h) => h.stop()));
}
