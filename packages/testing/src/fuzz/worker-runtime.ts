import fc from 'fast-check';
import { parentPort, workerData } from 'node:worker_threads';
import type { FuzzTarget } from './target.js';

export interface FuzzWorkerInput {
  target: string;
  seed: number;
  runs: number;
  /** Replay from this run (fast-check's path); with `describe`, only print that run's input. */
  path?: string;
  describe?: boolean;
  /** Only name the module's targets (the long fuzz bench finds them so). */
  list?: boolean;
  timeLimitMs: number;
  /** [run index, finished flag], shared with the main thread's watchdog. */
  progress: SharedArrayBuffer;
}

export interface FuzzWorkerResult {
  runs: number;
  ms: number;
  /** The first run's input when describing, or the (shrunk) counterexample of a failure. */
  input?: string;
  failure?: { path: string; error: string };
  /** With `list`: the module's targets. */
  targets?: string[];
}

/**
 * Runs inside the fuzzing worker: one target under fast-check, its progress published for the
 * watchdog before each input (a decoder that hangs cannot say so itself).
 */
export async function runFuzzWorker(targets: FuzzTarget[]): Promise<void> {
  const o = workerData as FuzzWorkerInput;
  if (o.list) {
    parentPort!.postMessage({ runs: 0, ms: 0, targets: targets.map((t) => t.name) } satisfies FuzzWorkerResult);
    return;
  }
  const target = targets.find((t) => t.name === o.target);
  if (!target) throw new Error(`no fuzz target named ${o.target} (there are: ${targets.map((t) => t.name).join(', ')})`);
  const progress = new Int32Array(o.progress);
  const started = performance.now();
  let runs = 0;
  if (o.describe) {
    let input: string | undefined;
    fc.check(
      fc.property(target.arbitrary, (x) => void (input = fc.stringify(x))),
      { seed: o.seed, path: o.path, numRuns: 1 },
    );
    parentPort!.postMessage({ runs: 0, ms: 0, input } satisfies FuzzWorkerResult);
    return;
  }
  const failed = (err: unknown) => !(target.expected?.(err) ?? false);
  const details = await fc.check(
    fc.asyncProperty(target.arbitrary, async (x) => {
      Atomics.store(progress, 0, ++runs);
      try {
        await target.run(x);
      } catch (err) {
        if (failed(err)) throw err;
      }
    }),
    { seed: o.seed, numRuns: o.runs, path: o.path, interruptAfterTimeLimit: o.timeLimitMs, markInterruptAsFailure: false },
  );
  Atomics.store(progress, 1, 1);
  const result: FuzzWorkerResult = { runs: details.numRuns, ms: Math.round(performance.now() - started) };
  if (details.failed) {
    const err = details.errorInstance;
    result.input = details.counterexample ? fc.stringify(details.counterexample[0]) : undefined;
    result.failure = {
      path: details.counterexamplePath ?? '',
      error: err instanceof Error ? `${err.name}: ${err.message}\n${err.stack?.split('\n').slice(1, 6).join('\n') ?? ''}` : String(err),
    };
  }
  parentPort!.postMessage(result);
}
