import express, { type RequestHandler } from 'express';
import { existsSync, readFileSync } from 'fs';
import path from 'path';

/**
 * The operator console (console/, built by Vite) at `/`, same origin as the API: no extra process
 * and no CORS. Built files live in `dist/console`; from the sources (ts-node) that is
 * `<repo>/dist/console`, from the compiled API (`dist/api`) it is `dist/console`.
 */
export const CONSOLE_DIR = path.join(__dirname, __filename.endsWith('.ts') ? '../dist/console' : '../console');

export interface ConsoleOptions {
  /** Where the console finds the API (FOGHORN_BASE_PATH). */
  basePath: string;
  /** The Temporal Web UI page of the namespace (`…/namespaces/<ns>`); absent: no workflow links. */
  temporalUi?: string;
  /** The built console (tests point it elsewhere); default CONSOLE_DIR. */
  dir?: string;
}

/**
 * The page may load only its own scripts, styles and images and talk only to its own origin;
 * it cannot be framed (clickjacking of the action buttons) and leaks no URL in a Referer.
 */
const SECURITY_HEADERS = {
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; " +
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
};

const escapeAttribute = (value: string) =>
  value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** Sets the `content` of `<meta name="NAME" content="…">` in the built index.html. */
function setMeta(html: string, name: string, content: string): string {
  const tag = new RegExp(`(<meta name="${name}" content=")[^"]*(")`);
  if (!tag.test(html)) throw new Error(`the console's index.html has no <meta name="${name}">`);
  return html.replace(tag, (_m, head: string, tail: string) => head + escapeAttribute(content) + tail);
}

/**
 * GET `/` answers the console's index.html with the deployment's settings in its meta tags;
 * `/assets/*` are Vite's content-hashed files, cached for good. Without a build, `/` says how to
 * make one (503) and the API works as before.
 */
export function consoleRoutes(options: ConsoleOptions): express.Router {
  const dir = options.dir ?? CONSOLE_DIR;
  const router = express.Router({ caseSensitive: true, strict: true });
  const indexFile = path.join(dir, 'index.html');
  if (!existsSync(indexFile)) {
    router.get('/', (_req, res) => {
      res
        .status(503)
        .type('text/plain')
        .send('The Foghorn console is not built: run `npm run build:console` (npm install and npm start do it).\n');
    });
    return router;
  }
  let html = readFileSync(indexFile, 'utf8');
  html = setMeta(html, 'foghorn-api-base', options.basePath);
  html = setMeta(html, 'foghorn-temporal-ui', options.temporalUi ?? '');

  const secured: RequestHandler = (_req, res, next) => {
    res.set(SECURITY_HEADERS);
    next();
  };
  router.get('/', secured, (_req, res) => {
    res.set('Cache-Control', 'no-cache').type('html').send(html);
  });
  router.use(
    '/assets',
    secured,
    express.static(path.join(dir, 'assets'), { index: false, immutable: true, maxAge: '365d' }),
  );
  // Vite's public/ files (the icon): everything at the top but index.html, which only `/` serves.
  const topFiles = express.static(dir, { index: false, maxAge: '1h' });
  router.use(secured, (req, res, next) => (req.path === '/index.html' ? next() : topFiles(req, res, next)));
  return router;
}
