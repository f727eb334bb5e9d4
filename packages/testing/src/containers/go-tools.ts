import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { cacheRoot } from '../assets/binaries.js';
import { toolingDir } from '../e2e/workspace.js';
import { withLock } from './lock.js';
import { runLong, say } from './progress.js';
import { which } from './which.js';

/**
 * One of opkit's own small Go programs (`src`: a directory of its tooling with main.go, go.mod
 * and, when it has dependencies, go.sum), built static once per source version into opkit's
 * cache under `cacheDir`. Dependencies come from the Go module proxy.
 */
export async function goProgram(src: string, cacheDir: string, note = ''): Promise<string> {
  const name = basename(src);
  const srcDir = `${basename(dirname(dirname(src)))}/go/${name}`;
  const hash = createHash('sha256');
  for (const f of ['main.go', 'go.mod', 'go.sum']) if (f !== 'go.sum' || existsSync(join(src, f))) hash.update(readFileSync(join(src, f)));
  const out = join(cacheRoot(), cacheDir, `${name}-${hash.digest('hex').slice(0, 12)}`);
  if (existsSync(out)) return out;
  if (!which('go')) throw new Error(`building ${srcDir} needs Go, which is not installed`);
  return withLock(`${out}.lock`, async () => {
    if (existsSync(out)) return out;
    say(`building ${srcDir}${note}…`);
    await runLong('go', ['build', '-trimpath', '-ldflags=-s -w', '-o', out, '.'], {
      cwd: src,
      label: `building ${name}`,
      env: { ...process.env, GOTOOLCHAIN: 'local', CGO_ENABLED: '0', GOFLAGS: '-mod=mod' },
    });
    return out;
  });
}

/** The container tooling's Go programs (tools/containers/go/<name>: the runtime shim, pause). */
export const goTool = (name: 'runc-shim' | 'pause'): Promise<string> => goProgram(join(toolingDir('containers'), 'go', name), 'containers/bin');
