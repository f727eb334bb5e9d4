// What runs once a generator's files are on disk: the steps that need real programs (npm, the
// operator's own code that renders its chart files, helm-docs). Each prints what it does.
import { execFileSync } from 'node:child_process';

export interface Step {
  what: string;
  /** The program, then its arguments. */
  command: [string, ...string[]];
}

/** Regenerates the operator's chart files from its code (CRDs, RBAC, webhooks, values) and the chart's README. */
export function chartSteps(app: string): Step[] {
  return [
    { what: `chart files of ${app} from its code`, command: ['node', 'tools/build/run-ts.mjs', `apps/${app}/src/manifests/generate-cli.ts`] },
    { what: `charts/${app}/README.md`, command: ['node', 'tools/build/run-ts.mjs', '@opkit/testing/cli/chart-docs', `charts/${app}`] },
  ];
}

/** Formats what a generator wrote as the workspace's formatter does (`npm test` checks it). */
export const formatStep = (dirs: string[]): Step => ({
  what: `format ${dirs.join(', ')} (prettier)`,
  command: ['npx', 'prettier', '--write', '--log-level=warn', ...dirs],
});

/** Records new workspaces in package-lock.json (so `npm ci` installs them) without touching node_modules. */
export const lockfileStep: Step = {
  what: 'package-lock.json (the new workspaces)',
  command: ['npm', 'install', '--package-lock-only', '--no-audit', '--no-fund', '--loglevel=error'],
};

export function runSteps(root: string, steps: Step[]): void {
  for (const s of steps) {
    console.log(`==> ${s.what}: ${s.command.join(' ')}`);
    const [file, ...args] = s.command;
    execFileSync(file, args, { cwd: root, stdio: 'inherit' });
  }
}
