import type { IncidentRecord } from '../../domain/incident-record';
import { JoinReads } from '../../operations/join-reads';

/** One open-or-join read per resource at a time in a process; nothing kept past it. */
describe('JoinReads', () => {
  const incident = (state: string, name = 'INC-20261126-001') => ({ name, state }) as IncidentRecord;
  const held = <T>(value: T) => {
    let release!: () => void;
    const read = jest.fn(async () => {
      await new Promise<void>((r) => (release = r));
      return value;
    });
    return { read, release: () => release() };
  };

  it('reads a key once at a time: followers join what the read found or created', async () => {
    const reads = new JoinReads();
    const { read, release } = held({ created: true, incident: incident('Detected') });
    const all = [reads.openOrJoin('k', read), reads.openOrJoin('k', read), reads.openOrJoin('k', read)];
    release();
    expect((await Promise.all(all)).map((o) => o.created)).toEqual([true, false, false]);
    expect(read).toHaveBeenCalledTimes(1);
  });

  it('remembers nothing once the read is done: the next signal reads again', async () => {
    const reads = new JoinReads();
    const read = jest.fn(async () => ({ created: false, incident: incident('Escalated') }));
    await reads.openOrJoin('k', read);
    await reads.openOrJoin('k', read);
    expect(read).toHaveBeenCalledTimes(2);
  });

  it('a failed read fails its own caller only; the followers read for themselves', async () => {
    const reads = new JoinReads();
    let fail!: (err: Error) => void;
    const first = reads.openOrJoin('k', () => new Promise((_, reject) => (fail = reject)));
    const follower = reads.openOrJoin('k', async () => ({ created: false, incident: incident('Analyzing') }));
    fail(new Error('store down'));
    await expect(first).rejects.toThrow('store down');
    await expect(follower).resolves.toMatchObject({ created: false, incident: { state: 'Analyzing' } });
  });

  it('forgetting a key voids its read in flight: its followers read again', async () => {
    const reads = new JoinReads();
    const stale = { created: false, incident: incident('Escalated') };
    const { read, release } = held(stale);
    const first = reads.openOrJoin('k', read);
    const follower = reads.openOrJoin('k', async () => ({
      created: true,
      incident: incident('Detected', 'INC-20261126-002'),
    }));
    reads.forget('k'); // this process resolved the incident while the read was in flight
    release();
    await expect(first).resolves.toBe(stale); // read before the resolve: its caller's race, as always
    await expect(follower).resolves.toMatchObject({ created: true, incident: { name: 'INC-20261126-002' } });
  });
});
