#!/usr/bin/env node
// Runs a TypeScript entry point of the workspace (generators, the demo) or a package's command
// (`@opkit/testing/cli/containers`): bundled on the fly with esbuild, workspace packages read from
// source. Arguments after the entry are passed through.
//   node tools/build/run-ts.mjs <file.ts | package/specifier> [args…]
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundle } from './bundle.mjs';

const [file, ...args] = process.argv.slice(2);
if (!file) {
  console.error('usage: run-ts.mjs <file.ts> [args…]');
  process.exit(2);
}
const root = resolve(fileURLToPath(new URL('../..', import.meta.url)));
// One folder per run: nx runs several commands of one entry at once (each project's chart-docs).
// The bundle keeps its entry's name (a CLI may check how it was started).
const outDir = join(root, 'dist/run-ts', String(process.pid));
mkdirSync(outDir, { recursive: true });
const out = join(outDir, `${basename(file, '.ts').replace(/[^\w.-]/g, '_')}.cjs`);
// A path when it is one, else a package specifier (esbuild resolves it as an import).
const entry = existsSync(file) ? resolve(file) : file;
// No shims: tools (the demo, generators) may use what the operator images leave out. esbuild's own
// API runs its binary from beside its package, so a tool that builds (the nx plugin's build) loads it from there.
await bundle(entry, out, { minify: false, useShims: false, external: ['esbuild'] });
const clean = () => rmSync(outDir, { recursive: true, force: true });
const child = spawn(process.execPath, ['--enable-source-maps', out, ...args], { stdio: 'inherit' });
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('exit', (code, signal) => {
  clean();
  process.exit(code ?? (signal ? 130 : 1));
});
