import type { Client } from '@temporalio/client';
import { reconcileDedupEntries } from '../../operations/reconcile';
import { openOrJoin } from '../../store/incidents';
import { DedupEntryModel } from '../../store/models';
import { useMongo } from '../harness/mongo';

/**
 * A reconciler pass goes through every candidate, page by page: a stale entry behind many
 * healthy ones is repaired in the same run, not left behind a batch limit forever.
 */
describe('reconciler paging (real MongoDB-wire server)', () => {
  let mongo: Awaited<ReturnType<typeof useMongo>>;
  beforeAll(async () => {
    mongo = await useMongo();
  });
  afterAll(() => mongo?.stop());

  it('removes a stale dedup entry that sorts after several pages of healthy ones', async () => {
    const longAgo = new Date(Date.now() - 3_600_000);
    for (let i = 0; i < 7; i++)
      await openOrJoin(
        {
          resource: `Deployment/healthy-${i}`,
          namespace: 'shop',
          signalType: 'CrashLoopBackOff',
          description: '',
          cluster: 'local',
          labels: {},
          detectionSource: 'api',
        },
        longAgo,
      );
    await DedupEntryModel.create({
      _id: 'local/shop/Deployment/zz-never-recorded',
      incident: 'INC-20260101-999',
      createdAt: longAgo,
    });

    let looked = 0;
    const repairs = await reconcileDedupEntries({
      client: undefined as unknown as Client, // dedup entries need only the store
      taskQueue: 'unused',
      graceMs: 60_000,
      pageSize: 2,
      progress: () => looked++,
    });

    expect(repairs).toEqual([
      expect.objectContaining({ kind: 'dedup-entry-removed', subject: 'local/shop/Deployment/zz-never-recorded' }),
    ]);
    expect(looked).toBe(8);
    expect(await DedupEntryModel.countDocuments()).toBe(7);
  });
});
