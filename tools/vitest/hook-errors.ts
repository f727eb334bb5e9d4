import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

/** One error vitest's JSON report leaves out: a describe's hook, or an error outside every test. */
export interface HookError {
  /** Absolute path of the test file, or '' for an error vitest could not place. */
  file: string;
  /** The suite whose beforeAll/afterAll threw ("a > b"), '' for the file itself, 'unhandled' for an error outside every test. */
  where: string;
  /** The error's message and the head of its stack. */
  text: string;
}

/**
 * vitest's JSON report puts a file's own errors in `message` but drops a describe block's: when a
 * describe's beforeAll throws, its tests are "skipped" and the file "failed" with an empty message,
 * so `.ci/run`'s tail said only `hostile-tenants.int.test.ts ()` and the cause stayed in the middle
 * of a 60-minute log. This reporter writes those errors, and unhandled ones, beside the report
 * (test-output/vitest/hook-errors.json), where tools/ci/summarize.mjs prints them.
 */
export class HookErrorsReporter implements Reporter {
  constructor(private readonly outputFile: string) {}

  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<{ message?: string; stack?: string }>): void {
    const errors: HookError[] = [];
    const text = (e: { message?: string; stack?: string }) => (e.stack || e.message || String(e)).split('\n').slice(0, 12).join('\n');
    for (const m of testModules) {
      for (const e of m.errors()) errors.push({ file: m.moduleId, where: '', text: text(e) });
      for (const s of m.children.allSuites()) for (const e of s.errors()) errors.push({ file: m.moduleId, where: s.fullName, text: text(e) });
    }
    for (const e of unhandledErrors) errors.push({ file: '', where: 'unhandled', text: text(e) });
    mkdirSync(dirname(this.outputFile), { recursive: true });
    writeFileSync(this.outputFile, JSON.stringify(errors, null, 1));
  }
}
