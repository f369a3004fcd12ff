// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** The three services speak through shared/ only: each may import shared/, never another service. */
const roleBoundary = (role, others) => ({
  files: [`${role}/**/*.ts`],
  rules: {
    '@typescript-eslint/no-restricted-imports': [
      'error',
      {
        patterns: others.map((other) => ({
          group: [`**/${other}/*`, `**/${other}`],
          message: `${role}/ may import shared/ only, never ${other}/ (see ARCHITECTURE.md, Roles).`,
        })),
      },
    ],
  },
});

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'node_modules/',
      '.services/',
      '.cache/',
      'crawl-output/',
      '.bench/',
      '.tmp/',
      'test-output/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly' },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  roleBoundary('master', ['client', 'scheduler']),
  roleBoundary('client', ['master', 'scheduler']),
  roleBoundary('scheduler', ['master', 'client']),
  {
    files: ['shared/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/master/*', '**/client/*', '**/scheduler/*'],
              message: 'shared/ never imports a service.',
            },
          ],
        },
      ],
    },
  },
);
