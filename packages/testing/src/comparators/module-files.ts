import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { toolingDir } from '../e2e/workspace.js';

/**
 * The YAML files of a directory of a Go module (a CRD directory, say), as one stream in name order:
 * the module from Go's module cache, downloaded through the module proxy the first time (seconds;
 * no build), resolved from the wrapper module that builds the tool (tools/control-plane/go/<wrapper>).
 */
export function moduleYamls(wrapper: string, module: string, version: string, subdir: string): string {
  const r = spawnSync('go', ['mod', 'download', '-json', `${module}@${version}`], {
    cwd: join(toolingDir('control-plane'), 'go', wrapper),
    encoding: 'utf8',
    env: { ...process.env, GOFLAGS: '-mod=readonly', GOTOOLCHAIN: 'local' },
  });
  if (r.status !== 0) throw new Error(`go mod download of ${module}@${version} failed: ${r.stderr}`);
  const dir = join((JSON.parse(r.stdout) as { Dir: string }).Dir, subdir);
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => readFileSync(join(dir, f), 'utf8'))
    .join('\n---\n');
}
