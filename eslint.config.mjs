// Lint for every TypeScript and JavaScript source: typescript-eslint's recommended rules plus the
// ones that guard this project's promises (no eval or string code anywhere — the webview's CSP
// forbids it and so do we; strict equality; no stray console in the pure core).
import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  {
    ignores: ['dist/**', 'out/**', 'node_modules/**', '.vscode-test/**', 'test-output/**', '**/*.min.js'],
  },
  eslint.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: 'module',
      globals: { ...globals.node },
    },
    rules: {
      'no-eval': 'error',
      'no-implied-eval': 'error',
      'no-new-func': 'error',
      'no-script-url': 'error',
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      'no-var': 'error',
      'prefer-const': 'error',
      'no-throw-literal': 'error',
      'no-restricted-syntax': ['error', {
        selector: "CallExpression[callee.name='setTimeout'][arguments.0.type='Literal']",
        message: 'setTimeout with a string is eval.',
      }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Plain CommonJS files, loaded unbundled (e.g. worker-thread scripts).
    files: ['**/*.js', '**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['webview/**/*.ts'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    files: ['test/**/*.ts', 'test/**/*.mjs'],
    languageOptions: { globals: { ...globals.mocha } },
  },
  {
    // The core is pure: it computes and returns; front ends decide what to print.
    files: ['src/core/**/*.ts'],
    rules: { 'no-console': 'error' },
  },
);
