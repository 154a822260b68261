// What a build was made from: a hash of its sources, kept beside its output. `tools/build.mjs`
// writes it after a build; `bin/foghorn.js` reads it to run the compiled CLI only when it was
// built from the sources as they are now. CommonJS, so the `bin/` launcher can require it.
'use strict';
const { createHash } = require('crypto');
const { existsSync, readdirSync, readFileSync, statSync } = require('fs');
const path = require('path');

const ROOT = path.resolve(__dirname, '..');

/** The server's folders: what tsconfig.build.json compiles into dist/. */
const SERVER_DIRS = JSON.parse(readFileSync(path.join(ROOT, 'tsconfig.build.json'), 'utf8')).include;

/** Each build: its inputs (folders and files under the root) and where its stamp lives. */
const TARGETS = {
  server: {
    inputs: [...SERVER_DIRS, 'tsconfig.json', 'tsconfig.build.json', 'package.json', 'package-lock.json'],
    stamp: 'dist/.source-hash',
  },
  console: { inputs: ['console', 'package-lock.json'], stamp: 'dist/console/.source-hash' },
};

/** Every file under `dir`, sorted, so the hash does not depend on the directory's order. */
function files(dir) {
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((e) => (e.isDirectory() ? files(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

/** sha-256 over the names and contents of the target's inputs (~20 ms for the server's). */
function sourceHash(target) {
  const hash = createHash('sha256');
  for (const input of TARGETS[target].inputs) {
    const full = path.join(ROOT, input);
    for (const file of existsSync(full) && statSync(full).isDirectory() ? files(full) : [full]) {
      hash.update(path.relative(ROOT, file)).update('\0');
      hash.update(existsSync(file) ? readFileSync(file) : '').update('\0');
    }
  }
  return hash.digest('hex');
}

const stampFile = (target) => path.join(ROOT, TARGETS[target].stamp);

/** True when the target's output was built from its sources as they are now. */
function isCurrent(target, hash = sourceHash(target)) {
  const stamp = stampFile(target);
  return existsSync(stamp) && readFileSync(stamp, 'utf8') === hash;
}

module.exports = { ROOT, SERVER_DIRS, TARGETS, sourceHash, stampFile, isCurrent };
