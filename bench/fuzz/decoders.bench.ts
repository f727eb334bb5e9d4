// Every fuzz target of every *.fuzz.ts in the workspace, each for longer than the test command's
// 6 s: the decoders of bytes from outside (DNS, TSIG, DER/PEM/CSR, keystores, kubeconfigs,
// selectors, durations, review bodies, ACME answers, the solver's requests). Prints runs, runs per
// second and findings per target; each finding with the command that replays it.
//   OPKIT_FUZZ_TIME_MS=30000 (default)   budget per target
//   OPKIT_FUZZ_SEED=<n>                  one seed for every target (default: a new one each)
//   OPKIT_FUZZ_FILTER=dns                only modules whose path contains it
import { listFuzzTargets, runFuzzTarget, workspaceRoot, type FuzzReport } from '@opkit/testing';
import { readdirSync, statSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, relative } from 'node:path';
import { table } from '../report.js';

const root = workspaceRoot();
const timeLimitMs = Number(process.env['OPKIT_FUZZ_TIME_MS'] ?? 30_000);
const filter = process.env['OPKIT_FUZZ_FILTER'] ?? '';

function fuzzModules(): string[] {
  const found: string[] = [];
  const walk = (d: string) => {
    for (const f of readdirSync(d)) {
      if (f === 'node_modules' || f === 'dist' || f.startsWith('.')) continue;
      const p = join(d, f);
      if (statSync(p).isDirectory()) walk(p);
      else if (f.endsWith('.fuzz.ts') && relative(root, p).includes(filter)) found.push(p);
    }
  };
  for (const top of ['packages', 'apps']) walk(join(root, top));
  return found.sort();
}

async function main() {
  const rows: Record<string, string | number>[] = [];
  const found: FuzzReport[] = [];
  const started = performance.now();
  let runs = 0;
  console.log(
    `${timeLimitMs / 1000} s per target, load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  for (const file of fuzzModules()) {
    for (const target of await listFuzzTargets(file)) {
      // Unbounded runs: the time budget ends each target.
      const r = await runFuzzTarget(file, target, { runs: 1e9, timeLimitMs });
      runs += r.runs;
      if (r.findings.length) found.push(r);
      rows.push({
        module: relative(root, file),
        target,
        seed: String(r.seed),
        runs: r.runs,
        'runs/s': r.runsPerSecond,
        findings: r.findings.map((f) => f.kind).join(', ') || 'none',
      });
    }
  }
  table(rows);
  console.log(
    `\n${rows.length} targets, ${runs.toLocaleString('en-US')} inputs in ${Math.round((performance.now() - started) / 1000)} s; ${found.length} with findings; load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  for (const r of found) {
    console.log(`\n${r.target} (seed ${r.seed}):`);
    for (const f of r.findings) console.log(`- ${f.kind}: ${f.error.split('\n')[0]}\n  input: ${(f.input ?? '(unknown)').slice(0, 300)}`);
    console.log(`  replay: ${r.replay}`);
  }
}

void main();
