#!/usr/bin/env node
// Runs the compiled CLI (dist/, which `npm install`, `npm start`, `npm test` and `npm run build`
// keep current through tools/build.mjs). Only when dist/ was not built from the sources as they
// are now (an edit since the last build) does it run the TypeScript sources through ts-node; the
// production image runs dist/cli/main.js directly.
const path = require('path');
const { unsupportedNode } = require('../tools/node-support.cjs');
const { isCurrent } = require('../tools/build-stamp.cjs');

const tooOld = unsupportedNode();
if (tooOld) {
  console.error(`foghorn: ${tooOld}`);
  process.exit(1);
}

if (isCurrent('server')) {
  require(path.join(__dirname, '..', 'dist', 'cli', 'main.js'));
} else {
  require('ts-node').register({ transpileOnly: true, project: path.join(__dirname, '..', 'tsconfig.json') });
  require('../cli/main.ts');
}
