import { build } from 'esbuild';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { workspaceRoot } from '../e2e/workspace.js';
import type { FuzzWorkerInput, FuzzWorkerResult } from './worker-runtime.js';

export interface FuzzOptions {
  /** How many inputs (default 1,000; OPKIT_FUZZ_RUNS overrides). */
  runs?: number;
  /** Stop after this long even if runs remain (default 10 s; OPKIT_FUZZ_TIME_MS overrides). */
  timeLimitMs?: number;
  /** The seed (default random; OPKIT_FUZZ_SEED replays one). */
  seed?: number;
  /** Start from this run of the seed (OPKIT_FUZZ_PATH; a failure prints it). */
  path?: string;
  /** One input taking longer than this is a hang (default 2 s). */
  perInputMs?: number;
  /** The worker's heap limit: more than this for one decoder is a finding (default 256 MiB). */
  memoryMb?: number;
}

export interface FuzzFinding {
  /** `throw`: an error the decoder does not promise; `hang`: one input past perInputMs; `memory`: past the heap limit. */
  kind: 'throw' | 'hang' | 'memory' | 'crash';
  path: string;
  /** The input, as fast-check prints it. */
  input?: string;
  error: string;
}

export interface FuzzReport {
  target: string;
  seed: number;
  runs: number;
  ms: number;
  runsPerSecond: number;
  findings: FuzzFinding[];
  /** The command that replays the first finding. */
  replay?: string;
}

const bundles = new Map<string, Promise<string>>();

/**
 * worker-runtime.ts, bundled into each fuzz worker. Resolved when needed, not at load: @opkit/testing
 * is also bundled to CommonJS (the benches), where import.meta is empty, and built to dist/, where
 * the .ts is not beside it; then it is found from the workspace.
 */
function workerRuntimeSource(): string {
  const beside = import.meta.url ? fileURLToPath(new URL('./worker-runtime.ts', import.meta.url)) : undefined;
  return beside && existsSync(beside) ? beside : join(workspaceRoot(), 'packages/testing/src/fuzz/worker-runtime.ts');
}

/**
 * The fuzz module, bundled with fast-check and the worker runtime into one file a worker thread
 * runs: the decoders are TypeScript, read from source (`@opkit/source`), as the tests read them.
 */
function bundleFor(file: string): Promise<string> {
  let b = bundles.get(file);
  if (!b) {
    const dir = mkdtempSync(join(tmpdir(), 'opkit-fuzz-'));
    const out = join(dir, 'fuzz.mjs');
    const workerRuntime = workerRuntimeSource();
    b = build({
      stdin: {
        contents: `import { targets } from ${JSON.stringify(file)};\nimport { runFuzzWorker } from ${JSON.stringify(workerRuntime)};\nvoid runFuzzWorker(targets);\n`,
        resolveDir: dir,
        loader: 'ts',
      },
      outfile: out,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      // CommonJS dependencies bundled into ESM still call require() for Node's modules.
      banner: { js: "import { createRequire as __opkitRequire } from 'node:module'; const require = __opkitRequire(import.meta.url);" },
      conditions: ['@opkit/source'],
      mainFields: ['module', 'main'],
      logLevel: 'error',
    }).then(() => out);
    bundles.set(file, b);
  }
  return b;
}

/** The package a file belongs to (its fuzz.test.ts runs the targets). */
function packageDir(file: string): string {
  for (let d = dirname(file); d !== dirname(d); d = dirname(d)) if (existsSync(join(d, 'package.json'))) return d;
  return dirname(file);
}

const envNumber = (name: string) => (process.env[name] ? Number(process.env[name]) : undefined);

interface Outcome {
  result?: FuzzWorkerResult;
  /** What stopped the worker before it reported: a hang, its memory, a crash. */
  stopped?: { kind: 'hang' | 'memory' | 'crash'; run: number; error: string };
}

function runWorker(bundle: string, input: Omit<FuzzWorkerInput, 'progress'>, perInputMs: number, memoryMb: number): Promise<Outcome> {
  const progress = new SharedArrayBuffer(8);
  const view = new Int32Array(progress);
  const worker = new Worker(bundle, { workerData: { ...input, progress }, resourceLimits: { maxOldGenerationSizeMb: memoryMb }, stdout: true, stderr: true });
  return new Promise((resolve) => {
    let settled = false;
    let seen = -1;
    let since = performance.now();
    const finish = (o: Outcome) => {
      if (settled) return;
      settled = true;
      clearInterval(watch);
      void worker.terminate();
      resolve(o);
    };
    // The worker cannot report a decoder stuck in a loop: its progress stops, and it is stopped.
    const watch = setInterval(() => {
      const run = Atomics.load(view, 0);
      // Before the first input the worker is loading the module (keys generated, libraries loaded): not a hang.
      if (run !== seen || run === 0) [seen, since] = [run, performance.now()];
      else if (performance.now() - since > perInputMs && !Atomics.load(view, 1))
        finish({ stopped: { kind: 'hang', run, error: `input ${run} took longer than ${perInputMs} ms` } });
    }, 50);
    worker.on('message', (result: FuzzWorkerResult) => finish({ result }));
    worker.on('error', (err: Error & { code?: string }) =>
      finish({
        stopped: {
          kind: err.code === 'ERR_WORKER_OUT_OF_MEMORY' ? 'memory' : 'crash',
          run: Atomics.load(view, 0),
          error: err.code === 'ERR_WORKER_OUT_OF_MEMORY' ? `more than ${memoryMb} MiB of heap` : `${err.name}: ${err.message}`,
        },
      }),
    );
    worker.on('exit', (code) => finish({ stopped: { kind: 'crash', run: Atomics.load(view, 0), error: `the worker exited (${code}) without a report` } }));
  });
}

/**
 * Fuzzes one target of a `*.fuzz.ts` module (its export `targets`) in a worker thread, so that an
 * input that hangs a decoder or exhausts its memory is found and named rather than hanging or
 * killing the test run. Seeded: the seed is in the report, and a finding's `replay` runs it again.
 */
export async function runFuzzTarget(file: string | URL, target: string, o: FuzzOptions = {}): Promise<FuzzReport> {
  const path = typeof file === 'string' ? file : fileURLToPath(file);
  const seed = envNumber('OPKIT_FUZZ_SEED') ?? o.seed ?? Math.floor(Math.random() * 2 ** 31);
  const replayPath = process.env.OPKIT_FUZZ_PATH ?? o.path;
  const runs = envNumber('OPKIT_FUZZ_RUNS') ?? o.runs ?? 1_000;
  const timeLimitMs = envNumber('OPKIT_FUZZ_TIME_MS') ?? o.timeLimitMs ?? 10_000;
  const perInputMs = o.perInputMs ?? 2_000;
  const memoryMb = o.memoryMb ?? 256;
  const bundle = await bundleFor(path);
  const outcome = await runWorker(bundle, { target, seed, runs, path: replayPath, timeLimitMs }, perInputMs, memoryMb);
  const findings: FuzzFinding[] = [];
  const done = outcome.result?.runs ?? outcome.stopped?.run ?? 0;
  const ms = outcome.result?.ms ?? 0;
  if (outcome.result?.failure)
    findings.push({ kind: 'throw', path: outcome.result.failure.path, input: outcome.result.input, error: outcome.result.failure.error });
  if (outcome.stopped) {
    // The run that was under way when it stopped: fast-check's path for it, and its input.
    const runPath = replayPath ? replayPath : String(Math.max(0, outcome.stopped.run - 1));
    const described = await runWorker(bundle, { target, seed, runs: 1, path: runPath, describe: true, timeLimitMs }, perInputMs, memoryMb);
    findings.push({ kind: outcome.stopped.kind, path: runPath, input: described.result?.input, error: outcome.stopped.error });
  }
  const replay = findings[0]
    ? `cd ${relative(process.cwd(), packageDir(path)) || '.'} && OPKIT_FUZZ_SEED=${seed} OPKIT_FUZZ_PATH=${findings[0].path} npx vitest run fuzz.test.ts -t '${target.replaceAll("'", "'\\''")}'`
    : undefined;
  return { target, seed, runs: done, ms, runsPerSecond: ms ? Math.round((done / ms) * 1000) : 0, findings, replay };
}

/** The names of a `*.fuzz.ts` module's targets (read in a worker, as they run). */
export async function listFuzzTargets(file: string): Promise<string[]> {
  const outcome = await runWorker(await bundleFor(file), { target: '', seed: 0, runs: 0, list: true, timeLimitMs: 0 }, 60_000, 256);
  if (!outcome.result?.targets) throw new Error(`could not list the fuzz targets of ${file}: ${outcome.stopped?.error ?? 'no answer'}`);
  return outcome.result.targets;
}

/** A test's verdict on a report: the findings, each with what replays it, as the error message. */
export function assertNoFindings(r: FuzzReport): void {
  if (!r.findings.length) return;
  const lines = r.findings.map((f) => `- ${f.kind}: ${f.error}\n  input: ${f.input ?? '(unknown)'}`);
  throw new Error(`fuzzing ${r.target} (seed ${r.seed}) found:\n${lines.join('\n')}\nreplay: ${r.replay}`);
}
