import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { publishedExports, publishedManifest, stagePackage } from './stage.js';

describe('a package as published', () => {
  it('resolves to its compiled dist: the source condition is gone at every depth', () => {
    expect(
      publishedExports({
        './package.json': './package.json',
        '.': { '@opkit/source': './src/index.ts', types: './dist/index.d.ts', import: './dist/index.js' },
        './x': { node: { '@opkit/source': './src/x.ts', default: './dist/x.js' } },
      }),
    ).toEqual({
      './package.json': './package.json',
      '.': { types: './dist/index.d.ts', import: './dist/index.js' },
      './x': { node: { default: './dist/x.js' } },
    });
  });

  it("depends on this release of opkit's packages, and keeps every other range and field", () => {
    const manifest = publishedManifest(
      {
        name: '@opkit/runtime',
        version: '1.2.3',
        private: false,
        files: ['dist'],
        dependencies: { '@kubernetes/client-node': '1.4.0', yaml: '*' },
        peerDependencies: { '@opkit/testing': '*' },
        devDependencies: { '@opkit/testing': '*' },
        nx: { tags: [] },
        engines: { node: '>=20.19.0' },
      },
      { '@opkit/testing': '1.2.3', '@opkit/runtime': '1.2.3' },
    );
    expect(manifest).toEqual({
      name: '@opkit/runtime',
      version: '1.2.3',
      files: ['dist'],
      exports: undefined,
      dependencies: { '@kubernetes/client-node': '1.4.0', yaml: '*' },
      peerDependencies: { '@opkit/testing': '^1.2.3' },
      engines: { node: '>=20.19.0' },
    });
  });

  it('refuses a package that says nothing of what it publishes, or whose build is missing', () => {
    const dir = mkdtempSync(join(tmpdir(), 'opkit-stage-'));
    try {
      mkdirSync(join(dir, 'pkg'));
      writeFileSync(join(dir, 'pkg/package.json'), JSON.stringify({ name: '@opkit/x', version: '1.0.0' }));
      expect(() => stagePackage(dir, join(dir, 'pkg'), join(dir, 'out'), {})).toThrow(/has no "files"/);
      writeFileSync(join(dir, 'pkg/package.json'), JSON.stringify({ name: '@opkit/x', version: '1.0.0', files: ['dist'] }));
      expect(() => stagePackage(dir, join(dir, 'pkg'), join(dir, 'out'), {})).toThrow(/publishes dist, which is not in .*is it built/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
