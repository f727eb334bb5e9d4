// The bundle's own SBOM: the npm packages esbuild put into main.js, as an SPDX 2.3 document
// written beside it (<outfile>.spdx.json) and shipped in the image. A bundle hides its packages
// from scanners (no node_modules, no package.json), so the image SBOM would list Node alone; syft
// reads SBOM files it finds in an image (its sbom cataloger) and merges these packages in.
import { createHash } from 'node:crypto';
import { bundledPackages } from './notices.mjs';

/** The package URL of an npm package (purl-spec: the scope's @ percent-encoded). */
export function npmPurl(name, version) {
  return `pkg:npm/${name.replace(/^@/, '%40')}@${version}`;
}

const spdxId = (name, version) => `SPDXRef-Package-npm-${`${name}-${version}`.replace(/[^A-Za-z0-9.-]/g, '-')}`;

/**
 * The SPDX document of a bundle. `created` defaults to SOURCE_DATE_EPOCH (reproducible builds)
 * or now; the namespace is derived from the content, so equal bundles get equal documents.
 */
export function bundleSpdx(metafile, { cwd = process.cwd(), bundleName = 'main.js', created } = {}) {
  const packages = bundledPackages(metafile, cwd);
  const when = created ?? (process.env.SOURCE_DATE_EPOCH ? new Date(Number(process.env.SOURCE_DATE_EPOCH) * 1000) : new Date());
  const content = createHash('sha256')
    .update(packages.map((p) => `${p.name}@${p.version}`).join('\n'))
    .digest('hex')
    .slice(0, 16);
  return {
    spdxVersion: 'SPDX-2.3',
    dataLicense: 'CC0-1.0',
    SPDXID: 'SPDXRef-DOCUMENT',
    name: bundleName,
    documentNamespace: `https://github.com/opkit/opkit/spdx/${bundleName}-${content}`,
    creationInfo: { created: when.toISOString().replace(/\.\d{3}Z$/, 'Z'), creators: ['Tool: opkit-bundle (tools/build/sbom.mjs)'] },
    packages: packages.map((p) => ({
      name: p.name,
      SPDXID: spdxId(p.name, p.version),
      versionInfo: p.version,
      downloadLocation: 'NOASSERTION',
      filesAnalyzed: false,
      licenseConcluded: 'NOASSERTION',
      licenseDeclared: p.license ?? 'NOASSERTION',
      copyrightText: 'NOASSERTION',
      externalRefs: [{ referenceCategory: 'PACKAGE-MANAGER', referenceType: 'purl', referenceLocator: npmPurl(p.name, p.version) }],
    })),
    relationships: packages.map((p) => ({ spdxElementId: 'SPDXRef-DOCUMENT', relationshipType: 'DESCRIBES', relatedSpdxElement: spdxId(p.name, p.version) })),
  };
}
