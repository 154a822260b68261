import {
  actionParams,
  canonicalJson,
  classifyKubeError,
  KUBE_ACTION_ACTIVITY_OPTIONS,
  KUBE_ERROR_TYPES,
  KUBE_NON_RETRYABLE_ERROR_TYPES,
  MAX_REPLICAS,
  mergeResources,
  parseRevision,
  tailBytes,
} from '../../domain/kube-actions';
import {
  adjustResourcesInput,
  deletePodInput,
  kubeGetResourceInput,
  kubeLogTailInput,
  restartDeploymentInput,
  rollbackDeploymentInput,
  scaleDeploymentInput,
} from '../../contracts/kube-actions';

const base = { key: 'RP-20261123-001/0', cluster: 'prod', namespace: 'payments' };
const target = { kind: 'Deployment', namespace: 'payments', name: 'api', cluster: 'prod' };

describe('action inputs', () => {
  it('accepts each action with its target', () => {
    expect(restartDeploymentInput.parse({ ...base, deployment: 'api' })).toEqual({ ...base, deployment: 'api' });
    expect(scaleDeploymentInput.parse({ ...base, deployment: 'api', replicas: 0 }).replicas).toBe(0);
    expect(rollbackDeploymentInput.parse({ ...base, deployment: 'api', toRevision: 3 }).toRevision).toBe(3);
    expect(deletePodInput.parse({ ...base, pod: 'api-7d9f-abcde' }).pod).toBe('api-7d9f-abcde');
    expect(
      adjustResourcesInput.parse({ ...base, deployment: 'api', container: 'app', limits: { memory: '512Mi' } }).limits,
    ).toEqual({ memory: '512Mi' });
  });

  it.each([
    ['a missing key', { ...base, key: '', deployment: 'api' }],
    ['a key with spaces', { ...base, key: 'plan 1', deployment: 'api' }],
    ['an upper-case name', { ...base, deployment: 'API' }],
    ['a bad namespace', { ...base, namespace: 'Payments', deployment: 'api' }],
    ['an unknown field', { ...base, deployment: 'api', force: true }],
  ])('refuses %s', (_what, input) => {
    expect(restartDeploymentInput.safeParse(input).success).toBe(false);
  });

  it('bounds replicas to 0..MAX_REPLICAS integers', () => {
    for (const replicas of [-1, MAX_REPLICAS + 1, 1.5, '3'])
      expect(scaleDeploymentInput.safeParse({ ...base, deployment: 'api', replicas }).success).toBe(false);
    expect(scaleDeploymentInput.safeParse({ ...base, deployment: 'api', replicas: MAX_REPLICAS }).success).toBe(true);
  });

  it('wants at least one Kubernetes quantity for AdjustResources', () => {
    const adjust = (extra: object) =>
      adjustResourcesInput.safeParse({ ...base, deployment: 'api', container: 'app', ...extra }).success;
    expect(adjust({})).toBe(false);
    expect(adjust({ requests: {} })).toBe(false);
    expect(adjust({ limits: { memory: '1.5Gi' } })).toBe(true);
    expect(adjust({ requests: { cpu: '250m' }, limits: { cpu: '1' } })).toBe(true);
    expect(adjust({ limits: { memory: '512 MB' } })).toBe(false);
    expect(adjust({ limits: { memory: '-1Gi' } })).toBe(false);
    expect(adjust({ limits: { gpu: '1' } })).toBe(false);
  });

  it('needs a namespace for namespaced reads only', () => {
    expect(kubeGetResourceInput.safeParse({ cluster: 'prod', kind: 'Node', name: 'node-1' }).success).toBe(true);
    expect(kubeGetResourceInput.safeParse({ cluster: 'prod', kind: 'Pod', name: 'p' }).success).toBe(false);
    expect(kubeLogTailInput.parse({ cluster: 'prod', namespace: 'a', pod: 'p' })).toMatchObject({
      tailLines: 50,
      previous: false,
    });
    expect(kubeLogTailInput.safeParse({ cluster: 'prod', namespace: 'a', pod: 'p', tailLines: 10_000 }).success).toBe(
      false,
    );
  });
});

describe('actionParams', () => {
  it('ignores the key and the order of fields', () => {
    expect(actionParams({ key: 'a', replicas: 2, deployment: 'api' })).toBe(
      actionParams({ deployment: 'api', key: 'b', replicas: 2 }),
    );
    expect(actionParams({ key: 'a', replicas: 2 })).not.toBe(actionParams({ key: 'a', replicas: 3 }));
    expect(canonicalJson({ b: { y: 1, x: [2, { d: 1, c: 0 }] }, a: null })).toBe(
      '{"a":null,"b":{"x":[2,{"c":0,"d":1}],"y":1}}',
    );
  });
});

describe('mergeResources', () => {
  it('sets the given values over the current ones', () => {
    const current = { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '256Mi' } };
    expect(mergeResources(current, { limits: { memory: '512Mi' } })).toEqual({
      requests: { cpu: '100m', memory: '128Mi' },
      limits: { memory: '512Mi' },
    });
    expect(mergeResources({ requests: {}, limits: {} }, { requests: { cpu: '1' } })).toEqual({
      requests: { cpu: '1' },
      limits: {},
    });
  });
});

describe('parseRevision', () => {
  it('reads revision annotations', () => {
    expect(parseRevision({ 'deployment.kubernetes.io/revision': '12' })).toBe(12);
    expect(parseRevision({ 'deployment.kubernetes.io/revision': 'x' })).toBe(0);
    expect(parseRevision(undefined)).toBe(0);
  });
});

describe('classifyKubeError', () => {
  it.each([
    [404, 'NotFound', KUBE_ERROR_TYPES.notFound, 'deployment payments/api not found in cluster prod'],
    [403, 'Forbidden', KUBE_ERROR_TYPES.forbidden, 'access to deployment payments/api in cluster prod is forbidden'],
    [401, 'Unauthorized', KUBE_ERROR_TYPES.unauthorized, "cluster prod refused Foghorn's credentials"],
    [422, 'Invalid', KUBE_ERROR_TYPES.invalid, 'refused the change to deployment payments/api as invalid'],
    [400, 'BadRequest', KUBE_ERROR_TYPES.invalid, 'as invalid (400)'],
    [409, 'AlreadyExists', KUBE_ERROR_TYPES.invalid, 'already exists'],
    [405, 'MethodNotAllowed', KUBE_ERROR_TYPES.refused, 'refused the request'],
  ])('%i %s is not retryable', (status, reason, type, message) => {
    const c = classifyKubeError({ status, reason }, target);
    expect(c).toMatchObject({ retryable: false, type });
    expect(c.message).toContain(message);
    expect(KUBE_NON_RETRYABLE_ERROR_TYPES).toContain(type);
  });

  it.each([
    [409, 'Conflict', KUBE_ERROR_TYPES.conflict],
    [429, 'TooManyRequests', KUBE_ERROR_TYPES.throttled],
    [500, 'InternalError', KUBE_ERROR_TYPES.unavailable],
    [503, 'ServiceUnavailable', KUBE_ERROR_TYPES.unavailable],
    [504, 'Timeout', KUBE_ERROR_TYPES.timeout],
    [undefined, 'ECONNREFUSED', KUBE_ERROR_TYPES.unreachable],
    [undefined, 'Timeout', KUBE_ERROR_TYPES.timeout],
  ])('%s %s is retryable', (status, reason, type) => {
    const c = classifyKubeError({ status, reason }, target);
    expect(c).toMatchObject({ retryable: true, type });
    expect(c.message).toContain('cluster prod');
    expect(KUBE_NON_RETRYABLE_ERROR_TYPES).not.toContain(type);
  });

  it('names pods and nodes, and a list by its namespace', () => {
    expect(classifyKubeError({ status: 404 }, { kind: 'Pod', namespace: 'a', name: 'p', cluster: 'c' }).message).toBe(
      'pod a/p not found in cluster c',
    );
    expect(classifyKubeError({ status: 404 }, { kind: 'Node', name: 'n1', cluster: 'c' }).message).toBe(
      'node n1 not found in cluster c',
    );
    expect(classifyKubeError({ status: 403 }, { kind: 'ReplicaSet', namespace: 'a', cluster: 'c' }).message).toBe(
      'access to replicaset in namespace a in cluster c is forbidden',
    );
  });

  it('keeps credentials out of the server detail it quotes', () => {
    const c = classifyKubeError(
      { status: 403, detail: 'denied for Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123456789' },
      target,
    );
    expect(c.message).not.toContain('abcdefghijklmnopqrstuvwxyz0123456789');
    expect(c.message).toContain('[REDACTED]');
  });

  it('gives callers retry options that stop on the non-retryable types', () => {
    expect(KUBE_ACTION_ACTIVITY_OPTIONS.retry.nonRetryableErrorTypes).toEqual(
      expect.arrayContaining([
        'KubeNotFound',
        'KubeForbidden',
        'KubeActionKeyReused',
        'ClusterNotFound',
        'InvalidInput',
      ]),
    );
  });
});

describe('tailBytes', () => {
  it('keeps short logs whole', () => {
    expect(tailBytes('a\nb\n', 100)).toEqual({ text: 'a\nb\n', truncated: false });
  });
  it('keeps the end, from a line start, within the byte bound', () => {
    const log = Array.from({ length: 100 }, (_, i) => `line ${i} é`).join('\n');
    const { text, truncated } = tailBytes(log, 64);
    expect(truncated).toBe(true);
    expect(new TextEncoder().encode(text).length).toBeLessThanOrEqual(64);
    expect(text.startsWith('line ')).toBe(true);
    expect(text.endsWith('line 99 é')).toBe(true);
  });
});
