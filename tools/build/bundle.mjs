#!/usr/bin/env node
// Bundles an operator (or any Node entry point) into one CommonJS file, as the images ship it.
//   node tools/build/bundle.mjs <entry.ts> <outfile.js> [--no-shims]
// Beside the bundle: its source map, esbuild's legal comments (<outfile>.LEGAL.txt) and, from the
// command line (the images' build), the third-party notices (<outfile>.NOTICES.txt: notices.mjs)
// and the bundle's SBOM (<outfile>.spdx.json: sbom.mjs).
// CommonJS: dependencies written for require() (acme-client, axios, pino) bundle as they are;
// workspace packages are read from source through the `@opkit/source` export condition.
import { build } from 'esbuild';
import { writeFileSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { thirdPartyNotices } from './notices.mjs';
import { bundleSpdx } from './sbom.mjs';

const here = fileURLToPath(new URL('.', import.meta.url));

/** Build-time replacements for code opkit never calls (see each shim for why). */
export const shims = {
  'node-forge': resolve(here, 'shims/node-forge.cjs'),
  'mime-db': resolve(here, 'shims/mime-db.cjs'),
};

export async function bundle(entry, outfile, { useShims = true, minify = true, notices = false, external = [] } = {}) {
  const result = await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    conditions: ['@opkit/source'],
    mainFields: ['module', 'main'],
    minify,
    keepNames: true, // readable stack traces and class names in logs
    sourcemap: true,
    legalComments: 'linked',
    alias: useShims ? shims : {},
    external,
    logLevel: 'warning',
    metafile: true,
  });
  // The workspace packages are ESM ("type": "module"); this marks the bundle next to them as the
  // CommonJS it is, so `node dist/main.js` works in place (the image copies only main.js).
  if (outfile.endsWith('.js')) writeFileSync(resolve(dirname(outfile), 'package.json'), '{ "type": "commonjs" }\n');
  if (notices) {
    writeFileSync(`${outfile}.NOTICES.txt`, thirdPartyNotices(result.metafile, { bundleName: basename(outfile) }));
    writeFileSync(`${outfile}.spdx.json`, `${JSON.stringify(bundleSpdx(result.metafile, { bundleName: basename(outfile) }), null, 2)}\n`);
  }
  return result;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  const [entry, outfile] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
  if (!entry || !outfile) {
    console.error('usage: bundle.mjs <entry.ts> <outfile.js> [--no-shims]');
    process.exit(2);
  }
  await bundle(entry, outfile, { useShims: !process.argv.includes('--no-shims'), notices: true });
}
