import { createTree } from '@nx/devkit/testing.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import presetGenerator, { templateRoot } from './generator.js';
import { COPIED_FILES } from './template.js';

const root = join(import.meta.dirname, '../../../../..');

describe('the preset generator', () => {
  beforeEach(() => {
    vi.spyOn(console, 'log').mockImplementation(() => undefined);
  });

  it("reads opkit's shared files from this repository when it runs from source", () => {
    expect(templateRoot()).toEqual({ dir: root, shipped: false });
  });

  it("writes a workspace with opkit's shared setup and its first operator, built against the published packages", () => {
    const tree = createTree();
    tree.write('libs/.gitkeep', '');
    presetGenerator(tree, { name: 'acme', operator: 'webapp', skipInstall: true });
    for (const f of COPIED_FILES) expect(tree.read(f, 'utf8'), f).toBe(readFileSync(join(root, f), 'utf8'));
    expect(tree.exists('charts/opkit-lib/.helmignore')).toBe(true);
    expect(tree.exists('charts/opkit-lib/templates/_helpers.tpl') || tree.children('charts/opkit-lib/templates').length > 0).toBe(true);
    expect(tree.exists('libs')).toBe(false);
    // The image recipe gets the operator's workspaces right after the root manifests.
    const dockerfile = tree.read('apps/Dockerfile', 'utf8')!.split('\n');
    const manifests = dockerfile.indexOf('COPY package.json package-lock.json ./');
    expect(dockerfile.slice(manifests + 1, manifests + 3)).toEqual([
      'COPY apps/webapp-operator/package.json apps/webapp-operator/',
      'COPY e2e/webapp-operator-e2e/package.json e2e/webapp-operator-e2e/',
    ]);
    expect(JSON.parse(tree.read('tsconfig.json', 'utf8')!)).toMatchObject({
      references: [{ path: './apps/webapp-operator' }, { path: './e2e/webapp-operator-e2e' }],
    });
    expect(tree.read('README.md', 'utf8')).toContain('| webapp |');
    // Outside opkit's repository the operator depends on this release, not on packages' source.
    const app = JSON.parse(tree.read('apps/webapp-operator/package.json', 'utf8')!) as { name: string; dependencies: Record<string, string> };
    // Its projects are named in the workspace's scope, as nx names them.
    expect(app.name).toBe('@acme/webapp-operator');
    const version = (JSON.parse(readFileSync(join(root, 'packages/nx-plugin/package.json'), 'utf8')) as { version: string }).version;
    expect(app.dependencies['@opkit/runtime']).toBe(`^${version}`);
    expect(tree.read('apps/webapp-operator/tsconfig.app.json', 'utf8')).not.toContain('packages/');
    expect(tree.read('e2e/webapp-operator-e2e/tsconfig.json', 'utf8')).not.toContain('packages/');
  });
});
