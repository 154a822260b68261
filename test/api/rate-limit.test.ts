import { useApi } from '../harness/api';

describe('per-token rate limit', () => {
  let api: Awaited<ReturnType<typeof useApi>>;
  beforeAll(async () => {
    api = await useApi({ rateLimitPerMinute: 3 });
  });
  afterAll(() => api?.stop());

  it('429s past the limit with Retry-After, counting each token separately', async () => {
    for (let i = 0; i < 3; i++) expect((await api.call('GET', '/tokens')).status).toBe(200);
    const res = await api.call('GET', '/tokens');
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(res.body).toEqual({
      apiVersion: 'v1',
      kind: 'Error',
      error: { code: 429, message: 'Too many requests', details: expect.any(String) },
    });
    expect((await api.call('GET', '/audit', { token: api.tokens.operator })).status).toBe(200);
  });

  it('does not count health checks', async () => {
    for (let i = 0; i < 5; i++) expect((await api.call('GET', '/healthz', { token: null })).status).toBe(200);
  });
});
