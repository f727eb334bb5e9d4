import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const pkgDir = join(import.meta.dirname, '..');
const npm = (args: string[], cwd: string) =>
  execFileSync('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, npm_config_update_notifier: 'false' },
  });

describe('the @opkit/runtime package, as docs/runtime.md says to install it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'opkit-pack-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('packs dist only, with types for every entry point', () => {
    const [pack] = JSON.parse(npm(['pack', '--json', '--pack-destination', dir], pkgDir)) as { filename: string; files: { path: string }[] }[];
    const files = pack!.files.map((f) => f.path);
    expect(files).toEqual(expect.arrayContaining(['package.json', 'dist/index.js', 'dist/index.d.ts', 'dist/testing/index.js', 'dist/testing/index.d.ts']));
    expect(files.filter((f) => !f.startsWith('dist/') && f !== 'package.json' && !/^(README|LICENSE)/.test(f))).toEqual([]);
    expect(files.filter((f) => /\.test\.|tsbuildinfo/.test(f))).toEqual([]);
    const manifest = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as {
      publishConfig?: { provenance?: boolean };
      repository?: { url?: string };
    };
    expect(manifest.publishConfig?.provenance).toBe(true);
    expect(manifest.repository?.url).toMatch(/github\.com/);
  });

  it('installs from the tarball into an empty project and imports there', () => {
    const tarball = join(dir, 'opkit-runtime-0.1.0.tgz');
    const app = join(dir, 'app');
    execFileSync('mkdir', ['-p', app]);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'my-operator', version: '1.0.0', type: 'module', private: true }));
    npm(['install', '--prefer-offline', tarball], app);
    const out = execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "const r = await import('@opkit/runtime'); console.log(typeof r.controllerFor, typeof r.Manager, typeof (await import('@opkit/runtime/testing')).testManager)",
      ],
      { cwd: app, encoding: 'utf8' },
    );
    expect(out.trim()).toBe('function function function');
  }, 180_000);
});
