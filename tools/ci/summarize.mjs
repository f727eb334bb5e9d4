#!/usr/bin/env node
// Prints the closing line of a CI run, `N passed, N failed`, from the vitest JSON reports the run
// wrote (every project writes test-output/vitest/report.json). A non-test task that failed (lint,
// typecheck, build, sync check) counts as one failure, so a red run can never print "0 failed".
// Usage: summarize.mjs <since-epoch-ms> <exit-status-of-the-run>
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';

const [since = '0', status = '0'] = process.argv.slice(2);
const root = new URL('../..', import.meta.url).pathname;
let passed = 0;
let failed = 0;
const failures = [];
/** An error's text as the closing list shows it: its non-empty lines, indented, each cut at 300 characters. */
const lines = (text) => text.split('\n').filter((l) => l.trim());
const indented = (ls) => ls.map((l) => `      ${l.trim().slice(0, 300)}`);
for (const group of ['packages', 'apps', 'e2e']) {
  let projects = [];
  try {
    projects = readdirSync(join(root, group));
  } catch {
    continue;
  }
  for (const project of projects) {
    const report = join(root, group, project, 'test-output/vitest/report.json');
    let st;
    try {
      st = statSync(report);
    } catch {
      continue;
    }
    if (st.mtimeMs < Number(since)) continue; // left over from an earlier run
    const r = JSON.parse(readFileSync(report, 'utf8'));
    // What the JSON report drops (tools/vitest/hook-errors.ts): a describe's failed beforeAll/afterAll
    // and errors outside every test.
    let hookErrors = [];
    try {
      hookErrors = JSON.parse(readFileSync(join(dirname(report), 'hook-errors.json'), 'utf8'));
    } catch {
      // an older run, or a project not on the shared vitest setup
    }
    passed += r.numPassedTests ?? 0;
    failed += r.numFailedTests ?? 0;
    // A file that failed to load has no test results but must not pass silently.
    for (const file of r.testResults ?? []) {
      if (file.status === 'failed' && !(file.assertionResults ?? []).some((a) => a.status === 'failed')) {
        failed += 1;
        const why = hookErrors
          .filter((e) => e.file === file.name)
          .flatMap((e) => [`    in ${e.where ? `"${e.where}"` : 'the file'}:`, ...indented(lines(e.text))]);
        const message = (file.message ?? '').split('\n')[0];
        failures.push([`${group}/${project}: ${file.name.replace(root, '')}${message ? ` (${message})` : ''}`, ...why].join('\n'));
      }
      for (const a of file.assertionResults ?? []) {
        if (a.status !== 'failed') continue;
        // The error's message beside the name, without its stack (a CI log is often read from its
        // end only): up to 30 lines, as a test that explains its failure may print a trail.
        const message = lines((a.failureMessages ?? []).join('\n'));
        const stack = message.findIndex((l) => /^\s*at /.test(l));
        const why = message.slice(0, Math.min(30, Math.max(stack === -1 ? 4 : stack, 1)));
        failures.push([`${group}/${project}: ${a.fullName}`, ...indented(why)].join('\n'));
      }
    }
    // vitest fails a run with an error outside every test even when all tests passed.
    for (const e of hookErrors.filter((h) => h.where === 'unhandled')) {
      failed += 1;
      failures.push([`${group}/${project}: an error outside every test`, ...indented(lines(e.text))].join('\n'));
    }
  }
}
if (Number(status) !== 0 && failed === 0) {
  failed = 1;
  failures.push('a non-test task failed (lint, typecheck, build, sync check or setup): see the log above');
}
if (failures.length) console.log(`\nFailures:\n${failures.map((f) => `  - ${f}`).join('\n')}`);
console.log(`${passed} passed, ${failed} failed`);
