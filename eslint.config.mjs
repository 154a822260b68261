// Lint rules after temporalio/samples-typescript: type-aware checks everywhere, and workflow
// code kept deterministic by forbidding the modules that make it not so (DESIGN §2).
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';
import { builtinModules } from 'module';

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
  {
    files: ['workflows/**/*.ts', 'test/fixtures/*workflows*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            ...builtinModules
              .flatMap((m) => [m, `node:${m}`])
              .map((name) => ({ name, message: 'Workflows must be deterministic: no Node built-ins.' })),
            { name: 'mongoose', message: 'Workflows never touch MongoDB: use an activity.' },
            { name: 'express', message: 'Workflows never serve HTTP.' },
          ],
          patterns: [
            {
              group: ['**/store/**', '**/api/**', '**/gateway/**'],
              message: 'Workflows import domain/ and activity types only.',
            },
            {
              group: ['**/activities/**'],
              allowTypeImports: true,
              message: 'Import activity types only (import type).',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['domain/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            'mongoose',
            'express',
            'fs',
            'http',
            'https',
            'net',
            'child_process',
            '@temporalio/client',
            '@temporalio/worker',
          ].map((name) => ({ name, message: 'domain/ is pure: no I/O.' })),
          patterns: [
            {
              group: ['**/store/**', '**/api/**', '**/activities/**', '**/workflows/**'],
              message: 'domain/ imports nothing with I/O.',
            },
          ],
        },
      ],
    },
  },
  prettier,
);
