// How the workspace tests run what a user types: one command line in bash, as in a terminal, and
// what the projects' test runs then recorded.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { run } from '@opkit/testing';
import { nestedEnv } from './workspace-copy.js';

/**
 * Runs `command` in `cwd` with the nested environment (plus `env`), saying every 30 s that it is
 * still running; its output goes to `<logDir>/last-command.log`, and a failure carries its end.
 */
export async function shell(cwd: string, command: string, { env = {}, logDir = cwd }: { env?: Record<string, string>; logDir?: string } = {}): Promise<void> {
  console.log(`[${cwd}] $ ${command}`);
  const t0 = Date.now();
  // Minutes pass inside some of these (create-nx-workspace, a whole e2e suite): say so.
  const beat = setInterval(
    () => console.log(`  … still running \`${command.split(' ').slice(0, 3).join(' ')}\` (${Math.round((Date.now() - t0) / 1000)}s)`),
    30_000,
  );
  const r = await run('bash', ['-c', command], { cwd, env: { ...nestedEnv(), ...env }, check: false }).finally(() => clearInterval(beat));
  const out = `${r.stdout}${r.stderr}`;
  writeFileSync(join(logDir, 'last-command.log'), out);
  console.log(`  … exit ${r.code} in ${Math.round((Date.now() - t0) / 1000)}s`);
  if (r.code !== 0) throw new Error(`\`${command}\` exited ${r.code} in ${cwd}:\n${out.split('\n').slice(-80).join('\n')}`);
}

/** What a project's last test run recorded (its vitest JSON report): every test's title and status. */
export function vitestResults(ws: string, project: string): Record<string, string> {
  const report = JSON.parse(readFileSync(join(ws, project, 'test-output/vitest/report.json'), 'utf8')) as {
    testResults: { assertionResults: { fullName: string; status: string }[] }[];
  };
  return Object.fromEntries(report.testResults.flatMap((f) => f.assertionResults.map((a) => [a.fullName, a.status])));
}
