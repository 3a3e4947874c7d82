// ESLint for src/, test/, fixtures/, bench/, dev/ and tools/ (`npm run lint`, part of `npm test`).
//
// Type-aware: the rules that catch real bugs here (a promise nobody awaits, an
// async callback where a sync one is expected, a switch that misses a case of a
// union) need the type checker. typescript-eslint runs on TypeScript's JS API,
// which TypeScript 7 no longer has, so the package named `typescript` is the
// TypeScript 6 build (`@typescript/typescript6`) and only lint uses it; builds
// and `npm run typecheck` use TypeScript 7 (`typescript7`).
//
// None of them has a finding or a suppression: a new finding fails the build.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', '.flatload/'] },
  {
    files: ['**/*.ts'],
    extends: [js.configs.recommended, ...tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { project: ['./tsconfig.test.json'], tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // node:test's test()/describe() return promises the runner itself awaits.
      '@typescript-eslint/no-floating-promises': [
        'error',
        { allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['test', 'it', 'describe', 'suite'] }] },
      ],
      // Style only: an async function without await (an async generator that only yields, a
      // callback that must return a promise) is not a bug.
      '@typescript-eslint/require-await': 'off',
      // The same convention as tsc's noUnusedParameters: a leading underscore marks "unused on purpose".
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
      // A switch over a union (plan operations, event types, error codes) must handle every member or say default.
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      // `return promise` inside try skips the catch and runs finally (connection release, rollback) too early.
      '@typescript-eslint/return-await': ['error', 'in-try-catch'],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
    },
  },
  {
    files: ['src/**/*.ts'],
    rules: {
      // One error vocabulary: what src/ throws is a FlatloadError with a code and context (src/errors).
      'no-restricted-syntax': [
        'error',
        { selector: "NewExpression[callee.name='Error']", message: 'throw a FlatloadError (src/errors) with a code and context, not a plain Error' },
      ],
    },
  },
);
