import { randomBytes } from 'crypto';
import { DEFAULT_CLUSTER_NAMESPACE, LOCAL_CLUSTER } from '../../domain/cluster';
import { claimAuditChain } from '../../store/audit';
import { ensureEnvironmentCluster, listClusterNames } from '../../store/clusters';
import { AuditCheckpointModel, RunbookModel, Token } from '../../store/models';
import { seedBuiltinRunbooks } from '../../store/runbooks';
import { seedAdminToken, verifyToken } from '../../store/tokens';
import { useMongo } from '../harness/mongo';

/**
 * The writes every process of a scaled-out Foghorn makes as it starts (several `foghorn api` and
 * `foghorn worker` processes started together on a fresh store, test/e2e/replicas.test.ts): each
 * holds when other processes make it at the same moment, and none fails a start.
 */

let mongo: Awaited<ReturnType<typeof useMongo>>;
beforeAll(async () => {
  mongo = await useMongo();
});
afterAll(() => mongo.stop());

const PROCESSES = 8;
const atOnce = <T>(fn: () => Promise<T>) => Promise.allSettled(Array.from({ length: PROCESSES }, fn));
const failures = (results: PromiseSettledResult<unknown>[]) => results.filter((r) => r.status === 'rejected');

it('seeds the admin token: one token, no start fails', async () => {
  const tokens = Array.from({ length: 10 }, () => `fh_${randomBytes(24).toString('hex')}`);
  const results = (await Promise.all(tokens.map((t) => atOnce(() => seedAdminToken(t))))).flat();
  expect(failures(results)).toEqual([]);
  for (const t of tokens) expect(await verifyToken(t)).toMatchObject({ user: 'admin', role: 'admin' });
  expect(await Token.countDocuments({ user: 'admin' })).toBe(tokens.length);
});

it('seeds the built-in runbooks, the audit chain and the environment cluster once', async () => {
  expect(failures(await atOnce(() => seedBuiltinRunbooks()))).toEqual([]);
  expect(failures(await atOnce(() => claimAuditChain()))).toEqual([]);
  const local = {
    name: LOCAL_CLUSTER,
    namespace: DEFAULT_CLUSTER_NAMESPACE,
    displayName: 'local (KUBECONFIG)',
    tier: 'standard' as const,
    region: '',
    kubeconfigSecret: 'KUBECONFIG',
    source: 'environment' as const,
  };
  expect(failures(await atOnce(() => ensureEnvironmentCluster(local)))).toEqual([]);

  const runbooks = await RunbookModel.aggregate<{ n: number }>([{ $group: { _id: '$name', n: { $sum: 1 } } }]);
  expect(runbooks.length).toBeGreaterThan(0);
  expect(runbooks.every((r) => r.n === 1)).toBe(true);
  expect(await AuditCheckpointModel.countDocuments({ seq: 0 })).toBe(1);
  expect(await listClusterNames()).toEqual([LOCAL_CLUSTER]);
});
