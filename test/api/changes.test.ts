import { revisionChange, scaleChange } from '../../domain/change-record';
import { pruneChanges, recordChanges, recordRevision, revisionsOf } from '../../store/changes';
import { ChangeModel } from '../../store/models';
import { useApi } from '../harness/api';

/** `GET /changes`: filters, the list envelope, revision health beside each rollout, bad inputs. */
describe('the change record', () => {
  let api: Awaited<ReturnType<typeof useApi>>;
  const at = (s: number) => new Date(Date.UTC(2026, 11, 7, 10, 0, s));
  const by = { manager: 'kubectl-client-side-apply', changeCause: '', source: '', foghorn: false };
  const tpl = (image: string) => ({ spec: { containers: [{ name: 'app', image }] } });

  beforeAll(async () => {
    api = await useApi();
    const rollout = (revision: number, image: string, previous?: string) =>
      revisionChange({
        cluster: 'prod',
        namespace: 'shop',
        workload: 'Deployment/checkout',
        revision,
        ...(previous && { previousRevision: revision - 1, previousTemplate: tpl(previous) }),
        template: tpl(image),
        at: at(revision * 10),
        by,
      });
    await recordChanges([
      rollout(1, 'checkout:1'),
      rollout(2, 'checkout:2', 'checkout:1'),
      scaleChange('prod', 'shop', 'Deployment/cart', 4, 2, 3, at(5), by),
      { ...rollout(1, 'checkout:1'), id: 'staging|shop/Deployment/checkout|revision|1', cluster: 'staging' },
    ]);
    // Recorded twice (a relist after a hand-over): still one change.
    await recordChanges([rollout(2, 'checkout:2', 'checkout:1')]);
    const health = {
      cluster: 'prod',
      namespace: 'shop',
      resource: 'Deployment/checkout',
      replicaSet: 'checkout-abc',
      templateHash: 'abc',
      firstSeenAt: at(10),
    };
    await recordRevision({ ...health, revision: 1, images: ['app=checkout:1'], state: 'Healthy', healthyAt: at(15) });
    await recordRevision({
      ...health,
      revision: 2,
      images: ['app=checkout:2'],
      state: 'Failed',
      failure: { signal: 'CrashLoopBackOff', reason: 'Error', exitCode: 1, at: at(26) },
    });
    // A weaker verdict never replaces a proven one.
    await recordRevision({ ...health, revision: 1, images: ['app=checkout:1'], state: 'Progressing' });
  });
  afterAll(() => api?.stop());

  const list = (qs = '') => api.call('GET', `/changes${qs}`, { token: api.tokens.viewer });

  it('lists changes newest first with the revision health beside each rollout', async () => {
    const res = await list('?cluster=prod&resource=Deployment/checkout');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ apiVersion: 'v1', kind: 'ChangeList', metadata: { totalCount: 2, page: 1 } });
    const [second, first] = res.body.items;
    expect(second).toMatchObject({
      type: 'Rollout',
      revision: 2,
      previousRevision: 1,
      at: '2026-12-07T10:00:20.000Z',
      diff: [{ field: 'image app', from: 'checkout:1', to: 'checkout:2' }],
      by: { manager: 'kubectl-client-side-apply', foghorn: false },
      revisionHealth: {
        state: 'Failed',
        failure: { signal: 'CrashLoopBackOff', exitCode: 1, at: '2026-12-07T10:00:26.000Z' },
        images: ['app=checkout:2'],
      },
    });
    expect(first).toMatchObject({
      revision: 1,
      revisionHealth: { state: 'Healthy', healthyAt: '2026-12-07T10:00:15.000Z' },
    });
  });

  it('filters by cluster, namespace and since', async () => {
    expect((await list('?cluster=staging')).body.metadata.totalCount).toBe(1);
    expect((await list('?namespace=shop')).body.metadata.totalCount).toBe(4);
    const since = await list(`?cluster=prod&since=${encodeURIComponent(at(10).toISOString())}`);
    expect(since.body.items.map((c: { revision?: number }) => c.revision)).toEqual([2, 1]);
  });

  it('answers bad filters with 400 and the envelope, and needs a token', async () => {
    for (const qs of ['?since=yesterday', '?resource=checkout', '?pageSize=101', '?cluster=Not_A_Label']) {
      const res = await list(qs);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ kind: 'Error', error: { code: 400, message: 'Invalid request' } });
    }
    expect((await api.call('GET', '/changes', { token: '' })).status).toBe(401);
  });

  it("prunes by age and count, keeping each Deployment's newest healthy revision", async () => {
    const old = (s: number) => new Date(Date.UTC(2026, 10, 1, 0, 0, s));
    const base = {
      cluster: 'prune',
      namespace: 'shop',
      resource: 'Deployment/api',
      replicaSet: 'rs',
      templateHash: 'h',
    };
    for (const revision of [1, 2, 3])
      await recordRevision({
        ...base,
        revision,
        images: [],
        state: revision === 3 ? 'Failed' : 'Healthy',
        ...(revision < 3 && { healthyAt: old(revision) }),
        firstSeenAt: old(revision),
      });
    await recordChanges(
      Array.from({ length: 12 }, (_, i) =>
        scaleChange('prune', 'shop', 'Deployment/api', i, i, i + 1, i < 2 ? old(i) : at(i), by),
      ),
    );
    const removed = await pruneChanges('prune', new Date(Date.UTC(2026, 11, 1)), 6);
    expect(removed).toBe(6); // 2 by age, 4 past the cap
    const left = await ChangeModel.find({ cluster: 'prune' }).sort({ at: 1 }).lean();
    expect(left.map((c) => c.diff[0].to)).toEqual(['7', '8', '9', '10', '11', '12']);
    // The failed and the older healthy revision go; the newest healthy one stays, however old.
    expect((await revisionsOf('prune', 'shop', 'Deployment/api')).map((r) => r.revision)).toEqual([2]);
  });
});
