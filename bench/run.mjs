#!/usr/bin/env node
// Runs the benchmarks, each in a fresh Node process, and prints their figures as tables.
// Benchmarks measure and report; they never pass or fail on a number.
//   node bench/run.mjs                 all of them
//   node bench/run.mjs runtime/queue   those whose path contains the filter
import { build } from 'esbuild';
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, '../dist/bench');
mkdirSync(out, { recursive: true });
const filter = process.argv[2] ?? '';

const files = [];
const walk = (d) => {
  for (const f of readdirSync(d)) {
    const p = join(d, f);
    if (statSync(p).isDirectory()) walk(p);
    else if (f.endsWith('.bench.ts') && relative(here, p).includes(filter)) files.push(p);
  }
};
walk(here);

for (const file of files.sort()) {
  const name = relative(here, file).replace(/\.bench\.ts$/, '');
  const outfile = join(out, `${name.replace(/\//g, '-')}.cjs`);
  // Bundled like the operator images are (one CommonJS file), so memory figures match production.
  await build({
    entryPoints: [file],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    outfile,
    conditions: ['@opkit/source'],
    logLevel: 'error',
    mainFields: ['module', 'main'],
    external: ['esbuild'],
  });
  console.log(`\n## ${name}`);
  const code = await new Promise((resolve) => {
    const child = spawn(process.execPath, ['--expose-gc', outfile], { stdio: 'inherit' });
    child.on('exit', resolve);
  });
  if (code !== 0) console.log(`(exited with ${code})`);
}
