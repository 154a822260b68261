/**
 * The fast layer (`npm run test:fast`, under 2 minutes on 2 cores): pure unit tests (test/unit)
 * and workflow tests with fake activities on the time-skipping test server (test/flows). No
 * MongoDB, API, Kubernetes or browser: those tests stay in the full suite (`npm test`, jest.config.js),
 * which runs these too. The workflows are bundled once for all files (globalSetup).
 */
const base = require('./jest.config.js');

module.exports = {
  ...base,
  roots: ['<rootDir>/test/unit', '<rootDir>/test/flows'],
  // Spawn Node processes that allocate hundreds of MiB: memory behaviour, not logic (full suite only).
  testPathIgnorePatterns: ['/node_modules/', '/test/unit/heap-'],
  globalSetup: '<rootDir>/test/harness/flow-bundle-setup.ts',
  globalTeardown: '<rootDir>/test/harness/flow-bundle-teardown.ts',
};
