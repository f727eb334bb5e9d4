// opkit's npm packages as a release publishes them: each staged (./stage.ts) and `npm publish`ed,
// to the registry npm is configured with or the one given.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { run } from '../run.js';
import { stagePackage } from './stage.js';

/** The published packages, by their directory under packages/, in the order they depend on each other. */
export const NPM_PACKAGES = ['runtime', 'testing', 'nx-plugin'] as const;

export interface PublishedPackage {
  name: string;
  version: string;
  /** The staged copy that was published. */
  dir: string;
}

export interface PublishPackagesOptions {
  root: string;
  /** Where the staged copies go (<outDir>/<package dir>). */
  outDir: string;
  /** The registry's URL; npm's configured one if not given. */
  registry?: string;
  /** npm's provenance statement (needs a CI's OIDC identity: GitHub Actions, GitLab CI). */
  provenance: boolean;
  /** npm's environment: NPM_CONFIG_USERCONFIG names a registry's token. */
  env?: NodeJS.ProcessEnv;
}

/** Stages and publishes every package; the packages must be built (nx run-many -t build). */
export async function publishPackages(o: PublishPackagesOptions): Promise<PublishedPackage[]> {
  const manifests = NPM_PACKAGES.map((p) => JSON.parse(readFileSync(join(o.root, 'packages', p, 'package.json'), 'utf8')) as { name: string; version: string });
  const versions = Object.fromEntries(manifests.map((m) => [m.name, m.version]));
  const published: PublishedPackage[] = [];
  for (const p of NPM_PACKAGES) {
    const dir = join(o.outDir, p);
    const m = stagePackage(o.root, join(o.root, 'packages', p), dir, versions);
    await run('npm', ['publish', dir, `--provenance=${o.provenance}`, ...(o.registry ? ['--registry', o.registry] : [])], {
      cwd: o.outDir,
      env: o.env ?? process.env,
    });
    published.push({ name: m.name, version: m.version, dir });
  }
  return published;
}
