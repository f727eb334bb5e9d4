import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { workspaceRoot } from '../e2e/workspace.js';

// tools/build/notices.mjs writes the third-party notices the images ship (apps/Dockerfile copies
// them to /app); the kind e2e suites read them back out of the built images.
interface Metafile {
  inputs: Record<string, unknown>;
}
interface BundledPackage {
  name: string;
  version: string;
  license: string;
  dir: string;
  files: string[];
  readme?: { file: string; text: string };
}
interface NoticesModule {
  packageRootOf(input: string): string | undefined;
  licensePermitted(expression: unknown): boolean;
  readmeLicenseSection(markdown: string): string | undefined;
  bundledPackages(metafile: Metafile, cwd?: string): BundledPackage[];
  thirdPartyNotices(metafile: Metafile, options?: { cwd?: string; bundleName?: string }): string;
}
type Bundle = (entry: string, outfile: string, options?: { notices?: boolean }) => Promise<{ metafile: Metafile }>;

const root = workspaceRoot(import.meta.dirname);
const notices = (await import(join(root, 'tools/build/notices.mjs'))) as NoticesModule;
const { bundle } = (await import(join(root, 'tools/build/bundle.mjs'))) as { bundle: Bundle };
const scratch = mkdtempSync(join(tmpdir(), 'opkit-notices-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('packageRootOf: the npm package a bundled file came from', () => {
  it.each([
    ['node_modules/pino/lib/tools.js', 'node_modules/pino'],
    ['../../node_modules/@peculiar/x509/build/x509.cjs.js', '../../node_modules/@peculiar/x509'],
    ['node_modules/acme-client/node_modules/axios/index.js', 'node_modules/acme-client/node_modules/axios'],
    ['packages/runtime/src/index.ts', undefined],
    ['node_modules/', undefined],
  ])('%s → %s', (input, want) => {
    expect(notices.packageRootOf(input)).toBe(want);
  });
});

describe('licensePermitted: an SPDX expression a notice satisfies', () => {
  it.each([
    ['MIT', true],
    ['Apache-2.0', true],
    ['(MIT OR GPL-3.0-only)', true],
    ['MIT AND BSD-3-Clause', true],
    ['MIT AND GPL-3.0-only', false],
    ['GPL-3.0-only', false],
    ['SSPL-1.0', false],
    ['SEE LICENSE IN LICENSE.md', false],
    ['', false],
    [undefined, false],
  ])('%s → %s', (expression, want) => {
    expect(notices.licensePermitted(expression)).toBe(want);
  });
});

describe('readmeLicenseSection: where a package keeps its licence in the README', () => {
  it.each([
    ['an ATX heading, to the next heading', '# x\n\nuse it\n\n## License\n\nMIT © Ann\n\n## Thanks\n\nBob\n', 'MIT © Ann'],
    [
      'a setext heading',
      'x\n===\n\nLicense\n-------\n\n(The MIT License)\n\nCopyright (c) 2013 N\n\nMore\n----\n',
      '(The MIT License)\n\nCopyright (c) 2013 N',
    ],
    ['the British spelling, to the end', '## Licence\n\nISC\n', 'ISC'],
    ['no such section', '# x\n\nLicensed as MIT.\n', undefined],
    ['an empty section', '## License\n## Next\n', undefined],
  ])('%s', (_name, markdown, want) => {
    expect(notices.readmeLicenseSection(markdown)).toBe(want);
  });
});

describe("each image's third-party notices", () => {
  // A package each bundle must hold, so a metafile read wrong (no packages found) fails here.
  it.each([
    ['memcached-operator', 'pino'],
    ['cdn-operator', 'pino'],
    ['cert-operator', 'acme-client'],
    ['acme-solver', undefined],
  ])('%s: every bundled npm package with its version, its licence and the text of its licence', async (app, expected) => {
    const out = join(scratch, app, 'main.js');
    const { metafile } = await bundle(join(root, 'apps', app, 'src/main.ts'), out, { notices: true });
    const text = readFileSync(`${out}.NOTICES.txt`, 'utf8');
    const packages = notices.bundledPackages(metafile);
    if (expected) expect(packages.map((p) => p.name)).toContain(expected);
    else expect(text).toContain('bundles no npm packages');
    for (const p of packages) {
      expect(text).toContain(`${p.name}@${p.version}  (${p.license})`);
      for (const f of p.files) expect(text).toContain(readFileSync(join(p.dir, f), 'utf8').trimEnd());
      if (p.readme) expect(text).toContain(p.readme.text);
    }
    // Every package's notice travels: a licence file, or its README's licence section.
    expect(packages.filter((p) => !p.files.length && !p.readme).map((p) => `${p.name}@${p.version}`)).toEqual([]);
  });

  function fakePackage(dir: string, pkg: Record<string, unknown>, files: Record<string, string> = {}) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'package.json'), JSON.stringify(pkg));
    writeFileSync(join(dir, 'index.js'), 'module.exports = 1;\n');
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  }

  it('refuses a package under a licence not permitted, naming it and its licence', () => {
    const cwd = join(scratch, 'refused');
    fakePackage(join(cwd, 'node_modules/copyleft'), { name: 'copyleft', version: '1.0.0', license: 'GPL-3.0-only' }, { COPYING: 'GPL' });
    fakePackage(join(cwd, 'node_modules/@x/undeclared'), { name: '@x/undeclared', version: '2.0.0' });
    fakePackage(join(cwd, 'node_modules/fine'), { name: 'fine', version: '1.0.0', license: 'MIT' }, { LICENSE: 'MIT text' });
    const metafile = { inputs: Object.fromEntries(['copyleft', '@x/undeclared', 'fine'].map((n) => [`node_modules/${n}/index.js`, {}])) };
    expect(() => notices.thirdPartyNotices(metafile, { cwd })).toThrow(/@x\/undeclared@2\.0\.0 \(none declared\), copyleft@1\.0\.0 \(GPL-3\.0-only\)/);
  });

  it('says so where a package ships no licence text at all, rather than leave it out', () => {
    const cwd = join(scratch, 'bare');
    fakePackage(join(cwd, 'node_modules/bare'), { name: 'bare', version: '0.1.0', license: 'MIT' }, { 'README.md': '# bare\n' });
    const text = notices.thirdPartyNotices({ inputs: { 'node_modules/bare/index.js': {} } }, { cwd, bundleName: 'x.js' });
    expect(text).toContain('bare@0.1.0  (MIT)');
    expect(text).toContain('ships no licence file and its README no licence section');
  });
});

describe('the licence', () => {
  const license = readFileSync(join(root, 'LICENSE'), 'utf8');

  it("is the Apache License 2.0's text, byte for byte, as every package.json declares", () => {
    // The SHA-256 of apache.org's LICENSE-2.0.txt.
    expect(createHash('sha256').update(license).digest('hex')).toBe('c71d239df91726fc519c6eb72d318ec65820627232b2f796219e87dcf35d0ab4');
    expect((JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { license: string }).license).toBe('Apache-2.0');
  });

  it.each(['runtime', 'testing', 'nx-plugin'])('packages/%s carries it, and npm packs it with the README', (name) => {
    const dir = join(root, 'packages', name);
    expect(readFileSync(join(dir, 'LICENSE'), 'utf8')).toBe(license);
    expect((JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { license: string }).license).toBe('Apache-2.0');
    const [packed] = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: dir, encoding: 'utf8' })) as {
      files: { path: string }[];
    }[];
    expect(packed?.files.map((f) => f.path)).toEqual(expect.arrayContaining(['LICENSE', 'README.md']));
  });
});
