import base from '../../eslint.config.mjs';

export default [
  ...base,
  {
    // The loader nx requires is CommonJS (see src/load.cjs).
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', module: 'writable', __dirname: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
];
