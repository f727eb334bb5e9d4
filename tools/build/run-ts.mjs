#!/usr/bin/env node
// Runs a TypeScript entry point of the workspace (generators, the demo): bundled on the fly with
// esbuild, workspace packages read from source. Arguments after the file are passed through.
//   node tools/build/run-ts.mjs <file.ts> [args…]
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundle } from './bundle.mjs';

const [file, ...args] = process.argv.slice(2);
if (!file) {
  console.error('usage: run-ts.mjs <file.ts> [args…]');
  process.exit(2);
}
const root = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const outDir = join(root, 'dist/run-ts');
mkdirSync(outDir, { recursive: true });
const out = join(outDir, `${basename(file, '.ts')}.cjs`);
// No shims: tools (the demo, generators) may use what the operator images leave out.
await bundle(resolve(file), out, { minify: false, useShims: false });
const child = spawn(process.execPath, ['--enable-source-maps', out, ...args], { stdio: 'inherit' });
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 130 : 1)));
