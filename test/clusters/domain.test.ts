import {
  classifyHealth,
  clipClusterText,
  displayServer,
  failureOfStatus,
  localClusterSource,
  serverUrlProblem,
} from '../../domain/cluster';
import { clusterCredentialsSchema, clusterRegistrationSchema } from '../../contracts/clusters';
import { parseConfig } from '../../config/env';
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

describe('server URLs', () => {
  it('https anywhere, plain http to loopback only, never userinfo', () => {
    for (const ok of [
      'https://h:6443',
      'https://10.0.0.1',
      'http://localhost:8080',
      'http://127.1.2.3',
      'http://[::1]:1',
    ])
      expect(serverUrlProblem(ok)).toBeUndefined();
    for (const bad of [
      'http://10.0.0.1:6443',
      'http://127.0.0.1.nip.io',
      'http://[::2]',
      'file:///etc/passwd',
      'gopher://h',
    ])
      expect(serverUrlProblem(bad)).toMatch(/https:\/\//);
    expect(serverUrlProblem('https://u:p@h')).toMatch(/user or password/);
    expect(serverUrlProblem('https://u@h')).toMatch(/user or password/);
    expect(serverUrlProblem('not a url')).toMatch(/must be a URL/);
  });

  it('the credentials schema applies the rules (one message each)', () => {
    const parse = (server: string) => clusterCredentialsSchema.safeParse({ server, token: 't' });
    expect(parse('https://h:6443').success).toBe(true);
    const plain = parse('http://10.0.0.1');
    expect(plain.success || plain.error.issues.map((i) => i.message)).toEqual([expect.stringMatching(/https:\/\//)]);
    const notUrl = parse('x');
    expect(notUrl.success || notUrl.error.issues.map((i) => i.message)).toEqual([
      expect.stringMatching(/must be a URL/),
    ]);
  });

  it('is shown without userinfo, query or fragment', () => {
    expect(displayServer('https://u:p@h:6443/a/b?sig=1#f')).toBe('https://h:6443/a/b');
    expect(displayServer('https://h:6443/')).toBe('https://h:6443');
    expect(displayServer('nope')).toBe('(not a URL)');
  });
});

describe('strings read from a cluster', () => {
  it('are cut to a bound', () => {
    expect(clipClusterText('v1.33.13')).toBe('v1.33.13');
    expect(clipClusterText(undefined)).toBe('');
    const long = clipClusterText('v'.repeat(10_000));
    expect(long).toHaveLength(64);
    expect(long.endsWith('…')).toBe(true);
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

describe('FOGHORN_SECRET_RETIRED_KEYS', () => {
  it('is a comma-separated list of keys in the secret key format, hidden in errors', () => {
    const a = Buffer.alloc(32, 1).toString('base64');
    const b = 'cd'.repeat(32);
    expect(parseConfig({ FOGHORN_SECRET_RETIRED_KEYS: `${a}, ${b}` }).FOGHORN_SECRET_RETIRED_KEYS).toEqual([a, b]);
    expect(() => parseConfig({ FOGHORN_SECRET_RETIRED_KEYS: `${a},short-old-key` })).toThrow(
      /FOGHORN_SECRET_RETIRED_KEYS\.1=\(hidden\)/,
    );
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
