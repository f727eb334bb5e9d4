import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { adapt, shippedPath, unshippedPath, workspacePackageJson } from './template.js';

describe('the preset template', () => {
  it.each([
    ['.gitignore', '__dot__gitignore'],
    ['charts/opkit-lib/.helmignore', 'charts/opkit-lib/__dot__helmignore'],
    ['tools/build/bundle.mjs', 'tools/build/bundle.mjs'],
    ['a.b/.c.d', 'a.b/__dot__c.d'],
  ])('ships %s as %s (npm leaves dotfiles out of packages)', (path, shipped) => {
    expect(shippedPath(path)).toBe(shipped);
    expect(unshippedPath(shipped)).toBe(path);
  });

  it('names no shipped file with a leading dot, and reads every name back', () => {
    const segment = fc.stringMatching(/^\.?[a-z0-9_-][a-z0-9._-]{0,8}$/);
    fc.assert(
      fc.property(fc.array(segment, { minLength: 1, maxLength: 4 }), (segments) => {
        const path = segments.join('/');
        const shipped = shippedPath(path);
        expect(shipped.split('/').some((s) => s.startsWith('.'))).toBe(false);
        expect(unshippedPath(shipped)).toBe(path);
      }),
    );
  });

  it("takes opkit's workspaces out of the image recipe and nothing else", () => {
    const dockerfile = [
      'FROM node AS deps',
      'COPY package.json package-lock.json ./',
      'COPY packages/runtime/package.json packages/runtime/',
      'COPY apps/memcached-operator/package.json apps/memcached-operator/',
      'RUN npm ci',
      'COPY . .',
    ].join('\n');
    expect(adapt('apps/Dockerfile', dockerfile, { name: 'acme', opkitVersion: '1.2.3' }).split('\n')).toEqual([
      'FROM node AS deps',
      'COPY package.json package-lock.json ./',
      'RUN npm ci',
      'COPY . .',
    ]);
  });

  it("drops opkit's release setup and its own paths from nx.json", () => {
    const nx = {
      plugins: [{ plugin: '@nx/js/typescript' }],
      release: { projects: ['@opkit/runtime'] },
      namedInputs: { sharedGlobals: ['{workspaceRoot}/tsconfig.base.json', '{workspaceRoot}/packages/testing/src/assets/versions.json'] },
    };
    expect(JSON.parse(adapt('nx.json', JSON.stringify(nx), { name: 'acme', opkitVersion: '1.2.3' }))).toEqual({
      plugins: [{ plugin: '@nx/js/typescript' }],
      namedInputs: { sharedGlobals: ['{workspaceRoot}/tsconfig.base.json'] },
    });
  });

  it("gives the workspace opkit's tool versions and this release of opkit's packages", () => {
    const pkg = JSON.parse(
      workspacePackageJson('acme', '1.2.3', { devDependencies: { nx: '22.7.12', vitest: '~4.1.12', '@opkit/testing': '*' }, engines: { node: '>=20.19.0' } }),
    ) as { name: string; private: boolean; devDependencies: Record<string, string>; scripts: Record<string, string> };
    expect(pkg.name).toBe('acme');
    expect(pkg.private).toBe(true);
    expect(pkg.devDependencies).toEqual({
      '@opkit/nx-plugin': '^1.2.3',
      '@opkit/runtime': '^1.2.3',
      '@opkit/testing': '^1.2.3',
      nx: '22.7.12',
      vitest: '~4.1.12',
    });
    expect(pkg.scripts.test).toContain('setup:binaries');
  });
});
