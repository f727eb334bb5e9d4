import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { toolingDir } from '../e2e/workspace.js';

/**
 * Runs tools/control-plane/ensure-binaries.mjs with these arguments (e.g. `--group kind`, `--only
 * cert-manager`): a no-op in well under a second when the toolset is built, else a build from Go
 * modules whose progress lines are passed through with `prefix`, so a first run is never silent.
 */
export function buildToolset(args: string[], prefix: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(toolingDir('control-plane'), 'ensure-binaries.mjs'), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stdout.on('data', (d: Buffer) => process.stdout.write(d.toString().replace(/^(?=.)/gm, `${prefix} `)));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`ensure-binaries ${args.join(' ')} failed:${err}`))));
  });
}
