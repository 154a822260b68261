import type { IncidentRecord } from '../domain/incident-record';

type Opened = { created: boolean; incident: IncidentRecord };

/**
 * One open-or-join read per resource key at a time in this process (issue 14): signals for a
 * resource whose read is in flight wait for it and join what it found or created, instead of
 * each polling the store while the creator writes (a storm's first alerts all arrive at once).
 * A follower joins what a read answered when the store processed it, as its own read would have.
 *
 * Nothing is remembered past the read. A cache of each resource's open incident (1 s) was tried
 * and dropped: an alert joined from memory after the incident was resolved could be queued after
 * the workflow's last drain, and would then be ingested again as another incident than the one
 * its sender was told (docs/decisions.md).
 */
export class JoinReads {
  private readonly reading = new Map<string, Promise<Opened>>();
  /** Reads in flight when their key was forgotten. */
  private readonly voided = new WeakSet<Promise<Opened>>();

  /**
   * What `read` (the store's openOrJoin) finds for `key`, or what the read in flight for it
   * finds. Never `created` for a follower; a failed or voided read sends the followers to read
   * for themselves.
   */
  async openOrJoin(key: string, read: () => Promise<Opened>): Promise<Opened> {
    const inFlight = this.reading.get(key);
    if (inFlight) {
      const led = await inFlight.catch(() => undefined);
      if (led && !this.voided.has(inFlight)) return { created: false, incident: led.incident };
      return this.openOrJoin(key, read);
    }
    const mine = read();
    this.reading.set(key, mine);
    try {
      return await mine;
    } finally {
      if (this.reading.get(key) === mine) this.reading.delete(key);
    }
  }

  /**
   * Voids the read in flight for `key` (this process resolved its incident or cleared its
   * entry): it may have been read before, so the signals waiting for it read again.
   */
  forget(key: string): void {
    const inFlight = this.reading.get(key);
    if (!inFlight) return;
    this.voided.add(inFlight);
    this.reading.delete(key);
  }
}

/** The process's reads: every ingest path of the process shares them. */
export const joinReads = new JoinReads();
