#!/usr/bin/env node
// Builds the operator console (console/ → dist/console) with Vite when its sources changed since
// the last build: `npm install` (prepare), `npm start`, `npm test` and `npm run build` call it,
// so nobody has to remember it and an unchanged console costs one hash of a small folder.
// `--force` rebuilds regardless.
import { createHash } from 'crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'fs';
import path from 'path';
import { fileURLToPath } from 'url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const sources = path.join(root, 'console');
const out = path.join(root, 'dist', 'console');
const stamp = path.join(out, '.source-hash');
const say = (message) => process.stderr.write(`[console] ${message}\n`);

/** Every file under dir, sorted, so the hash does not depend on the directory's order. */
function files(dir) {
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((e) => (e.isDirectory() ? files(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

/** The console's sources and the locked dependency versions it is built with. */
function sourceHash() {
  const hash = createHash('sha256');
  for (const file of [...files(sources), path.join(root, 'package-lock.json')]) {
    hash.update(path.relative(root, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex');
}

if (!existsSync(path.join(sources, 'index.html'))) {
  // `npm ci` in the image's dependency layer runs before the sources are copied in.
  say('no console sources here: nothing to build');
  process.exit(0);
}
const hash = sourceHash();
if (!process.argv.includes('--force') && existsSync(stamp) && readFileSync(stamp, 'utf8') === hash) {
  process.exit(0);
}
let vite;
try {
  vite = await import('vite');
} catch {
  if (existsSync(path.join(out, 'index.html'))) {
    say('Vite is not installed (production install): serving the console built before');
    process.exit(0);
  }
  say('Vite is not installed and the console was never built: run `npm install` (with dev dependencies)');
  process.exit(1);
}
say('building the console into dist/console');
// Vite takes NODE_ENV from the environment when it is set: under Jest (`test`) it would bundle
// React's development build. The console is always built for production.
process.env.NODE_ENV = 'production';
// A forced build (npm run build:console) prints Vite's size report; the automatic ones stay quiet.
await vite.build({
  configFile: path.join(sources, 'vite.config.ts'),
  logLevel: process.argv.includes('--force') ? 'info' : 'warn',
});
writeFileSync(stamp, hash);
say('built');
