/**
 * Group commit for a collection's inserts: the first insert goes out at once, and the inserts
 * asked for while it is in flight go out together as the next one (one `insertMany`), so a
 * storm of small inserts costs the store one command per round trip rather than one per request.
 * Each caller's promise settles with the insert that carried its documents: resolved means
 * stored, so "durable before acknowledged" holds per caller. Documents keep the order they were
 * added in (an ordered insert), which keeps a queue's order. An insert that returns one result
 * per document (`R`) hands each caller the results of its own documents. Writes that batch the
 * same way use it too: audit appends (store/audit.ts), name allocations (store/names.ts).
 */
export class GroupInsert<T, R = never> {
  private waiting: { docs: T[]; resolve: (results: R[]) => void; reject: (err: unknown) => void }[] = [];
  private flushing = false;

  constructor(
    private readonly insert: (docs: T[]) => Promise<R[] | void>,
    /** At most this many documents per command (a caller's documents are never split). */
    private readonly maxDocs = 1000,
  ) {}

  add(docs: T[]): Promise<R[]> {
    if (docs.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      this.waiting.push({ docs, resolve, reject });
      if (!this.flushing) void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    while (this.waiting.length > 0) {
      let count = 0;
      let take = 0;
      while (take < this.waiting.length && (take === 0 || count + this.waiting[take].docs.length <= this.maxDocs))
        count += this.waiting[take++].docs.length;
      const batch = this.waiting.splice(0, take);
      try {
        const results = await this.insert(batch.flatMap((b) => b.docs));
        let from = 0;
        for (const b of batch) b.resolve(results ? results.slice(from, (from += b.docs.length)) : []);
      } catch (err) {
        // Nothing of the batch is acknowledged: its callers answer an error and their senders
        // retry (an ordered insert failing midway may have stored a prefix, as one caller's could).
        for (const b of batch) b.reject(err);
      }
    }
    this.flushing = false;
  }
}
