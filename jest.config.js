/**
 * Real servers (Temporal, MongoDB-wire, Kubernetes) are shared per test file; 2 cores ⇒ 2 workers.
 * @kubernetes/client-node and a few of its dependencies ship only ES modules, which Jest's
 * CommonJS runtime cannot load: they are transpiled like our own sources (once; Jest caches it).
 */
const esmOnly = [
  '@kubernetes/client-node',
  'jsonpath-plus',
  'openid-client',
  'oauth4webapi',
  'jose',
  'rfc4648',
  'socks-proxy-agent',
  'agent-base',
];

module.exports = {
  preset: 'ts-jest',
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  maxWorkers: 2,
  testTimeout: 60_000,
  transform: {
    '^.+\\.ts$': ['ts-jest', { diagnostics: false }],
    '^.+\\.js$': ['ts-jest', { diagnostics: false, tsconfig: { allowJs: true, module: 'commonjs' } }],
  },
  transformIgnorePatterns: [`/node_modules/(?!(${esmOnly.join('|')})/)`],
};
