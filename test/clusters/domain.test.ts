import { classifyHealth, clusterRegistrationSchema, failureOfStatus, localClusterSource } from '../../domain/cluster';
import { parseConfig } from '../../domain/config';
import { isSecretKey, redact } from '../../domain/redact';

describe('cluster phase', () => {
  it('classifies a check', () => {
    expect(classifyHealth({ version: 'v1', nodes: 2, readyNodes: 2, namespaces: 4 })).toBe('Connected');
    expect(classifyHealth({ version: 'v1', nodes: 0, readyNodes: 0, namespaces: 4 })).toBe('Connected');
    expect(classifyHealth({ version: 'v1', nodes: 3, readyNodes: 2, namespaces: 4 })).toBe('Degraded');
    expect(classifyHealth('unauthorized')).toBe('Unauthorized');
    expect(classifyHealth('unreachable')).toBe('Unreachable');
  });

  it('maps HTTP statuses: 401/403 are the credentials, anything else no usable answer', () => {
    expect([401, 403, 500, 503, 404, undefined].map(failureOfStatus)).toEqual([
      'unauthorized',
      'unauthorized',
      'unreachable',
      'unreachable',
      'unreachable',
      'unreachable',
    ]);
  });
});

describe('local cluster source', () => {
  it('prefers the in-cluster service account over KUBECONFIG', () => {
    expect(localClusterSource({})).toBeUndefined();
    expect(localClusterSource({ KUBECONFIG: '/k' })).toBe('kubeconfig');
    expect(localClusterSource({ KUBECONFIG: '/k', KUBERNETES_SERVICE_HOST: '10.0.0.1' })).toBe('in-cluster');
  });
});

describe('registration body', () => {
  it('applies defaults', () => {
    const parsed = clusterRegistrationSchema.parse({ metadata: { name: 'a' }, spec: { kubeconfig: 'x' } });
    expect(parsed).toEqual({
      metadata: { name: 'a', namespace: 'default' },
      spec: { kubeconfig: 'x', tier: 'standard', region: '' },
    });
  });
});

describe('FOGHORN_SECRET_KEY', () => {
  it('is a 32-byte key, hidden in configuration errors and redacted by name', () => {
    const key = Buffer.alloc(32, 3).toString('base64');
    expect(parseConfig({ FOGHORN_SECRET_KEY: key }).FOGHORN_SECRET_KEY).toBe(key);
    expect(parseConfig({ FOGHORN_SECRET_KEY: 'ab'.repeat(32) }).FOGHORN_SECRET_KEY).toBe('ab'.repeat(32));
    expect(() => parseConfig({ FOGHORN_SECRET_KEY: 'short-secret' })).toThrow(/FOGHORN_SECRET_KEY=\(hidden\)/);
    expect(isSecretKey('FOGHORN_SECRET_KEY')).toBe(true);
    expect(redact({ kubeconfig: 'x', 'client-key-data': 'y', token: 'z' })).toEqual({
      kubeconfig: '[REDACTED]',
      'client-key-data': '[REDACTED]',
      token: '[REDACTED]',
    });
  });
});
