import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { defineConfig, type ViteUserConfig } from 'vitest/config';
import { HookErrorsReporter } from './hook-errors.js';

const root = join(import.meta.dirname, '../..');

/**
 * The one vitest setup every project shares: sources of workspace packages resolved through the
 * `@opkit/source` export condition (no build needed to test), and a JSON report per project
 * (test-output/vitest/report.json, an nx output, so cached runs restore it) that `.ci/run` sums
 * into its closing `N passed, N failed` line, with the hook and unhandled errors that report drops
 * beside it (hook-errors.json).
 */
/**
 * The e2e projects' globalSetup: stops, at the end, a Docker engine opkit started for the kind mode.
 * From @opkit/testing's source in opkit's repository, from the installed package elsewhere (vitest
 * resolves a globalSetup path without export conditions).
 */
const globalSetups = [join(root, 'packages/testing/src/e2e/global-setup.ts'), join(root, 'node_modules/@opkit/testing/dist/e2e/global-setup.js')];
export const e2eGlobalSetup = globalSetups.find((f) => existsSync(f)) ?? globalSetups[0]!;

export function projectConfig(
  projectDir: string,
  overrides: { testTimeout?: number; hookTimeout?: number; include?: string[]; setupFiles?: string[]; globalSetup?: string[] } = {},
): ViteUserConfig {
  const name = relative(root, projectDir).replace(/\//g, '-');
  // Only add our condition to vite's defaults: conditions such as `import` would also reach Node for
  // external packages, and Node 20.19's require(esm) would then hand CommonJS callers ESM namespaces.
  const conditions = ['@opkit/source', 'module', 'node', 'development|production'];
  return defineConfig({
    root: projectDir,
    cacheDir: join(root, 'node_modules/.vite', name),
    resolve: { conditions },
    ssr: { resolve: { conditions, externalConditions: ['@opkit/source'] } },
    test: {
      name,
      watch: false,
      environment: 'node',
      globals: false,
      include: overrides.include ?? ['src/**/*.test.ts'],
      setupFiles: overrides.setupFiles,
      globalSetup: overrides.globalSetup,
      testTimeout: overrides.testTimeout ?? 10_000,
      hookTimeout: overrides.hookTimeout ?? 180_000,
      pool: 'forks',
      reporters: [
        'default',
        ['json', { outputFile: join(projectDir, 'test-output/vitest/report.json') }],
        new HookErrorsReporter(join(projectDir, 'test-output/vitest/hook-errors.json')),
      ],
    },
  });
}
