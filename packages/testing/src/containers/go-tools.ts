import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cacheRoot } from '../assets/binaries.js';
import { workspaceRoot } from '../e2e/workspace.js';
import { withLock } from './lock.js';
import { runLong, say } from './progress.js';
import { which } from './which.js';

/**
 * One of this repository's own small Go programs (tools/containers/go/<name>: the runtime shim,
 * pause), built static once per source version into opkit's cache.
 */
export async function goTool(name: 'runc-shim' | 'pause'): Promise<string> {
  const src = join(workspaceRoot(), 'tools/containers/go', name);
  const hash = createHash('sha256').update(readFileSync(join(src, 'main.go'))).update(readFileSync(join(src, 'go.mod'))).digest('hex').slice(0, 12);
  const out = join(cacheRoot(), 'containers', 'bin', `${name}-${hash}`);
  if (existsSync(out)) return out;
  if (!which('go')) throw new Error(`building tools/containers/go/${name} needs Go, which is not installed`);
  return withLock(`${out}.lock`, async () => {
    if (existsSync(out)) return out;
    say(`building tools/containers/go/${name}…`);
    await runLong('go', ['build', '-trimpath', '-ldflags=-s -w', '-o', out, '.'], {
      cwd: src, label: `building ${name}`, env: { ...process.env, GOTOOLCHAIN: 'local', CGO_ENABLED: '0', GOFLAGS: '-mod=mod' },
    });
    return out;
  });
}
