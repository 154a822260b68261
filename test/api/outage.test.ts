import { useApi } from '../harness/api';

describe('when MongoDB goes away', () => {
  it('503s with Retry-After instead of hanging, and readiness says so', async () => {
    const api = await useApi();
    try {
      expect((await api.call('GET', '/audit')).status).toBe(200);
      await api.mongo.server.stop();
      const res = await api.call('GET', '/audit');
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('5');
      expect(res.body).toEqual({
        apiVersion: 'v1',
        kind: 'Error',
        error: { code: 503, message: 'Service unavailable', details: expect.stringContaining('MongoDB') },
      });
      const ready = await api.call('GET', '/readyz', { token: null });
      expect(ready.status).toBe(503);
      expect(ready.body.error.details).toContain('mongodb');
    } finally {
      await api.stop().catch(() => undefined);
    }
  });
});
