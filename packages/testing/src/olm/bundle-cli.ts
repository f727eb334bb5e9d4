// nx run @opkit/<app>:bundle: writes apps/<app>/bundle/ and apps/<app>/bundle.Dockerfile; with
// --check, lists what is stale instead and exits 1 (a test runs the check).
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { workspaceRoot } from '../e2e/workspace.js';
import { staleBundleFiles } from './files.js';

const app = process.argv[2];
if (!app) {
  console.error('usage: bundle-cli <app> [--check]');
  process.exit(2);
}
async function main(app: string) {
  const check = process.argv.includes('--check');
  const stale = await staleBundleFiles(app, workspaceRoot());
  if (check) {
    if (stale.length) {
      console.error(`stale OLM bundle files (run: nx run @opkit/${app}:bundle):\n  ${stale.map(([p]) => p).join('\n  ')}`);
      process.exit(1);
    }
  } else {
    for (const [path, content] of stale) {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, content);
    }
  }
  console.log(stale.length ? `${check ? 'stale' : 'wrote'}:\n  ${stale.map(([p]) => p).join('\n  ')}` : `apps/${app}/bundle is up to date`);
}

void main(app);
