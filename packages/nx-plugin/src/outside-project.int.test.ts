import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { e2eModes, publishPackages } from '@opkit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNpmRegistry, type NpmRegistry } from './testing/npm-registry.js';
import { shell, vitestResults } from './testing/shell.js';

const root = join(import.meta.dirname, '../../..');
const version = (JSON.parse(readFileSync(join(root, 'packages/nx-plugin/package.json'), 'utf8')) as { version: string }).version;
const nxVersion = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> }).devDependencies.nx!;

// An operator author's first day, outside this repository: opkit's three packages are published to
// a real npm registry (verdaccio) as a release publishes them; in an empty directory under the
// system's temporary one, `create-nx-workspace --preset=@opkit/nx-plugin` makes a project from that
// registry alone (npm is given no other), a kind is added with the api generator, and the project's
// own lint, typecheck, unit, integration and local e2e tests pass; where the kind mode runs, its
// image and chart install in kind too.
const kind = e2eModes().find((m) => m.name === 'kind');

describe('a new operator project outside this repository, from a real npm registry', () => {
  const work = mkdtempSync(join(tmpdir(), 'opkit-outside-'));
  let registry: NpmRegistry | undefined;

  /** Runs a command line as the author would, with npm pointed at the test registry alone. */
  const sh = (cwd: string, command: string, env: Record<string, string> = {}) =>
    shell(cwd, command, { env: { NPM_CONFIG_USERCONFIG: registry!.userconfig, ...env }, logDir: work });

  beforeAll(async () => {
    registry = await startNpmRegistry(join(work, 'registry'));
    // As the release command's publish-npm does (the packages' dist built by the test target's dependencies).
    const published = await publishPackages({
      root,
      outDir: join(work, 'staged'),
      provenance: false,
      env: { ...process.env, NPM_CONFIG_USERCONFIG: registry.userconfig },
    });
    expect(published.map((p) => `${p.name}@${p.version}`)).toEqual([`@opkit/runtime@${version}`, `@opkit/testing@${version}`, `@opkit/nx-plugin@${version}`]);
  });

  afterAll(async () => {
    await registry?.stop();
    if (!process.env.OPKIT_KEEP_OUTSIDE_PROJECT) rmSync(work, { recursive: true, force: true });
  });

  it('create-nx-workspace --preset=@opkit/nx-plugin makes a project whose operator passes lint, typecheck, unit, integration and e2e tests (local, and kind where it runs)', async () => {
    await sh(
      work,
      `npx --yes create-nx-workspace@${nxVersion} acme --preset=@opkit/nx-plugin@${version} --operator=webapp --nxCloud=skip --interactive=false --packageManager=npm --skipGit`,
    );
    const ws = join(work, 'acme');
    // What was installed came from the registry under test: opkit's packages as published there.
    const installed = JSON.parse(readFileSync(join(ws, 'node_modules/@opkit/runtime/package.json'), 'utf8')) as { version: string; exports: object };
    expect(installed.version).toBe(version);
    expect(JSON.stringify(installed.exports)).not.toContain('@opkit/source');
    expect(existsSync(join(ws, 'packages'))).toBe(false);
    await sh(ws, 'npx nx g @opkit/nx-plugin:api webapp --group apps.acme.example --api-version v1alpha1 --kind WebApp');
    // The project's README command: the toolset from the copy @opkit/testing ships, then every target.
    await sh(ws, 'npm test', { OPKIT_E2E_MODE: 'local' });
    const report = (dir: string) => vitestResults(ws, dir);
    const app = report('apps/webapp-operator');
    expect(Object.entries(app).filter(([, s]) => s !== 'passed')).toEqual([]);
    expect(app['the WebApp controller makes a new WebApp Ready for the generation it saw']).toBe('passed');
    expect(report('e2e/webapp-operator-e2e')['webapp operator with helm, local mode runs every example: each one is Ready for its generation']).toBe('passed');
    if (kind?.skip) return;
    // In kind: the project's image built (its npm ci reads the same registry), pushed to the local
    // OCI registry with its chart, both signed and verified, installed by digest, as in opkit's own suites.
    await sh(ws, 'npx nx e2e @acme/webapp-operator-e2e --outputStyle=stream', { OPKIT_E2E_MODE: 'kind' });
    const e2e = report('e2e/webapp-operator-e2e');
    expect(e2e['webapp operator with helm, kind mode installs with helm: the operator ready, holding its leader Lease']).toBe('passed');
    expect(e2e['webapp operator with helm, kind mode runs every example: each one is Ready for its generation']).toBe('passed');
  });
});
