import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultAssetsDir } from '../assets/binaries.js';
import { workspaceRoot } from '../e2e/workspace.js';

// tools/build/sbom.mjs writes the bundle's SPDX document; the image ships it at /app/main.js.spdx.json,
// and syft merges it into the image's SBOM (the kind e2e suites read the signed attestation back).
interface Metafile {
  inputs: Record<string, unknown>;
}
interface SpdxPackage {
  name: string;
  SPDXID: string;
  versionInfo: string;
  licenseDeclared: string;
  externalRefs: { referenceType: string; referenceLocator: string }[];
}
interface SpdxDocument {
  spdxVersion: string;
  documentNamespace: string;
  creationInfo: { created: string };
  packages: SpdxPackage[];
  relationships: { spdxElementId: string; relationshipType: string; relatedSpdxElement: string }[];
}
interface SbomModule {
  npmPurl(name: string, version: string): string;
  bundleSpdx(metafile: Metafile, options?: { cwd?: string; bundleName?: string; created?: Date }): SpdxDocument;
}
type Bundle = (entry: string, outfile: string, options?: { notices?: boolean }) => Promise<{ metafile: Metafile }>;

const root = workspaceRoot(import.meta.dirname);
const sbom = (await import(join(root, 'tools/build/sbom.mjs'))) as SbomModule;
const { bundledPackages } = (await import(join(root, 'tools/build/notices.mjs'))) as {
  bundledPackages(m: Metafile): { name: string; version: string; license: string }[];
};
const { bundle } = (await import(join(root, 'tools/build/bundle.mjs'))) as { bundle: Bundle };
const scratch = mkdtempSync(join(tmpdir(), 'opkit-sbom-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('npmPurl', () => {
  it.each([
    ['pino', '9.1.0', 'pkg:npm/pino@9.1.0'],
    ['@kubernetes/client-node', '1.4.0', 'pkg:npm/%40kubernetes/client-node@1.4.0'],
  ])('%s@%s → %s', (name, version, purl) => {
    expect(sbom.npmPurl(name, version)).toBe(purl);
  });
});

describe("the bundle's SBOM", () => {
  const out = join(scratch, 'cert-operator', 'main.js');
  const built = bundle(join(root, 'apps/cert-operator/src/main.ts'), out, { notices: true });

  it('lists every npm package in the bundle, with its version, declared licence and package URL, each described by the document', async () => {
    const { metafile } = await built;
    const doc = JSON.parse(readFileSync(`${out}.spdx.json`, 'utf8')) as SpdxDocument;
    expect(doc.spdxVersion).toBe('SPDX-2.3');
    const expected = bundledPackages(metafile);
    expect(expected.map((p) => p.name)).toContain('acme-client');
    expect(doc.packages.map((p) => [p.name, p.versionInfo, p.licenseDeclared, p.externalRefs[0]?.referenceLocator])).toEqual(
      expected.map((p) => [p.name, p.version, p.license, sbom.npmPurl(p.name, p.version)]),
    );
    const ids = doc.packages.map((p) => p.SPDXID);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^SPDXRef-[A-Za-z0-9.-]+$/); // SPDX 2.3's idstring
    expect(doc.relationships.map((r) => r.relatedSpdxElement)).toEqual(ids);
  });

  it('is reproducible: equal bundles give equal namespaces, and the time is SOURCE_DATE_EPOCH', async () => {
    const { metafile } = await built;
    const a = sbom.bundleSpdx(metafile, { created: new Date(0) });
    const b = sbom.bundleSpdx(metafile, { created: new Date(0) });
    expect(a).toEqual(b);
    expect(a.creationInfo.created).toBe('1970-01-01T00:00:00Z');
    process.env.SOURCE_DATE_EPOCH = '1767225600';
    try {
      expect(sbom.bundleSpdx(metafile).creationInfo.created).toBe('2026-01-01T00:00:00Z');
    } finally {
      delete process.env.SOURCE_DATE_EPOCH;
    }
  });

  const syft = join(defaultAssetsDir(), 'syft');
  it.skipIf(!existsSync(syft))('syft reads it: a scan of the directory the image ships finds the bundled packages', async () => {
    await built;
    const r = spawnSync(syft, ['scan', `dir:${join(scratch, 'cert-operator')}`, '--select-catalogers', '+sbom-cataloger', '--output', 'json', '--quiet'], {
      encoding: 'utf8',
      env: { ...process.env, SYFT_CHECK_FOR_APP_UPDATE: 'false', HOME: scratch },
    });
    expect(r.status, r.stderr).toBe(0);
    const found = (JSON.parse(r.stdout) as { artifacts: { name: string; purl: string }[] }).artifacts;
    expect(found.map((a) => a.purl)).toEqual(expect.arrayContaining(['acme-client', 'pino'].map((n) => expect.stringMatching(new RegExp(`^pkg:npm/${n}@`)))));
  });
});
