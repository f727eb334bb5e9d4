// The third-party notices of a bundle: every npm package esbuild put into it, with its version, its
// declared licence and the full text of the licence files it ships. A bundle is a redistribution of
// each of them, and MIT, ISC, BSD and Apache-2.0 all ask for the notice to travel with the code;
// esbuild's legal comments (main.js.LEGAL.txt) keep only the `/*!` comments some authors write, so
// most packages' notices would be lost without this.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * Licences a bundle may carry: permissive ones, whose terms a notice satisfies. A package under any
 * other (GPL, LGPL, SSPL, none at all) stops the build until somebody has read its terms.
 */
export const PERMITTED_LICENSES = new Set(['MIT', 'ISC', 'Apache-2.0', 'BSD-2-Clause', 'BSD-3-Clause', '0BSD', 'BlueOak-1.0.0', 'CC0-1.0', 'Unlicense']);

const LICENSE_FILE = /^(licen[cs]e|copying|notice)([.-].*)?$/i;

/**
 * The package each bundled file came from, by its last `node_modules/` segment (so a nested copy,
 * node_modules/a/node_modules/b, is b's own), as the directory holding its package.json.
 */
export function packageRootOf(input) {
  const at = input.lastIndexOf('node_modules/');
  if (at < 0) return undefined;
  const rest = input.slice(at + 'node_modules/'.length).split('/');
  const name = rest[0]?.startsWith('@') ? rest.slice(0, 2).join('/') : rest[0];
  return name ? `${input.slice(0, at)}node_modules/${name}` : undefined;
}

/**
 * Whether an SPDX expression is satisfied by permitted licences: `A OR B` needs one of them,
 * `A AND B` both (parentheses are read as grouping, without precedence subtleties: npm's
 * expressions in practice are a single id or one flat OR/AND list).
 */
export function licensePermitted(expression) {
  if (typeof expression !== 'string' || !expression.trim()) return false;
  const ids = expression.replace(/[()]/g, ' ').trim().split(/\s+/);
  const terms = ids.filter((t) => t !== 'OR' && t !== 'AND');
  if (ids.includes('OR') && !ids.includes('AND')) return terms.some((t) => PERMITTED_LICENSES.has(t));
  return terms.every((t) => PERMITTED_LICENSES.has(t));
}

const heading = (lines, i) => /^#{1,6}\s/.test(lines[i] ?? '') || (/\S/.test(lines[i] ?? '') && /^(-{3,}|={3,})\s*$/.test(lines[i + 1] ?? ''));

/**
 * A README's licence section (ATX `## License` or setext `License\n-------`), up to the next heading:
 * where some authors keep the MIT text and copyright line instead of in a LICENSE file.
 */
export function readmeLicenseSection(markdown) {
  const lines = markdown.split(/\r?\n/);
  const start = lines.findIndex((l, i) => heading(lines, i) && /^(#{1,6}\s*)?licen[cs]e\b/i.test(l.trim()));
  if (start < 0) return undefined;
  let end = start + (lines[start]?.startsWith('#') ? 1 : 2);
  const body = [];
  for (; end < lines.length && !heading(lines, end); end++) body.push(lines[end]);
  const text = body.join('\n').trim();
  return text || undefined;
}

/** The packages a bundle holds, from esbuild's metafile, each once, sorted by name. */
export function bundledPackages(metafile, cwd = process.cwd()) {
  const roots = new Set();
  for (const input of Object.keys(metafile.inputs)) {
    const root = packageRootOf(input.replace(/\\/g, '/'));
    if (root) roots.add(resolve(cwd, root));
  }
  return [...roots]
    .map((dir) => {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
      const license = typeof pkg.license === 'string' ? pkg.license : (pkg.license?.type ?? pkg.licenses?.map((l) => l.type).join(' OR '));
      const entries = readdirSync(dir);
      const files = entries.filter((f) => LICENSE_FILE.test(f) && statSync(join(dir, f)).isFile()).sort();
      const readme = files.length ? undefined : entries.find((f) => /^readme(\.md|\.markdown)?$/i.test(f));
      const readmeSection = readme ? readmeLicenseSection(readFileSync(join(dir, readme), 'utf8')) : undefined;
      return { name: pkg.name, version: pkg.version, license, dir, files, readme: readmeSection && { file: readme, text: readmeSection } };
    })
    .sort((a, b) => a.name.localeCompare(b.name) || a.version.localeCompare(b.version));
}

/**
 * The notices file's text. Throws when a bundled package's licence is not permitted, naming it:
 * the build fails rather than ship code under terms nobody has read.
 */
export function thirdPartyNotices(metafile, { cwd = process.cwd(), bundleName = 'main.js' } = {}) {
  const packages = bundledPackages(metafile, cwd);
  const refused = packages.filter((p) => !licensePermitted(p.license));
  if (refused.length) {
    throw new Error(
      `bundled packages under licences not permitted (tools/build/notices.mjs PERMITTED_LICENSES): ${refused.map((p) => `${p.name}@${p.version} (${p.license ?? 'none declared'})`).join(', ')}`,
    );
  }
  const parts = [`Third-party software in ${bundleName}, and its licences.\n`];
  if (!packages.length) parts.push(`${bundleName} bundles no npm packages.\n`);
  else {
    parts.push(
      `${bundleName} bundles the ${packages.length} npm packages below. Each is listed with the licence its package.json declares and the text of the licence and notice files it ships (or, where it ships none, its README's licence section).\n`,
      packages.map((p) => `  ${p.name}@${p.version}  ${p.license}`).join('\n') + '\n',
    );
  }
  for (const p of packages) {
    parts.push(`${'='.repeat(80)}\n${p.name}@${p.version}  (${p.license})\n${'='.repeat(80)}\n`);
    if (p.readme) parts.push(`--- ${p.readme.file}, its licence section (the package ships no licence file) ---\n${p.readme.text}\n`);
    else if (!p.files.length) parts.push(`The package ships no licence file and its README no licence section; its package.json declares ${p.license}.\n`);
    for (const f of p.files) parts.push(`--- ${f} ---\n${readFileSync(join(p.dir, f), 'utf8').trimEnd()}\n`);
  }
  return parts.join('\n');
}
