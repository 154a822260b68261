/** Real servers (Temporal, MongoDB-wire) are shared per test file; 2 cores ⇒ 2 workers. */
module.exports = {
  preset: 'ts-jest',
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  maxWorkers: 2,
  testTimeout: 60_000,
  transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] },
};
