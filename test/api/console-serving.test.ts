import express from 'express';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'fs';
import type { Server } from 'http';
import type { AddressInfo } from 'net';
import { tmpdir } from 'os';
import path from 'path';
import { consoleRoutes, type ConsoleOptions } from '../../api/console';
import { errorHandler, notFoundHandler } from '../../api/errors';
import { useApi } from '../harness/api';

/** A stand-in for Vite's output: index.html with the two meta tags, one hashed asset, the icon. */
function fakeBuild(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'foghorn-console-'));
  mkdirSync(path.join(dir, 'assets'));
  writeFileSync(
    path.join(dir, 'index.html'),
    '<!doctype html><html><head><meta name="foghorn-api-base" content="/api/v1" />' +
      '<meta name="foghorn-temporal-ui" content="" /><script type="module" src="/assets/index-abc123.js"></script>' +
      '</head><body><div id="root"></div></body></html>',
  );
  writeFileSync(path.join(dir, 'assets', 'index-abc123.js'), 'console.log("console")');
  writeFileSync(path.join(dir, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  writeFileSync(path.join(dir, '.source-hash'), 'abc');
  return dir;
}

async function serve(options: ConsoleOptions): Promise<{ url: string; close(): Promise<void> }> {
  const app = express();
  app.use(consoleRoutes(options));
  app.use(notFoundHandler, errorHandler);
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('the console at /', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  it("serves index.html with the deployment's API base and Temporal UI, behind a strict CSP", async () => {
    const dir = fakeBuild();
    dirs.push(dir);
    const site = await serve({ dir, basePath: '/ops/api', temporalUi: 'http://temporal.example:8233/namespaces/a&b' });
    try {
      const res = await fetch(`${site.url}/`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(res.headers.get('cache-control')).toBe('no-cache');
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-inline');
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      const html = await res.text();
      expect(html).toContain('<meta name="foghorn-api-base" content="/ops/api" />');
      // Attribute-escaped: a URL cannot close the attribute and inject markup.
      expect(html).toContain(
        '<meta name="foghorn-temporal-ui" content="http://temporal.example:8233/namespaces/a&amp;b" />',
      );

      const asset = await fetch(`${site.url}/assets/index-abc123.js`);
      expect(asset.status).toBe(200);
      expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(await asset.text()).toBe('console.log("console")');
      expect((await fetch(`${site.url}/favicon.svg`)).status).toBe(200);

      // The unprocessed index.html, dotfiles and unknown paths are not served.
      for (const p of ['/index.html', '/.source-hash', '/assets/nope.js', '/nope']) {
        const other = await fetch(site.url + p);
        expect({ p, status: other.status }).toEqual({ p, status: 404 });
        expect(await other.json()).toMatchObject({ kind: 'Error', error: { code: 404 } });
      }
    } finally {
      await site.close();
    }
  });

  it('says how to build it when there is no build (503), and the rest is unaffected', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'foghorn-console-none-'));
    dirs.push(dir);
    const site = await serve({ dir, basePath: '/api/v1' });
    try {
      const res = await fetch(`${site.url}/`);
      expect(res.status).toBe(503);
      expect(await res.text()).toContain('npm run build:console');
      expect((await fetch(`${site.url}/assets/x.js`)).status).toBe(404);
    } finally {
      await site.close();
    }
  });
});

describe('GET /whoami', () => {
  let api: Awaited<ReturnType<typeof useApi>>;
  beforeAll(async () => {
    api = await useApi();
  });
  afterAll(() => api?.stop());

  it("answers the token's user and role, for every role", async () => {
    for (const role of ['viewer', 'operator', 'admin'] as const) {
      const res = await api.call('GET', '/whoami', { token: api.tokens[role] });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ apiVersion: 'v1', kind: 'Identity', user: `${role}-user`, role });
    }
  });

  it('401s without a valid token', async () => {
    const res = await api.call('GET', '/whoami', { token: 'fh_not-a-token' });
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ kind: 'Error', error: { code: 401, message: 'Unauthorized' } });
  });
});
