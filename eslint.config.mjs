// Flat config shared by every project: typescript-eslint's recommended rules, the type-checked
// rules that catch what an operator cannot afford (an unawaited promise is a lost write or an
// unhandled rejection; a switch missing a state is a state machine with a hole), plus nx's module
// boundaries so apps never import each other and libraries never import apps.
import js from '@eslint/js';
import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist', '**/out-tsc', '**/node_modules', '**/test-output', '**/.nx', 'tools/control-plane/go'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.mts', '**/*.js', '**/*.mjs'],
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        Buffer: 'readonly',
        AbortController: 'readonly',
        fetch: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/no-explicit-any': 'off',
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  {
    // Type-aware: each file is checked with its project's tsconfig (the TypeScript project service).
    files: ['**/*.ts', '**/*.mts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      // A check the types call dead is deleted, or the type made honest where it lied (bytes from
      // the wire cast to a type, Node's X509Certificate fields): never a check deleted because a
      // cast said so. An abort checked again after an await is disabled line by line, with why.
      '@typescript-eslint/no-unnecessary-condition': 'error',
    },
  },
  {
    // Tests assign their servers in beforeAll, and afterAll must stop what started when beforeAll
    // failed half-way: `plane?.stop()` is needed although the declared type says it is always there.
    files: ['**/*.test.ts', '**/*.e2e.ts', '**/*.bench.ts', '**/testing/control-plane-suite.ts'],
    rules: { '@typescript-eslint/no-unnecessary-condition': 'off' },
  },
  {
    // Node keeps an AbortSignal.timeout's timer until the signal is collected, and a timer holds the
    // AsyncLocalStorage stores of where it was made: when such a store reaches the signal (a
    // request's trace holding its answer, whose config holds the signal), nothing of it is ever
    // freed. The cert operator leaked every ACME exchange so (bench/README.md). What the operators
    // run makes its own timer and clears it when the work ends.
    files: ['apps/**/src/**/*.ts', 'packages/runtime/src/**/*.ts'],
    ignores: ['**/*.test.ts', '**/*.e2e.ts', '**/*.bench.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        {
          object: 'AbortSignal',
          property: 'timeout',
          message: 'its timer outlives the work (eslint.config.mjs): clear a timer of your own when the work ends',
        },
      ],
    },
  },
  {
    // Config files outside every project's tsconfig: linted without types.
    files: ['**/vitest.config.ts', 'tools/**/*.ts'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    // Project sources only: config files legitimately import the shared root configs.
    files: ['**/src/**/*.ts'],
    plugins: { '@nx': nx },
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        {
          enforceBuildableLibDependency: true,
          allow: [],
          depConstraints: [
            { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:lib'] },
            { sourceTag: 'type:e2e', onlyDependOnLibsWithTags: ['type:lib', 'type:app'] },
            { sourceTag: 'type:lib', onlyDependOnLibsWithTags: ['type:lib'] },
            { sourceTag: 'type:tool', onlyDependOnLibsWithTags: ['type:lib'] },
          ],
        },
      ],
    },
  },
);
