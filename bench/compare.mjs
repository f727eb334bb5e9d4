#!/usr/bin/env node
// Runs benchmarks of an earlier commit and of the working tree, interleaved (base, head, base, head
// …) so drift in the machine's load hits both alike, and prints each run with the load average
// before it, then the numeric cells of every table side by side: base median, head median, ratio.
//   node bench/compare.mjs <base-rev>[+<patch>] [filter] [rounds]     e.g. node bench/compare.mjs HEAD~3 runtime 3
// A patch (bench/bases/*.patch) is applied to the base tree first: an old bench measured the way
// the code of its day was used, e.g. 6fe3d9a+bench/bases/blocking-writes.patch.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const [baseArg = 'HEAD~1', filter = 'runtime', rounds = '3'] = process.argv.slice(2);
const [base, patch] = baseArg.split('+');
const baseDir = join(tmpdir(), `opkit-bench-base-${process.pid}`);

execFileSync('git', ['-C', root, 'worktree', 'add', '--detach', '-f', baseDir, base], { stdio: 'ignore' });
try {
  if (patch) execFileSync('git', ['-C', baseDir, 'apply', join(root, patch)], { stdio: 'inherit' });
  const lock = (dir) => readFileSync(join(dir, 'package-lock.json'), 'utf8');
  if (lock(baseDir) !== lock(root)) {
    // Other dependencies (one added or removed since): the base gets its own, from npm's cache.
    console.log(`# ${base} locks other dependencies: npm ci in ${baseDir}…`);
    execFileSync('npm', ['ci', '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund'], { cwd: baseDir, stdio: ['ignore', 'ignore', 'inherit'] });
  } else {
    // The same dependencies: the base shares node_modules with this tree, except the workspace's
    // own packages, which must resolve inside the base tree.
    mkdirSync(join(baseDir, 'node_modules'), { recursive: true });
    for (const entry of readdirSync(join(root, 'node_modules'))) {
      if (entry === '@opkit') cpSync(join(root, 'node_modules/@opkit'), join(baseDir, 'node_modules/@opkit'), { recursive: true, verbatimSymlinks: true });
      else if (!existsSync(join(baseDir, 'node_modules', entry))) symlinkSync(join(root, 'node_modules', entry), join(baseDir, 'node_modules', entry));
    }
  }
  const cells = { base: [], head: [] };
  for (let round = 1; round <= Number(rounds); round++) {
    for (const [label, dir] of [
      ['base', baseDir],
      ['head', root],
    ]) {
      const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
      console.log(`\n# ${label} (${label === 'base' ? baseArg : 'working tree'}), round ${round}, load average ${load}`);
      const run = spawnSync(process.execPath, ['bench/run.mjs', filter], { cwd: dir, encoding: 'utf8' });
      process.stdout.write(run.stdout);
      // A run that failed (a base that does not build, say) shows why instead of an empty column.
      if (run.status !== 0 || !run.stdout.includes('## ')) process.stdout.write(`(${label} exited with ${run.status})\n${run.stderr.slice(-3000)}\n`);
      cells[label].push(numericCells(run.stdout));
    }
  }
  console.log(`\n# side by side: median of ${rounds} runs, base ${baseArg} → working tree`);
  const keys = new Set([...cells.base.flatMap((r) => [...r.keys()]), ...cells.head.flatMap((r) => [...r.keys()])]);
  const median = (xs) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] : NaN);
  console.log('| benchmark · row · column | base | head | head ÷ base |\n| --- | --- | --- | --- |');
  for (const key of keys) {
    const b = median(cells.base.map((r) => r.get(key)).filter((v) => v !== undefined));
    const h = median(cells.head.map((r) => r.get(key)).filter((v) => v !== undefined));
    console.log(`| ${key} | ${b} | ${h} | ${Number.isFinite(b) && b !== 0 && Number.isFinite(h) ? (h / b).toFixed(2) : '—'} |`);
  }
} finally {
  execFileSync('git', ['-C', root, 'worktree', 'remove', '--force', baseDir], { stdio: 'ignore' });
  rmSync(baseDir, { recursive: true, force: true });
}

/** Every numeric cell of every markdown table, keyed by benchmark, row (its number and first two cells) and column. */
function numericCells(output) {
  const out = new Map();
  let bench = '';
  let header = [];
  let index = 0;
  for (const line of output.split('\n')) {
    if (line.startsWith('## ')) bench = line.slice(3).trim();
    if (!line.startsWith('|') || line.startsWith('| ---')) continue;
    const row = line
      .split('|')
      .slice(1, -1)
      .map((c) => c.trim());
    const numeric = (c) => /^-?[\d,]+(\.\d+)?$/.test(c);
    if (!row.slice(2).some(numeric)) {
      header = row;
      index = 0;
      continue;
    }
    index++;
    const label = `${bench} · #${index} ${row.slice(0, 2).join(' ')}`;
    row.forEach((c, i) => {
      if (i >= 2 && numeric(c)) out.set(`${label} · ${header[i] ?? i}`, Number(c.replace(/,/g, '')));
    });
  }
  return out;
}
