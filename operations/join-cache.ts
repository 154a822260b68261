import type { IncidentRecord } from '../domain/incident-record';

/** How long after a store read began this process trusts what it found. */
export const JOIN_CACHE_MS = 1_000;
const JOIN_CACHE_MAX = 10_000;

type Opened = { created: boolean; incident: IncidentRecord };

/**
 * The open incident each resource key joins, as this process last read it (its dedup entry and
 * record), for JOIN_CACHE_MS from the moment that read began. In a storm most alerts are
 * duplicates of a few resources, and each would otherwise make two reads before its one insert
 * (issue 14).
 *
 * Only a store read is remembered: a hit never extends an entry, so a steady stream of
 * duplicates cannot keep an incident that was resolved elsewhere joinable. `forget` (this
 * process resolved the incident, or cleared its entry) also voids the read in flight for the
 * key: what it finds is neither remembered nor joined by waiting followers, since it may have
 * been read before the resolve. What stays stale (a resolve by another process or by the
 * workflow itself, within the window) takes the paths the store alone already has: the
 * winding-down workflow records the signal as arrived after resolution, or, once it has closed,
 * the hand-over ingests it again as a new incident. Creating an incident never reads the cache:
 * the unique dedup entry alone decides, so dedup stays exact across processes.
 */
export class JoinCache {
  private readonly entries = new Map<string, { incident: IncidentRecord; until: number }>();
  private readonly reading = new Map<string, Promise<Opened>>();
  /** Reads in flight when their key was forgotten. */
  private readonly voided = new WeakSet<Promise<Opened>>();

  /** The remembered open incident of `key`, or else what `read` (the store's openOrJoin) finds. */
  async join(key: string, read: () => Promise<Opened>): Promise<Opened> {
    const known = this.get(key);
    return known ? { created: false, incident: known } : this.openOrJoin(key, read);
  }

  /**
   * One read per key at a time in this process: signals for a resource whose read is in flight
   * wait for it and join what it found or created, instead of each polling the store while the
   * creator writes (a storm's first alerts all arrive at once). Never `created` for a follower;
   * a failed or voided read sends the followers to read for themselves.
   */
  async openOrJoin(key: string, read: () => Promise<Opened>): Promise<Opened> {
    const inFlight = this.reading.get(key);
    if (inFlight) {
      const led = await inFlight.catch(() => undefined);
      if (led && !this.voided.has(inFlight)) return { created: false, incident: led.incident };
      return this.openOrJoin(key, read);
    }
    const began = Date.now();
    const mine = read();
    this.reading.set(key, mine);
    try {
      const opened = await mine;
      if (!this.voided.has(mine)) this.remember(key, opened.incident, began);
      return opened;
    } finally {
      if (this.reading.get(key) === mine) this.reading.delete(key);
    }
  }

  get(key: string): IncidentRecord | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.until > Date.now()) return entry.incident;
    this.entries.delete(key);
    return undefined;
  }

  /** Remembers an open incident read at `readAt` (a resolved one is never joined from memory). */
  remember(key: string, incident: IncidentRecord, readAt = Date.now()): void {
    if (incident.state === 'Resolved') {
      this.entries.delete(key);
      return;
    }
    if (this.entries.size >= JOIN_CACHE_MAX) this.entries.clear(); // bounded; refilled by the next reads
    this.entries.set(key, { incident, until: readAt + JOIN_CACHE_MS });
  }

  /** Forgets `key` and voids its read in flight. */
  forget(key: string): void {
    this.entries.delete(key);
    const inFlight = this.reading.get(key);
    if (inFlight) {
      this.voided.add(inFlight);
      this.reading.delete(key);
    }
  }
}

/** The process's cache: every ingest path of the process shares it. */
export const joinCache = new JoinCache();
