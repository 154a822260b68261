#!/usr/bin/env node
// Builds what changed since the last build: the server (TypeScript → dist/ with tsc) and the
// operator console (console/ → dist/console with Vite). `npm install` (prepare), `npm start`,
// `npm test` and `npm run build` call it, so the product always runs compiled JavaScript and
// nobody has to remember a build step; an unchanged tree costs one hash of its sources.
//   node tools/build.mjs [--force] [server|console]   (default: both)
import { spawnSync } from 'child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'fs';
import { createRequire } from 'module';
import path from 'path';

const require = createRequire(import.meta.url);
const { ROOT, SERVER_DIRS, sourceHash, stampFile, isCurrent } = require('./build-stamp.cjs');
const say = (message) => process.stderr.write(`[build] ${message}\n`);
const force = process.argv.includes('--force');
const only = process.argv.slice(2).find((a) => !a.startsWith('--'));

/** tsc into dist/, after removing the previous output (a deleted source leaves no stale module). */
function buildServer() {
  for (const dir of SERVER_DIRS) rmSync(path.join(ROOT, 'dist', dir), { recursive: true, force: true });
  let tsc;
  try {
    tsc = require.resolve('typescript/bin/tsc');
  } catch {
    return 'TypeScript is not installed (production install)';
  }
  say('compiling the server into dist/ (tsc)');
  const run = spawnSync(process.execPath, [tsc, '-p', path.join(ROOT, 'tsconfig.build.json')], { stdio: 'inherit' });
  if (run.status !== 0) throw new Error('tsc failed');
}

async function buildConsole() {
  let vite;
  try {
    vite = await import('vite');
  } catch {
    return 'Vite is not installed (production install)';
  }
  say('building the console into dist/console (Vite)');
  // Vite takes NODE_ENV from the environment when it is set: under Jest (`test`) it would bundle
  // React's development build. The console is always built for production.
  process.env.NODE_ENV = 'production';
  await vite.build({
    configFile: path.join(ROOT, 'console', 'vite.config.ts'),
    // A forced build (npm run build) prints Vite's size report; the automatic ones stay quiet.
    logLevel: force ? 'info' : 'warn',
  });
}

const TARGETS = {
  server: { build: buildServer, output: 'dist/cli/main.js' },
  console: { build: buildConsole, output: 'dist/console/index.html' },
};

for (const [name, target] of Object.entries(TARGETS)) {
  if (only && only !== name) continue;
  // `npm ci` in the image's dependency layer runs before the sources are copied in.
  if (name === 'console' && !existsSync(path.join(ROOT, 'console', 'index.html'))) continue;
  if (name === 'server' && !existsSync(path.join(ROOT, 'cli', 'main.ts'))) continue;
  const hash = sourceHash(name);
  if (!force && isCurrent(name, hash)) continue;
  // A build that fails half-way must not leave a stamp that a later state of the sources matches.
  rmSync(stampFile(name), { force: true });
  const cannot = await target.build();
  if (cannot) {
    // Without the build tools, an earlier build is what there is to run.
    if (existsSync(path.join(ROOT, target.output))) {
      say(`${cannot}: keeping the ${name} built before`);
      continue;
    }
    say(`${cannot}, and the ${name} was never built: run \`npm install\` (with dev dependencies)`);
    process.exit(1);
  }
  mkdirSync(path.dirname(stampFile(name)), { recursive: true });
  writeFileSync(stampFile(name), hash);
}
