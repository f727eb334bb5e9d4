#!/usr/bin/env node
// Runs the README's test command as a new user would: in a new clone of this repository's HEAD,
// with an empty opkit cache (OPKIT_CACHE_DIR pointing at a new folder), in a terminal of its own
// (a pseudo-TTY through `script`, where it exists). Run it before resolving anything that touches
// setup, tests or tooling; it prints the time of each phase and keeps the log.
//
//   node tools/test/fresh-clone.mjs [--runs N] [--cold-go] [--keep] [--mode local|kind|local,kind]
//
//   --runs N    run N times in a row, each from a new clone (the first with the empty cache, the
//               others reusing what the first built: cold, then warm)
//   --cold-go   also start from empty Go module and build caches (a machine that never built Go)
//   --keep      keep the clones and caches (they are under /tmp, named in the output)
//   --mode      OPKIT_E2E_MODE for the run (default: both modes, as the README's command)
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const { values: opts } = parseArgs({
  options: {
    runs: { type: 'string', default: '1' },
    'cold-go': { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
    mode: { type: 'string' },
  },
});
const runs = Number(opts.runs);
if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs: a whole number of at least 1, not "${opts.runs}"`);

// The commit is read once: every run tests it, even if HEAD moves while the sequence runs (it takes hours).
const commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
const head = commit.slice(0, 7);
const dirty = execFileSync('git', ['status', '--porcelain'], { cwd: root, encoding: 'utf8' }).trim();
if (dirty) console.log(`note: uncommitted changes are not in the clone; it tests ${head} as committed`);
const base = mkdtempSync(join(tmpdir(), 'opkit-fresh-'));
const cache = join(base, 'cache');
mkdirSync(cache);
const env = { ...process.env, OPKIT_CACHE_DIR: cache };
if (opts.mode) env.OPKIT_E2E_MODE = opts.mode;
if (opts['cold-go']) Object.assign(env, { GOMODCACHE: join(base, 'gomodcache'), GOCACHE: join(base, 'gocache') });
const hasScript = spawnSync('script', ['--version'], { stdio: 'ignore' }).status === 0;

const results = [];
for (let i = 1; i <= runs; i++) {
  const clone = join(base, `clone-${i}`);
  execFileSync('git', ['clone', '--quiet', root, clone]);
  execFileSync('git', ['checkout', '--quiet', '--detach', commit], { cwd: clone });
  const log = join(base, `run-${i}.log`);
  const command = 'npm ci --no-audit --no-fund && npm test';
  console.log(`==> run ${i}/${runs}: ${command} in ${clone} (OPKIT_CACHE_DIR=${cache}${i > 1 ? ', as the first run left it' : ', empty'}), log ${log}`);
  const started = Date.now();
  // `script` gives the run a terminal of its own, as a user's has: progress lines and colours as they would see them.
  const [cmd, args] = hasScript ? ['script', ['-q', '-e', '-c', command, log]] : ['bash', ['-c', `${command} 2>&1 | tee ${log}`]];
  const code = await new Promise((res) => spawn(cmd, args, { cwd: clone, env, stdio: 'inherit' }).on('exit', (c) => res(c ?? 1)));
  const seconds = Math.round((Date.now() - started) / 1000);
  // eslint-disable-next-line no-control-regex -- the terminal escapes are what it strips
  const text = readFileSync(log, 'utf8').replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
  // A phase's line may follow a spinner's last frame (npx draws one in a terminal): not anchored at the line's start.
  const phases = [...text.matchAll(/==> ([^\n]+?): (?:done in|failed \([^)]*\) after) (\d+)s$/gm)].map((m) => `${m[1]} ${m[2]} s`);
  results.push({ run: i, code, seconds, phases });
  console.log(`==> run ${i}: ${code === 0 ? 'passed' : `FAILED (exit ${code})`} in ${Math.floor(seconds / 60)} min ${seconds % 60} s`);
  for (const p of phases) console.log(`      ${p}`);
  if (!opts.keep) rmSync(clone, { recursive: true, force: true });
  if (code !== 0) break;
}
writeFileSync(join(base, 'summary.json'), `${JSON.stringify({ head, cache, results }, null, 2)}\n`);
if (!opts.keep && results.every((r) => r.code === 0)) rmSync(base, { recursive: true, force: true });
else console.log(`kept: ${base}`);
console.log(
  `${head}: ${results.map((r) => `run ${r.run} ${r.code === 0 ? 'passed' : 'failed'} ${Math.floor(r.seconds / 60)}m${String(r.seconds % 60).padStart(2, '0')}s`).join(', ')}`,
);
process.exit(results.every((r) => r.code === 0) && results.length === runs ? 0 : 1);
