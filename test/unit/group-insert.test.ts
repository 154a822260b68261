import { GroupInsert } from '../../store/group-insert';

/** Group commit: what is asked for during an insert goes in the next one, in order, and each caller learns its own batch's fate. */
describe('GroupInsert', () => {
  /** A GroupInsert whose inserts are recorded and settled by the test. */
  function controlled<T>() {
    const calls: { docs: T[]; resolve(): void; reject(err: unknown): void }[] = [];
    const group = new GroupInsert<T>(
      (docs) => new Promise<void>((resolve, reject) => calls.push({ docs, resolve, reject })),
    );
    return { calls, group };
  }

  it('sends the first insert at once and the ones asked for meanwhile together, in order', async () => {
    const { calls, group } = controlled<number>();
    const first = group.add([1]);
    expect(calls.map((c) => c.docs)).toEqual([[1]]);
    const rest = [group.add([2, 3]), group.add([4]), group.add([5])];
    expect(calls).toHaveLength(1); // waiting for the insert in flight
    calls[0].resolve();
    await first;
    await new Promise((r) => setImmediate(r));
    expect(calls.map((c) => c.docs)).toEqual([[1], [2, 3, 4, 5]]);
    calls[1].resolve();
    await Promise.all(rest);
  });

  it('fails only the callers whose insert failed, and goes on with the next', async () => {
    const { calls, group } = controlled<string>();
    const first = group.add(['a']);
    const second = group.add(['b']);
    const third = group.add(['c']);
    calls[0].resolve();
    await first;
    await new Promise((r) => setImmediate(r));
    calls[1].reject(new Error('store down'));
    await expect(second).rejects.toThrow('store down');
    await expect(third).rejects.toThrow('store down'); // same insert as the second
    const fourth = group.add(['d']);
    expect(calls.map((c) => c.docs)).toEqual([['a'], ['b', 'c'], ['d']]);
    calls[2].resolve();
    await fourth;
  });

  it('never splits a caller and caps an insert at maxDocs otherwise', async () => {
    const batches: number[][] = [];
    let release = () => {};
    const group = new GroupInsert<number>(async (docs) => {
      batches.push(docs);
      if (batches.length === 1) await new Promise<void>((r) => (release = r));
    }, 3);
    const all = [group.add([0]), group.add([1, 2]), group.add([3, 4]), group.add([5, 6, 7, 8]), group.add([9])];
    release();
    await Promise.all(all);
    expect(batches).toEqual([[0], [1, 2], [3, 4], [5, 6, 7, 8], [9]]);
  });

  it('hands each caller the results of its own documents when the insert returns one per document', async () => {
    let release = () => {};
    let first = true;
    const group = new GroupInsert<number, string>(async (docs) => {
      if (first) await new Promise<void>((r) => (release = r));
      first = false;
      return docs.map((d) => `r${d}`);
    });
    const all = [group.add([0]), group.add([1, 2]), group.add([]), group.add([3])];
    release();
    expect(await Promise.all(all)).toEqual([['r0'], ['r1', 'r2'], [], ['r3']]);
  });

  it('answers an empty add at once, without an insert', async () => {
    const insert = jest.fn(async () => undefined);
    await new GroupInsert<number>(insert).add([]);
    expect(insert).not.toHaveBeenCalled();
  });
});
