import { Client, Connection } from '@temporalio/client';
import type { IncidentRecord } from '../../domain/incident-record';
import { IncidentHandOver, type IncidentCalls } from '../../operations/incident-handover';

/**
 * The hand-over's timing (operations/incident-handover.ts), with the Temporal calls recorded
 * instead of made: what Temporal does with them is tested end to end in
 * test/workflows/storm-ingest.test.ts. The client is real (its call context carries the deadline
 * and the abort signal) but never connects.
 */
describe('incident hand-over', () => {
  const connection = Connection.lazy({ address: '127.0.0.1:1' });
  const client = new Client({ connection });
  afterAll(() => connection.close());

  const incident = (name: string) => ({ name }) as IncidentRecord;
  const signal = (i: number) => ({ signalType: 'OOMKilled' as const, at: new Date(i).toISOString() });
  const until = async (check: () => boolean) => {
    for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
    expect(check()).toBe(true);
  };

  function recorder(fail = 0) {
    const log: { call: 'start' | 'tell'; incident: string; count?: number; signal?: AbortSignal }[] = [];
    let failures = fail;
    const calls: IncidentCalls = {
      async start(i) {
        log.push({ call: 'start', incident: i.name, signal: connection.callContextStorage.getStore()?.abortSignal });
      },
      async tell(i, { count }) {
        if (failures-- > 0) throw new Error('Temporal is unreachable');
        log.push({
          call: 'tell',
          incident: i.name,
          count,
          signal: connection.callContextStorage.getStore()?.abortSignal,
        });
      },
    };
    return { log, calls };
  }

  it('tells a storm of duplicates in a few coalesced signals, every one counted', async () => {
    const { log, calls } = recorder();
    const h = new IncidentHandOver(client, calls, { coalesceMs: 200 });
    for (let i = 0; i < 300; i++) h.queued(incident('INC-1'), [signal(i)]);
    await until(() => h.size === 0 && log.reduce((n, c) => n + (c.count ?? 0), 0) === 300);
    expect(log.length).toBeLessThanOrEqual(2);
    await h.stop();
  });

  it('starts a new incident (or tells it, which starts it too), one call at a time, each incident on its own', async () => {
    const { log, calls } = recorder();
    const h = new IncidentHandOver(client, calls, { coalesceMs: 50 });
    h.started(incident('INC-2'));
    h.queued(incident('INC-2'), [signal(1), signal(2)]); // before the start went: one signal-with-start
    h.started(incident('INC-3'));
    await until(() => h.size === 0 && log.length === 2);
    h.queued(incident('INC-3'), [signal(3)]);
    await until(() => h.size === 0 && log.length === 3);
    expect(log.map(({ call, incident, count }) => ({ call, incident, count }))).toEqual([
      { call: 'tell', incident: 'INC-2', count: 2 },
      { call: 'start', incident: 'INC-3', count: undefined },
      { call: 'tell', incident: 'INC-3', count: 1 },
    ]);
    await h.stop();
  });

  it('retries a failed call with what it carried, and what arrived meanwhile, reporting the failure', async () => {
    const { log, calls } = recorder(1);
    const reported: { incident: string; retryInMs?: number }[] = [];
    const h = new IncidentHandOver(client, calls, {
      coalesceMs: 20,
      onError: (incident, _err, retryInMs) => reported.push({ incident, retryInMs }),
    });
    h.queued(incident('INC-4'), [signal(1)]);
    h.queued(incident('INC-4'), [signal(2)]);
    await until(() => log.length > 0);
    h.queued(incident('INC-4'), [signal(3)]);
    await until(() => h.size === 0 && log.reduce((n, c) => n + (c.count ?? 0), 0) === 3);
    expect(reported).toEqual([{ incident: 'INC-4', retryInMs: 1_000 }]);
    await h.stop();
  });

  it('gives every call its own abort signal, so finished calls are not kept alive by a shared one', async () => {
    const { log, calls } = recorder();
    const h = new IncidentHandOver(client, calls, { coalesceMs: 10 });
    for (let i = 0; i < 5; i++) {
      h.queued(incident(`INC-${10 + i}`), [signal(i)]);
    }
    await until(() => log.length === 5);
    const signals = log.map((c) => c.signal);
    expect(signals.every((s) => s instanceof AbortSignal)).toBe(true);
    expect(new Set(signals).size).toBe(5);
    await h.stop();
  });

  it('stops: nothing more is sent, and a call in flight is aborted', async () => {
    let aborted = false;
    const calls: IncidentCalls = {
      start: () => Promise.resolve(),
      tell: () =>
        new Promise((_, reject) => {
          const signal = connection.callContextStorage.getStore()?.abortSignal;
          signal?.addEventListener('abort', () => {
            aborted = true;
            reject(new Error('aborted'));
          });
        }),
    };
    const h = new IncidentHandOver(client, calls, { coalesceMs: 10 });
    h.queued(incident('INC-20'), [signal(1)]);
    await until(() => h.size === 1);
    await new Promise((r) => setTimeout(r, 50)); // the call is in flight
    await h.stop();
    expect(aborted).toBe(true);
    h.queued(incident('INC-20'), [signal(2)]);
    await new Promise((r) => setTimeout(r, 50));
    expect(h.size).toBe(0);
  });
});
