// Lint rules after temporalio/samples-typescript: type-aware checks everywhere, and workflow
// code kept deterministic by forbidding the modules that make it not so (DESIGN §2).
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';
import { builtinModules } from 'module';
import globals from 'globals';
import reactHooks from 'eslint-plugin-react-hooks';

/** Every Node built-in, bare and `node:`-prefixed, subpaths included (`fs/promises`, `dns/promises`). */
const BUILTINS = builtinModules.flatMap((m) => [m, `node:${m}`]);
/** `node:`-only modules (`node:test`, `node:sqlite`) are not in builtinModules. */
const NODE_PREFIXED = (message) => ({ regex: '^node:', message });
const TEMPORAL = ['@temporalio/client', '@temporalio/worker', '@temporalio/activity', '@temporalio/workflow'];

/** A top-level folder imported as a whole (`../activities`, its index) or any file in it. */
const folders = (...names) => names.flatMap((n) => [`**/${n}`, `**/${n}/**`]);

/** Models are store/'s own: everything else (tests and benchmarks excepted) goes through its helpers. */
const MODELS = { group: folders('store/models'), message: 'Only store/ touches models: use a store/ query helper.' };

const houseRule = ({ paths = [], patterns = [] }) => ({
  'no-restricted-imports': ['error', { paths, patterns: [...patterns, MODELS] }],
});

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', '.tools/', 'data/', 'coverage/', 'bin/', '*.config.js', '*.config.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'object-shorthand': ['error', 'always'],
    },
  },
  // ---------------------------------------------------------------------------------------------
  // The house (DESIGN §2): one block per folder, saying what it may import. A block's
  // no-restricted-imports replaces the one before it, so each is built whole by houseRule().
  // ---------------------------------------------------------------------------------------------
  {
    files: ['workflows/**/*.ts', 'test/fixtures/*workflows*.ts'],
    rules: houseRule({
      paths: [
        ...BUILTINS.map((name) => ({ name, message: 'Workflows must be deterministic: no Node built-ins.' })),
        { name: 'mongoose', message: 'Workflows never touch MongoDB: use an activity.' },
        { name: 'express', message: 'Workflows never serve HTTP.' },
        { name: 'zod', message: 'Workflows never validate: schemas belong to the edges (contracts/).' },
        ...['@temporalio/client', '@temporalio/worker', '@temporalio/activity'].map((name) => ({
          name,
          message: 'Workflows use @temporalio/workflow only.',
        })),
      ],
      patterns: [
        NODE_PREFIXED('Workflows must be deterministic: no Node built-ins.'),
        {
          group: folders('store', 'api', 'gateway', 'operations', 'worker', 'cli', 'contracts', 'config'),
          message: 'Workflows import domain/ and activity types only.',
        },
        { group: folders('activities'), allowTypeImports: true, message: 'Import activity types only (import type).' },
      ],
    }),
  },
  {
    // A workflow reads top to bottom: a state object, handlers, one short function per phase.
    files: ['workflows/**/*.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 150, skipBlankLines: true, skipComments: true }] },
  },
  {
    files: ['domain/**/*.ts'],
    rules: houseRule({
      paths: [
        // The one exception (docs/design.md §2): hashes and HMACs are pure functions of their input.
        ...BUILTINS.filter((m) => m !== 'crypto' && m !== 'node:crypto').map((name) => ({
          name,
          message: 'domain/ is pure: no Node built-ins.',
        })),
        ...['crypto', 'node:crypto'].map((name) => ({
          name,
          allowImportNames: ['createHash', 'createHmac', 'timingSafeEqual'],
          message: 'domain/ is deterministic: hashes and HMACs only, no randomness.',
        })),
        ...['mongoose', 'express'].map((name) => ({ name, message: 'domain/ is pure: no I/O.' })),
        { name: 'zod', message: 'domain/ declares plain types: their schemas live in contracts/.' },
      ],
      patterns: [
        { regex: '^node:(?!crypto$)', message: 'domain/ is pure: no Node built-ins.' },
        { group: ['@temporalio/*'], message: 'domain/ is free of Temporal: workflows hand its constants to it.' },
        {
          group: folders('store', 'api', 'activities', 'workflows', 'operations', 'worker', 'gateway', 'cli'),
          message: 'domain/ imports nothing with I/O.',
        },
        {
          group: folders('contracts', 'config'),
          message: 'domain/ imports no schema: contracts/ and config/ build on domain/, not the reverse.',
        },
      ],
    }),
  },
  {
    // The schemas validated at the edges, each checked against the plain type domain/ declares.
    files: ['contracts/**/*.ts', 'config/**/*.ts'],
    rules: houseRule({
      paths: [...TEMPORAL, 'mongoose', 'express'].map((name) => ({
        name,
        message: 'contracts/ and config/ are schemas: no I/O.',
      })),
      patterns: [
        {
          group: folders('store', 'api', 'activities', 'workflows', 'operations', 'worker', 'gateway', 'cli'),
          message: 'contracts/ and config/ import zod and domain/ only.',
        },
      ],
    }),
  },
  {
    files: ['store/**/*.ts'],
    rules: houseRule({
      paths: TEMPORAL.map((name) => ({ name, message: 'store/ is MongoDB only: Temporal is for operations/.' })),
      patterns: [
        {
          group: folders('api', 'activities', 'workflows', 'operations', 'gateway', 'worker', 'cli'),
          message: 'store/ imports domain/, contracts/ and config/ only.',
        },
      ],
    }),
  },
  {
    files: ['operations/**/*.ts'],
    rules: houseRule({
      paths: ['@temporalio/worker', '@temporalio/activity', '@temporalio/workflow', 'express'].map((name) => ({
        name,
        message: 'operations/ works over the Temporal client.',
      })),
      patterns: [
        {
          group: folders('api', 'activities', 'gateway', 'worker', 'cli'),
          message: 'operations/ imports domain/, contracts/, store/ and workflows/ (to start and message them) only.',
        },
      ],
    }),
  },
  {
    files: ['api/**/*.ts'],
    rules: houseRule({
      paths: ['@temporalio/worker', '@temporalio/activity', '@temporalio/workflow'].map((name) => ({
        name,
        message: 'api/ works over the Temporal client (through operations/).',
      })),
      patterns: [
        {
          group: folders('activities', 'workflows', 'gateway', 'worker', 'cli'),
          message: 'api/ imports domain/, contracts/, config/, store/ and operations/ only.',
        },
      ],
    }),
  },
  {
    files: ['gateway/**/*.ts'],
    rules: houseRule({
      paths: ['@temporalio/worker', '@temporalio/activity', '@temporalio/workflow'].map((name) => ({
        name,
        message: 'gateway/ works over the Temporal client (through operations/).',
      })),
      patterns: [
        {
          group: folders('api', 'activities', 'workflows', 'worker', 'cli'),
          message: 'gateway/ imports domain/, contracts/, config/, store/ and operations/ only.',
        },
      ],
    }),
  },
  {
    files: ['activities/**/*.ts'],
    rules: houseRule({
      paths: [{ name: '@temporalio/workflow', message: 'Activities are not workflow code.' }],
      patterns: [
        {
          group: folders('api', 'gateway', 'worker', 'cli', 'workflows'),
          message:
            'activities/ imports domain/, contracts/, config/, store/ and operations/ (to act through Temporal) only.',
        },
      ],
    }),
  },
  {
    files: ['worker/**/*.ts'],
    rules: houseRule({
      patterns: [{ group: folders('api', 'gateway', 'cli'), message: 'worker/ runs activities/ and workflows/ only.' }],
    }),
  },
  {
    // cli/ may import everything but the models: it goes through store/ like the rest.
    files: ['cli/**/*.ts'],
    rules: houseRule({}),
  },
  {
    // Build scripts run by npm before anything is compiled: plain JavaScript on Node, untyped.
    files: ['tools/**/*.mjs', 'tools/**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { ...tseslint.configs.disableTypeChecked.languageOptions, globals: globals.node },
  },
  {
    files: ['tools/**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // The operator console (browser code, React): type-aware through its own tsconfig, the rules of
    // hooks, browser globals; it talks to the API over HTTP only, so it imports no server folder.
    files: ['console/**/*.{ts,tsx}'],
    languageOptions: {
      globals: globals.browser,
      parserOptions: {
        projectService: false,
        project: ['./console/tsconfig.json'],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    plugins: { 'react-hooks': reactHooks },
    rules: {
      ...reactHooks.configs.recommended.rules,
      ...houseRule({
        patterns: [
          {
            group: folders(
              'domain',
              'contracts',
              'store',
              'api',
              'activities',
              'workflows',
              'operations',
              'gateway',
              'worker',
              'cli',
            ),
            message: 'The console runs in the browser: it reaches the server over the API only.',
          },
        ],
      }),
    },
  },
  prettier,
);
