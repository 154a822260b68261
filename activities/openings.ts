/**
 * A place is given back at most 5 s after its triage answered (a first step is recorded within a
 * second or two of it on a busy worker); a triage waits at most 10 s for one; and none is held
 * longer than a triage's attempt may take (its start-to-close timeout, workflows/incident.ts).
 */
export const OPENING_TIMES = { holdMs: 5_000, maxWaitMs: 10_000, maxHoldMs: 2 * 60_000 };

/**
 * How many new incidents one worker takes through their opening at once: from the start of the
 * triage to the record of their first plan's first step. Past the limit, a triage waits for a
 * place, oldest first. Under a burst, a worker that opens everything at once shares its cores
 * among all the openings, and the first plan's first step waits for nearly all of them; one that
 * finishes the openings it has begun before it begins more runs its first plans sooner, at the
 * same throughput (docs/benchmarks.md, "Thirty-first pass").
 *
 * A scheduling preference, never a lock: a triage waits at most `maxWaitMs`, then goes ahead
 * over the limit, and a place whose first step is recorded elsewhere (another worker ran the
 * plan, or it never started) is given back `holdMs` after its triage answered. A worker's places
 * are its own: with several workers each orders its own openings.
 */
export class Openings {
  /** Held places by incident: the timer that gives each back if nothing else does. */
  private readonly held = new Map<string, NodeJS.Timeout>();
  /** Who waits for a place, oldest first: each takes one when called. */
  private readonly waiting: (() => void)[] = [];

  constructor(
    /** Places; 0: no limit (every triage goes ahead). */
    readonly limit: number,
    private readonly options: { holdMs: number; maxWaitMs: number; maxHoldMs: number },
  ) {}

  /** Places held now (over the limit only after waits that timed out). */
  get inUse(): number {
    return this.held.size;
  }

  /**
   * Takes a place for `incident`'s opening, waiting for one while all are held: at most
   * `maxWaitMs`, or until `signal` aborts (its reason thrown). Its own place already held (a
   * retried triage), it goes ahead.
   */
  async enter(incident: string, signal?: AbortSignal): Promise<void> {
    if (this.limit === 0 || this.held.has(incident)) return;
    if (this.held.size >= this.limit) return this.wait(incident, signal);
    this.hold(incident, this.options.maxHoldMs);
  }

  /**
   * The triage answered with a plan about to run: the place stays taken until its first step is
   * recorded (leave), at most `holdMs` more.
   */
  handOver(incident: string): void {
    if (this.held.has(incident)) this.hold(incident, this.options.holdMs);
  }

  /** The opening is over (its first step recorded, or nothing to run): the place goes to the oldest waiting. */
  leave(incident: string): void {
    const timer = this.held.get(incident);
    if (!timer) return;
    clearTimeout(timer);
    this.held.delete(incident);
    while (this.held.size < this.limit && this.waiting.length > 0) this.waiting.shift()!();
  }

  /** Held until given back, or for `ms` at most. */
  private hold(incident: string, ms: number): void {
    clearTimeout(this.held.get(incident));
    const timer = setTimeout(() => this.leave(incident), ms);
    timer.unref();
    this.held.set(incident, timer);
  }

  /** Queues `incident` for the next free place; settles once it holds one (or aborted). */
  private wait(incident: string, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const done = () => {
        clearTimeout(timeout);
        signal?.removeEventListener('abort', aborted);
        const i = this.waiting.indexOf(admit);
        if (i >= 0) this.waiting.splice(i, 1);
      };
      // Taken as it is given (not when the waiter runs again), so one leave admits one waiter.
      const admit = () => {
        done();
        this.hold(incident, this.options.maxHoldMs);
        resolve();
      };
      // Waited long enough: go ahead over the limit rather than hold the incident up.
      const timeout = setTimeout(admit, this.options.maxWaitMs);
      timeout.unref();
      const aborted = () => {
        done();
        reject(signal!.reason);
      };
      if (signal?.aborted) return aborted();
      signal?.addEventListener('abort', aborted, { once: true });
      this.waiting.push(admit);
    });
  }
}
