import { Openings } from '../../activities/openings';

/**
 * The worker's openings (activities/openings.ts): a limit that orders new incidents' triages,
 * oldest first, and never holds one up for good. Jest's fake clock drives the hold and the wait.
 */
describe('openings', () => {
  const times = { holdMs: 5_000, maxWaitMs: 10_000, maxHoldMs: 120_000 };
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  /** Enters, and tells whether it has got its place yet. */
  const entering = (openings: Openings, incident: string, signal?: AbortSignal) => {
    const state = { entered: false, error: undefined as unknown };
    openings.enter(incident, signal).then(
      () => (state.entered = true),
      (err) => (state.error = err),
    );
    return state;
  };
  const settle = () => jest.advanceTimersByTimeAsync(0);

  it('without a limit, every triage goes ahead and nothing is held', async () => {
    const openings = new Openings(0, times);
    await openings.enter('INC-1');
    await openings.enter('INC-2');
    expect(openings.inUse).toBe(0);
  });

  it('past the limit a triage waits, and each place given back admits the oldest waiting, one at a time', async () => {
    const openings = new Openings(2, times);
    await openings.enter('INC-1');
    await openings.enter('INC-2');
    const third = entering(openings, 'INC-3');
    const fourth = entering(openings, 'INC-4');
    await settle();
    expect([third.entered, fourth.entered]).toEqual([false, false]);

    openings.leave('INC-1');
    await settle();
    expect([third.entered, fourth.entered]).toEqual([true, false]);
    expect(openings.inUse).toBe(2);

    openings.leave('INC-1'); // given back already: nothing more
    await settle();
    expect(fourth.entered).toBe(false);
    openings.leave('INC-3');
    await settle();
    expect(fourth.entered).toBe(true);
  });

  it('a retried triage of an incident that holds its place goes ahead', async () => {
    const openings = new Openings(1, times);
    await openings.enter('INC-1');
    await openings.enter('INC-1');
    expect(openings.inUse).toBe(1);
  });

  it('a triage that waited too long goes ahead over the limit', async () => {
    const openings = new Openings(1, times);
    await openings.enter('INC-1');
    const second = entering(openings, 'INC-2');
    await jest.advanceTimersByTimeAsync(times.maxWaitMs - 1);
    expect(second.entered).toBe(false);
    await jest.advanceTimersByTimeAsync(1);
    expect(second.entered).toBe(true);
    expect(openings.inUse).toBe(2);
  });

  it('a place handed over to a plan is given back by its first step, or after the hold', async () => {
    const openings = new Openings(1, times);
    await openings.enter('INC-1');
    openings.handOver('INC-1');
    const second = entering(openings, 'INC-2');
    await jest.advanceTimersByTimeAsync(times.holdMs - 1);
    expect(second.entered).toBe(false);
    await jest.advanceTimersByTimeAsync(1); // the first step was recorded elsewhere, or never
    expect(second.entered).toBe(true);
    expect(openings.inUse).toBe(1);
  });

  it('no place is held longer than a triage may take', async () => {
    const openings = new Openings(1, times);
    await openings.enter('INC-1'); // a triage whose worker never answered
    await jest.advanceTimersByTimeAsync(times.maxHoldMs);
    expect(openings.inUse).toBe(0);
  });

  it('a cancelled triage stops waiting and leaves the queue to the others', async () => {
    const openings = new Openings(1, times);
    await openings.enter('INC-1');
    const cancel = new AbortController();
    const second = entering(openings, 'INC-2', cancel.signal);
    const third = entering(openings, 'INC-3');
    cancel.abort(new Error('cancelled'));
    await settle();
    expect(second.error).toEqual(new Error('cancelled'));

    openings.leave('INC-1');
    await settle();
    expect(third.entered).toBe(true);
    expect(second.entered).toBe(false);
    expect(openings.inUse).toBe(1);
  });
});
