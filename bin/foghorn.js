#!/usr/bin/env node
// Runs the built CLI when present (production image), else the TypeScript sources.
const path = require('path');
const fs = require('fs');
const built = path.join(__dirname, '..', 'dist', 'cli', 'main.js');
if (fs.existsSync(built)) {
  require(built);
} else {
  require('ts-node').register({ transpileOnly: true, project: path.join(__dirname, '..', 'tsconfig.json') });
  require('../cli/main.ts');
}
