// What a new workspace shares, taken from opkit's own repository so the two never drift: the same
// lint, format, TypeScript and test setup, the image recipe, the library chart and the build tools.
// In this repository the generator reads them in place; the published plugin carries a copy
// (dist/workspace, written by its build: ../../build/dist.ts).

/**
 * A file's name in the published plugin's copy: npm leaves dotfiles such as .gitignore out of a
 * package, so each leading dot is spelled `__dot__` there (nx's own convention for templates).
 */
export const shippedPath = (path: string) => path.replace(/(^|\/)\./g, '$1__dot__');

/** The inverse of shippedPath. */
export const unshippedPath = (path: string) => path.replace(/(^|\/)__dot__/g, '$1.');

/** Files copied as they are. */
export const COPIED_FILES = [
  '.gitignore',
  '.prettierrc.json',
  '.prettierignore',
  '.dockerignore',
  'LICENSE',
  'eslint.config.mjs',
  'tsconfig.base.json',
  'tools/vitest/config.ts',
  'tools/vitest/hook-errors.ts',
  'tools/build/bundle.mjs',
  'tools/build/run-ts.mjs',
  'tools/build/notices.mjs',
  'tools/build/sbom.mjs',
  'tools/build/shims/node-forge.cjs',
  'tools/build/shims/mime-db.cjs',
] as const;

/** Directories copied as they are. */
export const COPIED_DIRS = ['charts/opkit-lib'] as const;

/** Files a new workspace gets edited from opkit's: see `adapt`. */
export const ADAPTED_FILES = ['apps/Dockerfile', 'nx.json', 'package.json'] as const;

/** The new workspace's package.json: opkit's tool versions, the published opkit packages, no workspaces of its own yet. */
export function workspacePackageJson(name: string, opkitVersion: string, source: { devDependencies: Record<string, string>; engines?: unknown }): string {
  const pkg = {
    name,
    version: '0.1.0',
    private: true,
    type: 'module',
    license: 'Apache-2.0',
    workspaces: ['packages/*', 'apps/*', 'e2e/*'],
    engines: source.engines,
    scripts: {
      // The toolset the tests run (etcd, kube-apiserver, helm, kwok…), built from Go modules once.
      'setup:binaries': 'node tools/build/run-ts.mjs @opkit/testing/cli/binaries',
      test: 'npm run setup:binaries && nx run-many -t lint typecheck test e2e --outputStyle=stream',
    },
    devDependencies: Object.fromEntries(
      Object.entries({
        ...source.devDependencies,
        '@opkit/nx-plugin': `^${opkitVersion}`,
        '@opkit/runtime': `^${opkitVersion}`,
        '@opkit/testing': `^${opkitVersion}`,
      }).sort(([a], [b]) => a.localeCompare(b)),
    ),
  };
  return `${JSON.stringify(pkg, null, 2)}\n`;
}

/**
 * opkit's version of an adapted file, made right for a new workspace: apps/Dockerfile without
 * opkit's workspaces (the operator generator adds each new one), nx.json without opkit's release
 * setup and without its own paths.
 */
export function adapt(path: (typeof ADAPTED_FILES)[number], text: string, ctx: { name: string; opkitVersion: string }): string {
  switch (path) {
    case 'apps/Dockerfile':
      return text
        .split('\n')
        .filter((l) => !/^COPY (\S+)\/package\.json \1\/$/.test(l))
        .join('\n');
    case 'nx.json': {
      const nx = JSON.parse(text) as { release?: unknown; namedInputs?: { sharedGlobals?: string[] } };
      delete nx.release;
      if (nx.namedInputs?.sharedGlobals) nx.namedInputs.sharedGlobals = nx.namedInputs.sharedGlobals.filter((g) => !g.includes('/packages/'));
      return `${JSON.stringify(nx, null, 2)}\n`;
    }
    case 'package.json':
      return workspacePackageJson(ctx.name, ctx.opkitVersion, JSON.parse(text) as { devDependencies: Record<string, string> });
  }
}

/** The new workspace's README: the two commands, and the table the operator generator fills. */
export const workspaceReadme = (name: string) => `# ${name}

Kubernetes operators in TypeScript on [opkit](https://github.com/opkit/opkit).

\`\`\`bash
npm ci      # in a fresh clone (create-nx-workspace installed them here)
npm test    # lint, typecheck, unit, integration and e2e tests of every project; the first run builds
            # the toolset the tests use (etcd, kube-apiserver, helm, kwok) from Go modules: needs Go
\`\`\`

More operators and kinds: \`npx nx g @opkit/nx-plugin:operator <name>\`, \`npx nx g @opkit/nx-plugin:api <name> --kind …\`,
\`npx nx g @opkit/nx-plugin:webhook <name> --kind …\`. The e2e suites run on a simulated cluster
(\`OPKIT_E2E_MODE=local\`) or in kind (\`OPKIT_E2E_MODE=kind\`, which needs Docker).

| operator | resources | what it does |
| -------- | --------- | ------------ |
`;

/** The TypeScript solution file: the operator generator adds each project's reference. */
export const workspaceTsconfig = `${JSON.stringify({ extends: './tsconfig.base.json', compileOnSave: false, files: [], references: [] }, null, 2)}\n`;
