// A workspace package as it is published: what `files` names, with a package.json for users.
// In this repository the packages resolve to their TypeScript source through the `@opkit/source`
// export condition and depend on each other as "*"; published, they are their compiled dist and
// depend on this exact release. Staging makes that copy (nx's release-publish does the same from
// a package root): the condition taken out of `exports`, devDependencies and nx's settings
// dropped, "*" ranges on opkit's packages pinned, an nx plugin's generators pointed at its compiled
// collection, and what a package ships beyond its dist added.
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface PackageManifest {
  name: string;
  version: string;
  files?: string[];
  exports?: unknown;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  nx?: unknown;
  private?: boolean;
  [key: string]: unknown;
}

/** The export map without the source condition: what Node, bundlers and TypeScript read outside this repository. */
export function publishedExports(exports: unknown): unknown {
  if (typeof exports !== 'object' || exports === null) return exports;
  return Object.fromEntries(
    Object.entries(exports as Record<string, unknown>)
      .filter(([k]) => k !== '@opkit/source')
      .map(([k, v]) => [k, publishedExports(v)]),
  );
}

/** package.json as published (pure: see the file's comment). */
export function publishedManifest(pkg: PackageManifest, versions: Record<string, string>): PackageManifest {
  const { devDependencies: _d, nx: _n, private: _p, ...rest } = pkg;
  const pin = (deps?: Record<string, string>) =>
    deps && Object.fromEntries(Object.entries(deps).map(([name, range]) => [name, range === '*' && versions[name] ? `^${versions[name]}` : range]));
  const out: PackageManifest = { ...rest, exports: publishedExports(pkg.exports) };
  if (pkg.dependencies) out.dependencies = pin(pkg.dependencies);
  if (pkg.peerDependencies) out.peerDependencies = pin(pkg.peerDependencies);
  return out;
}

/** What opkit's repository ships inside a package beyond its `files`: repository paths → paths in the package. */
export const SHIPPED_WITH: Record<string, Record<string, string>> = {
  // The Go wrappers the toolset and the local images are built from, and the images' recipes
  // (toolingDir() in e2e/workspace.ts finds them here in a project outside this repository).
  '@opkit/testing': {
    'tools/control-plane/ensure-binaries.mjs': 'dist/tooling/control-plane/ensure-binaries.mjs',
    'tools/control-plane/go': 'dist/tooling/control-plane/go',
    'tools/containers': 'dist/tooling/containers',
    'tools/olm': 'dist/tooling/olm',
  },
};

/**
 * Copies the package in `pkgDir` (built) to `outDir` as it is published. `versions`: the release's
 * version of each opkit package.
 */
export function stagePackage(root: string, pkgDir: string, outDir: string, versions: Record<string, string>): PackageManifest {
  const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as PackageManifest;
  if (!pkg.files?.length) throw new Error(`${pkgDir}/package.json has no "files": say what the package publishes`);
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  for (const f of [...pkg.files.filter((f) => !f.startsWith('!')), 'README.md', 'LICENSE']) {
    if (!existsSync(join(pkgDir, f))) throw new Error(`${pkg.name} publishes ${f}, which is not in ${pkgDir} (is it built?)`);
    cpSync(join(pkgDir, f), join(outDir, f), { recursive: true, filter: (src) => !src.endsWith('.tsbuildinfo') });
  }
  for (const [from, to] of Object.entries(SHIPPED_WITH[pkg.name] ?? {})) cpSync(join(root, from), join(outDir, to), { recursive: true });
  const manifest = publishedManifest(pkg, versions);
  // An nx plugin's build writes its collection of compiled generators (dist/generators.json).
  if (manifest.generators && existsSync(join(pkgDir, 'dist/generators.json'))) manifest.generators = './dist/generators.json';
  writeFileSync(join(outDir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}
