import { WorkflowUpdateRPCTimeoutOrCancelledError } from '@temporalio/client';
import express from 'express';
import type { AddressInfo } from 'net';
import { TOKEN_CACHE_MS } from '../../api/auth';
import { errorHandler, RETRY_AFTER_SECONDS } from '../../api/errors';
import { createToken, revokeToken } from '../../store/tokens';
import { useApi } from '../harness/api';

const errorBody = (code: number, message: string) => ({
  apiVersion: 'v1',
  kind: 'Error',
  error: { code, message, details: expect.any(String) },
});

describe('API foundation', () => {
  let api: Awaited<ReturnType<typeof useApi>>;
  beforeAll(async () => {
    api = await useApi();
  });
  afterAll(() => api?.stop());

  describe('authentication', () => {
    it('401s without a token, with a bad token and with a malformed header', async () => {
      for (const headers of [{}, { authorization: 'Bearer fh_nope' }, { authorization: 'Basic abc' }] as Record<
        string,
        string
      >[]) {
        const res = await api.call('GET', '/tokens', { token: null, headers });
        expect(res.status).toBe(401);
        expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
        expect(res.body).toEqual(errorBody(401, 'Unauthorized'));
      }
    });

    it('creates, lists and revokes tokens (admin only), never showing stored values, all audited', async () => {
      const created = await api.call('POST', '/tokens', { body: { user: 'alice', role: 'operator' } });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({
        apiVersion: 'v1',
        kind: 'Token',
        metadata: { user: 'alice', role: 'operator', revoked: false },
      });
      expect(created.body.token).toMatch(/^fh_[A-Za-z0-9_-]{43}$/);
      const id = created.body.metadata.id;
      expect(created.headers.get('location')).toBe(`/api/v1/tokens/${id}`);

      const alice = created.body.token;
      expect((await api.call('GET', '/audit', { token: alice })).status).toBe(200);

      const list = await api.call('GET', '/tokens');
      expect(list.body).toMatchObject({ kind: 'TokenList', metadata: { totalCount: 4, page: 1, pageSize: 20 } });
      expect(list.text).not.toContain(alice);
      expect(list.text).not.toContain('hash');

      expect((await api.call('POST', '/tokens', { token: alice, body: { user: 'x', role: 'admin' } })).status).toBe(
        403,
      );
      expect((await api.call('DELETE', `/tokens/${id}`)).status).toBe(204);
      const after = await api.call('GET', '/audit', { token: alice });
      expect(after.status).toBe(401);
      expect(after.body.error.details).toContain('revoked');
      expect((await api.call('DELETE', '/tokens/000000000000000000000000')).status).toBe(404);

      const audit = await api.call('GET', '/audit?resource=' + id);
      expect(audit.body.items.map((r: { action: string }) => r.action)).toEqual(['token.revoke', 'token.create']);
      expect(audit.body.items[0]).toMatchObject({
        user: 'admin-user',
        role: 'admin',
        resourceType: 'Token',
        sourceIP: expect.any(String),
      });
    });

    it('stops taking a token revoked by another process (the CLI) once TOKEN_CACHE_MS has passed', async () => {
      const bob = await createToken('bob', 'viewer');
      expect((await api.call('GET', '/incidents', { token: bob.token })).status).toBe(200); // verified, remembered
      await revokeToken(bob.id); // as `foghorn token revoke` does, beside the API
      await new Promise((r) => setTimeout(r, TOKEN_CACHE_MS + 50));
      const after = await api.call('GET', '/incidents', { token: bob.token });
      expect(after.status).toBe(401);
      expect(after.body.error.details).toContain('revoked');
    });

    it('rejects a token body with an unknown role or extra fields', async () => {
      const res = await api.call('POST', '/tokens', { body: { user: 'bob', role: 'root', extra: 1 } });
      expect(res.status).toBe(400);
      expect(res.body.error.details).toContain('body.role');
      expect(res.body.error.details).toContain('extra');
    });
  });

  describe('error statuses', () => {
    it('400s malformed JSON', async () => {
      const res = await api.call('POST', '/tokens', {
        rawBody: '{"user": ',
        headers: { 'content-type': 'application/json' },
      });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(errorBody(400, 'Invalid request'));
      expect(res.body.error.details).toContain('malformed JSON');
    });

    it('404s unknown paths', async () => {
      const res = await api.call('GET', '/nothing-here');
      expect(res.status).toBe(404);
      expect(res.body).toEqual(errorBody(404, 'Not found'));
    });

    it('405s other methods with Allow', async () => {
      const res = await api.call('PATCH', '/tokens');
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST, GET, HEAD');
      expect(res.body).toEqual(errorBody(405, 'Method not allowed'));
    });

    it('413s bodies over 1 MiB', async () => {
      const res = await api.call('POST', '/tokens', { body: { user: 'x'.repeat(1_100_000), role: 'viewer' } });
      expect(res.status).toBe(413);
      expect(res.body).toEqual(errorBody(413, 'Payload too large'));
    });

    it('415s bodies that are not JSON', async () => {
      const res = await api.call('POST', '/tokens', {
        rawBody: 'user=bob',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expect(res.status).toBe(415);
      expect(res.body).toEqual(errorBody(415, 'Unsupported media type'));
    });

    /** The errorHandler's answer to a route that throws `err`, on a throwaway app. */
    async function answerTo(err: Error): Promise<{ res: Response; text: string }> {
      const app = express();
      app.post('/boom', () => {
        throw err;
      });
      app.use(errorHandler);
      const server = app.listen(0);
      try {
        const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/boom`, { method: 'POST' });
        return { res, text: await res.text() };
      } finally {
        server.closeAllConnections(); // fetch keeps its socket alive: close it too, not just the listener
        server.close();
      }
    }

    it('503s an update Temporal did not finish in time, with Retry-After', async () => {
      // What the client throws when the server's deadline passed before the workflow answered.
      const { res, text } = await answerTo(new WorkflowUpdateRPCTimeoutOrCancelledError('context deadline exceeded'));
      const body = JSON.parse(text) as { error: { details: string } };
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe(String(RETRY_AFTER_SECONDS));
      expect(body).toEqual(errorBody(503, 'Service unavailable'));
      expect(body.error.details).toMatch(/did not answer in time.*retry/);
    });

    it('500s without leaking the stack', async () => {
      const { res, text } = await answerTo(new Error('secret internals at /srv/app.ts:12'));
      expect(res.status).toBe(500);
      expect(JSON.parse(text)).toEqual(errorBody(500, 'Internal error'));
      expect(text).not.toContain('secret internals');
    });
  });

  describe('health, metrics and the API document', () => {
    it('answers liveness and reports readiness per dependency', async () => {
      expect((await api.call('GET', '/healthz', { token: null })).body).toEqual({ status: 'ok' });
      const ready = await api.call('GET', '/readyz', { token: null });
      expect(ready.status).toBe(503); // this harness runs without Temporal
      expect(ready.body.error.details).toContain('temporal: not configured');
      expect(ready.body.error.details).not.toContain('mongodb');
    });

    it('exports request duration by route and status', async () => {
      await api.call('GET', '/tokens');
      const res = await api.call('GET', '/metrics', { token: null });
      expect(res.status).toBe(200);
      expect(res.text).toMatch(
        /foghorn_http_request_duration_seconds_count\{method="GET",route="\/api\/v1\/tokens",status="200"\} \d+/,
      );
      expect(res.text).toContain('process_cpu_user_seconds_total');
    });

    it('serves an OpenAPI 3.1 document covering every route', async () => {
      const res = await api.call('GET', '/openapi.json', { token: null });
      expect(res.status).toBe(200);
      expect(res.body.openapi).toBe('3.1.0');
      const paths = Object.keys(res.body.paths);
      for (const p of [
        '/healthz',
        '/readyz',
        '/metrics',
        '/api/v1/tokens',
        '/api/v1/tokens/{id}',
        '/api/v1/audit',
        '/api/v1/audit/verify',
        '/api/v1/runbooks',
        '/api/v1/runbooks/{name}',
      ]) {
        expect(paths).toContain(p);
      }
      expect(res.body.paths['/api/v1/audit'].get.parameters.map((p: { name: string }) => p.name)).toEqual(
        expect.arrayContaining(['page', 'pageSize', 'action', 'user', 'resource', 'from', 'to']),
      );
      expect(res.body.components.securitySchemes.bearerAuth).toEqual({ type: 'http', scheme: 'bearer' });
    });
  });
});
