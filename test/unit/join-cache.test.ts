import type { IncidentRecord } from '../../domain/incident-record';
import { JOIN_CACHE_MS, JoinCache } from '../../operations/join-cache';

/** What a process remembers of a resource's open incident: briefly, never a resolved one. */
describe('JoinCache', () => {
  const incident = (state: string) => ({ name: 'INC-20261126-001', state }) as IncidentRecord;
  afterEach(() => jest.useRealTimers());

  it('remembers an open incident for JOIN_CACHE_MS, then reads again', () => {
    jest.useFakeTimers({ now: Date.UTC(2026, 10, 26) });
    const cache = new JoinCache();
    cache.remember('local/shop/Deployment/api', incident('Escalated'));
    jest.advanceTimersByTime(JOIN_CACHE_MS - 1);
    expect(cache.get('local/shop/Deployment/api')).toMatchObject({ state: 'Escalated' });
    jest.advanceTimersByTime(1);
    expect(cache.get('local/shop/Deployment/api')).toBeUndefined();
  });

  it('never remembers a resolved incident, and forgets on request', () => {
    const cache = new JoinCache();
    cache.remember('a', incident('Analyzing'));
    cache.remember('a', incident('Resolved'));
    expect(cache.get('a')).toBeUndefined();
    cache.remember('b', incident('Analyzing'));
    cache.forget('b');
    expect(cache.get('b')).toBeUndefined();
  });

  it('reads a key once at a time: followers join what the read found or created', async () => {
    const cache = new JoinCache();
    let release!: () => void;
    const read = jest.fn(async () => {
      await new Promise<void>((r) => (release = r));
      return { created: true, incident: incident('Detected') };
    });
    const all = [cache.openOrJoin('k', read), cache.openOrJoin('k', read), cache.openOrJoin('k', read)];
    release();
    expect((await Promise.all(all)).map((o) => o.created)).toEqual([true, false, false]);
    expect(read).toHaveBeenCalledTimes(1);
  });

  it('a failed read fails its own caller only; the followers read for themselves', async () => {
    const cache = new JoinCache();
    let fail!: (err: Error) => void;
    const first = cache.openOrJoin('k', () => new Promise((_, reject) => (fail = reject)));
    const follower = cache.openOrJoin('k', async () => ({ created: false, incident: incident('Analyzing') }));
    fail(new Error('store down'));
    await expect(first).rejects.toThrow('store down');
    await expect(follower).resolves.toMatchObject({ created: false, incident: { state: 'Analyzing' } });
  });

  it('a hit never extends an entry: a steady stream of duplicates reads the store every JOIN_CACHE_MS', async () => {
    jest.useFakeTimers({ now: Date.UTC(2026, 10, 26) });
    const cache = new JoinCache();
    const read = jest.fn(async () => ({ created: false, incident: incident('Escalated') }));
    await cache.join('k', read);
    for (let t = 100; t < JOIN_CACHE_MS; t += 100) {
      jest.advanceTimersByTime(100);
      await cache.join('k', read);
    }
    expect(read).toHaveBeenCalledTimes(1);
    jest.advanceTimersByTime(100);
    await cache.join('k', read);
    expect(read).toHaveBeenCalledTimes(2);
  });

  it('trusts a read for JOIN_CACHE_MS from when it began, however long it took', async () => {
    jest.useFakeTimers({ now: Date.UTC(2026, 10, 26) });
    const cache = new JoinCache();
    const slow = cache.openOrJoin('k', async () => {
      jest.advanceTimersByTime(JOIN_CACHE_MS); // the store stalled for the whole window
      return { created: false, incident: incident('Escalated') };
    });
    await slow;
    expect(cache.get('k')).toBeUndefined();
  });

  it('forgetting a key voids its read in flight: neither remembered nor joined by followers', async () => {
    const cache = new JoinCache();
    let release!: () => void;
    const stale = { created: false, incident: incident('Escalated') };
    const fresh = { created: true, incident: { ...incident('Detected'), name: 'INC-20261126-002' } };
    const first = cache.openOrJoin('k', async () => {
      await new Promise<void>((r) => (release = r));
      return stale;
    });
    const follower = cache.openOrJoin('k', async () => fresh);
    cache.forget('k'); // this process resolved the incident while the read was in flight
    release();
    await expect(first).resolves.toBe(stale); // read before the resolve: its caller's race, as without a cache
    await expect(follower).resolves.toMatchObject({ created: true, incident: { name: 'INC-20261126-002' } });
    expect(cache.get('k')).toMatchObject({ name: 'INC-20261126-002' });
  });
});
