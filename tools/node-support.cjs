// The Node versions Foghorn runs on: package.json's `engines.node` (`>=MAJOR.MINOR`). CommonJS and
// free of dependencies, so `bin/foghorn.js` can check before anything that needs a newer Node loads
// (client-node 2's dependencies fail on Node 20 with an unhelpful TypeError).
'use strict';
const { engines } = require('../package.json');

const [, MIN_MAJOR, MIN_MINOR] = /^>=(\d+)\.(\d+)$/.exec(engines.node).map(Number);

/** Why this Node cannot run Foghorn (one line), or undefined when it can. */
function unsupportedNode(version = process.versions.node) {
  const [major, minor] = version.split('.').map(Number);
  if (major > MIN_MAJOR || (major === MIN_MAJOR && minor >= MIN_MINOR)) return undefined;
  return `Node ${version} is too old: Foghorn needs Node ${MIN_MAJOR}.${MIN_MINOR} or newer (Node 22 or 24 LTS)`;
}

module.exports = { unsupportedNode };
