import { revisionChange, scaleChange } from '../../domain/change-record';
import { recordChanges, recordRevision } from '../../store/changes';
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
});
